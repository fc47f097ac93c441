"""Estimates for ``trainspec explain``: memory per GPU, GPU-hours and cost. Pure arithmetic.

Every figure is exact integer (or fractional) arithmetic on bytes; people see decimal units
(``human_bytes``: 1 GB = 10^9 bytes). The definitions, with ``P`` parameters:

* **weights** = P x bytes per parameter of ``dtype`` (fp32/tf32 4, bf16/fp16 2, fp8/int8 1,
  int4 0.5), the same rule the checkpoint size uses;
* **gradients** = the same size as the weights (one gradient per parameter, in the weights' type);
* **optimizer state** = as for checkpoints (``compiler/sizing.py``): adam/adamw 3x the weight
  bytes, sgd 1x, none 0, or P x ``optimizerBytesPerParam`` when given;
* **training state** = weights + gradients + optimizer state;
* **data parallel** (DDP, every GPU a full replica): each GPU holds the whole training state;
* **fully sharded** (FSDP / ZeRO-3): weights, gradients and optimizer state are split evenly over
  the job's GPUs, so each GPU holds training state / GPUs, rounded up to a whole byte.

Activations, communication buffers, the CUDA context and allocator fragmentation are NOT counted:
"fits" means the training state fits, which is necessary but not sufficient.

Worked figures (tests/explain pin them):

* 70B in bf16 with Adam: weights 140 GB, gradients 140 GB, optimizer 420 GB; training state
  700 GB; sharded over 64 GPUs 10.9 GB per GPU. One checkpoint (weights + optimizer) 560 GB.
* 405B in bf16 with Adam: weights alone 810 GB, more than one 8 x 80 GB node (640 GB); training
  state 4050 GB; sharded over 64 GPUs 405e9 x 2 x (1 + 1 + 3) / 64 = 63.3 GB per GPU (the weights'
  share alone is 810 GB / 64 = 12.7 GB).

GPU-hours = GPUs in total x ``maxRunTime`` in hours (an upper bound: the job may end earlier);
cost = GPU-hours x price of one GPU-hour.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from trainspec.compiler.sizing import optimizer_bytes, weight_bytes
from trainspec.dsl.models import ModelSize


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


@dataclass(frozen=True)
class TrainingState:
    """What training keeps in GPU memory for a model, in bytes, before activations."""

    weights: int
    gradients: int
    optimizer: int

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer


def training_state(model: ModelSize) -> TrainingState:
    """Weights, gradients (same size as the weights) and optimizer state of ``model``."""
    weights = weight_bytes(model)
    return TrainingState(weights=weights, gradients=weights, optimizer=optimizer_bytes(model))


@dataclass(frozen=True)
class MemoryFit:
    """The training state per GPU under data parallel and fully sharded, against the GPU's memory.

    ``gpus`` is the number of GPUs the state is sharded over (all GPUs of the job);
    ``gpu_memory`` is one GPU's memory in bytes, None when the runtime does not say.
    """

    state: TrainingState
    gpus: int
    gpus_per_node: int
    gpu_memory: int | None

    @property
    def replicated_per_gpu(self) -> int:
        """Data parallel: every GPU holds the whole training state."""
        return self.state.total

    @property
    def sharded_per_gpu(self) -> int:
        """Fully sharded (FSDP/ZeRO-3): the training state divided by the GPUs, rounded up."""
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
