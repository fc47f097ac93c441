"""Estimates for ``trainspec explain``: model state per GPU, GPU-hours and cost. Pure arithmetic.

Every figure is exact integer (or fractional) arithmetic on bytes; people see decimal units
(``human_bytes``: 1 GB = 10^9 bytes). The model state is the parallelism planner's
(``compiler/parallelism``, docs/parallelism.md), so the two never disagree. With ``P`` parameters:

* **weights** = P x ``w``, **gradients** = P x ``g`` (the training dtype: bf16/fp16 2 bytes);
* **optimizer state** = P x ``K``: an fp32 master copy (4 bytes, when the weights are narrower)
  plus the moments (adam/adamw 8, sgd 4, none 0); ``optimizerBytesPerParam`` replaces K;
* **model state** = weights + gradients + optimizer state: 16 bytes/param for bf16 with Adam;
* **plain data parallel** (DDP, ZeRO-0): each GPU holds the whole model state;
* **ZeRO-3 / FSDP** over the job's GPUs: each holds model state / GPUs, rounded up.

Activations are the planner's, and need the job's ``spec.model`` (layers, hidden size, ...).
This is what GPUs hold while training; the checkpoint size (``compiler/sizing.py``) is what is
saved: the same optimizer state (master copy and moments, one memory model:
``compiler/memory_model.py``), with the weights as the checkpoint's writer saves them.

Worked figures (tests/explain pin them):

* 70B in bf16 with Adam: weights 140 GB, gradients 140 GB, optimizer 840 GB; model state 1.12 TB;
  ZeRO-3 over 64 GPUs 17.5 GB per GPU (the ZeRO paper's (2 + 2 + 12) x psi / Nd).
* 405B in bf16 with Adam: weights alone 810 GB, more than one 8 x 80 GB node (640 GB); model
  state 6.48 TB; ZeRO-3 over 64 GPUs 101 GB per GPU: it does not fit, whatever the layout.

GPU-hours = GPUs in total x ``maxRunTime`` in hours (an upper bound: the job may end earlier);
cost = GPU-hours x price of one GPU-hour.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from trainspec.compiler.parallelism.inputs import Arch, arch_for
from trainspec.compiler.parallelism.memory import model_state
from trainspec.compiler.sizing import DTYPE_BYTES
from trainspec.dsl.spec.models import ModelSize


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


@dataclass(frozen=True)
class TrainingState:
    """The model state training keeps in GPU memory, in bytes, before activations."""

    weights: int
    gradients: int
    optimizer: int
    #: Of the optimizer state, the fp32 master copy of the weights (the rest: the moments).
    master: int = 0

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer


def arch_of(model: ModelSize) -> Arch:
    """``checkpoint.model`` as the planner's arithmetic sees it (bytes per parameter, no shape)."""
    k = Fraction(str(model.optimizer_bytes_per_param)) if model.optimizer_bytes_per_param is not None else None
    return arch_for(
        model.parameters.count, DTYPE_BYTES[model.dtype], model.optimizer.value, k=k, dtype=model.dtype.value
    )


def training_state(model: ModelSize) -> TrainingState:
    """Weights, gradients and optimizer state of ``model`` while it trains (ZeRO-0, one GPU's worth)."""
    return state_of(arch_of(model))


def state_of(arch: Arch) -> TrainingState:
    """The whole model state of ``arch`` (one GPU's worth, no sharding), the master copy named."""
    weights, gradients, optimizer = model_state(arch, 1, 1, 1, 0)
    master = _ceil_div(arch.parameters * arch.master.numerator, arch.master.denominator)
    return TrainingState(weights=weights, gradients=gradients, optimizer=optimizer, master=master)


@dataclass(frozen=True)
class MemoryFit:
    """The model state per GPU under plain data parallel and ZeRO-3/FSDP, against the GPU's memory.

    ``gpus`` is the number of GPUs the state is sharded over (all GPUs of the job);
    ``gpu_memory`` is one GPU's memory in bytes, None when the runtime does not say.
    """

    state: TrainingState
    gpus: int
    gpus_per_node: int
    gpu_memory: int | None

    @property
    def replicated_per_gpu(self) -> int:
        """Plain data parallel (ZeRO-0): every GPU holds the whole model state."""
        return self.state.total

    @property
    def sharded_per_gpu(self) -> int:
        """ZeRO-3 / FSDP: the model state divided by the GPUs, rounded up."""
        return _ceil_div(self.state.total, max(self.gpus, 1))

    @property
    def node_memory(self) -> int | None:
        """GPU memory of one node: GPUs per node x memory of one GPU."""
        return None if self.gpu_memory is None else self.gpu_memory * self.gpus_per_node

    @property
    def fits_replicated(self) -> bool | None:
        return None if self.gpu_memory is None else self.replicated_per_gpu <= self.gpu_memory

    @property
    def fits_sharded(self) -> bool | None:
        return None if self.gpu_memory is None else self.sharded_per_gpu <= self.gpu_memory

    @property
    def weights_fit_node(self) -> bool | None:
        """Whether the weights alone fit in one node's GPU memory (they must, to serve unsharded)."""
        node = self.node_memory
        return None if node is None else self.state.weights <= node


def memory_fit(state: TrainingState, gpus: int, gpus_per_node: int, gpu_memory: int | None) -> MemoryFit:
    """The per-GPU memory picture of ``state`` on ``gpus`` GPUs of ``gpu_memory`` bytes each."""
    return MemoryFit(state=state, gpus=gpus, gpus_per_node=gpus_per_node, gpu_memory=gpu_memory)


def gpu_hours(gpus: int, seconds: int) -> Fraction:
    """GPUs in total x run time in hours, exact."""
    return Fraction(gpus * seconds, 3600)


def cost(hours: Fraction, price_per_gpu_hour: Fraction) -> Fraction:
    """GPU-hours x price of one GPU-hour, exact (round only when showing it)."""
    return hours * price_per_gpu_hour


def as_price(value: float | str) -> Fraction:
    """A price as an exact fraction of its decimal text (``2.49`` is 249/100, not a binary float)."""
    return Fraction(str(value))


def format_number(value: Fraction | int, places: int = 2) -> str:
    """``4608``, ``1.5``, ``11473.92``: at most ``places`` decimals, no trailing zeros."""
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    scaled = round(value * 10**places)
    text = f"{scaled / 10**places:.{places}f}".rstrip("0").rstrip(".")
    return text
