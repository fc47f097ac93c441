"""Score every valid layout and recommend one, with the reasons in words.

Among the layouts that fit, the planner prefers, in this order (the guidance of Narayanan et al.
2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", §3.3, and
Korthikanti et al. 2022):

1. no full recomputation (it runs every forward pass twice: about a third more compute);
2. no ZeRO-3/FSDP (its weight all-gathers add half again the data-parallel traffic, on the
   critical path of every layer);
3. the smallest model-parallel size ``tp x cp x pp`` (every TP/PP split adds traffic and PP a bubble;
   data parallelism scales the rest);
4. less recomputation (none before selective);
5. ZeRO-1 (Megatron's distributed optimizer: less memory for the same traffic as plain data
   parallel), then 0, then 2;
6. the larger TP for the same ``tp x pp`` (TP inside a node is over NVLink; PP crosses nodes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import SupportsFloat

from trainspec.compiler.parallelism.comms import Traffic, traffic
from trainspec.compiler.parallelism.inputs import Pin, PlannerInputs
from trainspec.compiler.parallelism.layouts import RECOMPUTE, Layout, valid_layouts
from trainspec.compiler.parallelism.memory import HEADROOM, MemoryEstimate, estimate
from trainspec.compiler.sizing import human_bytes

_ZERO_RANK = {1: 0, 0: 1, 2: 2, 3: 3}
#: Most layouts a plan keeps (a world of 2.5 million ranks has about 10^5 valid layouts).
MAX_LAYOUTS = 20_000


@dataclass(frozen=True)
class Scored:
    """A layout with its memory per GPU, whether it fits, and its traffic."""

    layout: Layout
    memory: MemoryEstimate
    fits: bool | None
    traffic: tuple[Traffic, ...]


@dataclass(frozen=True)
class Plan:
    """The planner's answer for one job: every valid layout scored, the choice and why."""

    inputs: PlannerInputs
    layouts: tuple[Scored, ...]
    chosen: Scored | None
    pinned: bool  # the spec pins every degree: the choice is the pin, checked
    reasons: tuple[str, ...]
    #: For a full pin that does not fit: the layout the planner would choose without the pin
    #: (None: none of this many GPUs fits). Asked once, here, so the diagnostic's hint reads it.
    unpinned: Scored | None = None

    @property
    def fitting(self) -> int:
        return sum(1 for s in self.layouts if s.fits)


def rank(scored: Scored) -> tuple[int, ...]:
    """The preference key of a fitting layout (smaller is better); see the module docstring."""
    lay = scored.layout
    return (
        lay.recompute == "full",
        lay.zero == 3,
        lay.model_parallel,
        RECOMPUTE.index(lay.recompute),
        _ZERO_RANK[lay.zero],
        -lay.tp,
    )


def score(inputs: PlannerInputs, layout: Layout) -> Scored:
    memory = estimate(inputs.arch, layout)
    return Scored(
        layout, memory, memory.fits(inputs.cluster.gpu_memory), tuple(traffic(inputs.arch, inputs.cluster, layout))
    )


def plan_layouts(inputs: PlannerInputs) -> Plan:
    """Enumerate, score and choose (the pin, when it fixes every degree, is the choice).

    A full pin that does not fit is also answered without the pin (:attr:`Plan.unpinned`), the
    one alternative the diagnostics offer.
    """
    layouts = _scored(inputs)
    fixed = _fixed(inputs.pin)
    fitting = [s for s in layouts if s.fits]
    chosen = min(fitting, key=rank) if fitting else None
    if chosen is None and fixed and layouts:
        chosen = layouts[0]
    unpinned = None
    if fixed and chosen is not None and not chosen.fits:
        free = [s for s in _scored(PlannerInputs(inputs.arch, inputs.cluster)) if s.fits]
        unpinned = min(free, key=rank) if free else None
    return Plan(inputs, tuple(layouts), chosen, fixed, tuple(_reasons(inputs, layouts, chosen)), unpinned)


def _scored(inputs: PlannerInputs) -> list[Scored]:
    """Every valid layout of ``inputs`` scored, at most :data:`MAX_LAYOUTS`."""
    layouts = []
    for layout in valid_layouts(inputs.arch.shape, inputs.cluster, inputs.pin):
        layouts.append(score(inputs, layout))
        if len(layouts) >= MAX_LAYOUTS:
            break
    return layouts


def _fixed(pin: Pin) -> bool:
    """A pin that leaves the planner nothing to choose (dp follows from tp and pp)."""
    return pin.tp is not None and pin.pp is not None and pin.zero is not None and pin.recompute is not None


def headline(inputs: PlannerInputs, scored: Scored) -> str:
    """``TP 8 within the node over NVLink, DP 8 across nodes over InfiniBand with ZeRO-1, selective recompute``."""
    lay = scored.layout
    parts = []
    links = {t.axis: t for t in scored.traffic}
    for axis, size in (("TP", lay.tp), ("CP", lay.cp), ("PP", lay.pp), ("DP", lay.dp)):
        if size == 1:
            continue
        where = links.get(axis)
        if where is None:
            part = f"{axis} {size}"
        elif where.across_nodes:
            part = f"{axis} {size} across nodes over {where.link}"
        else:
            part = f"{axis} {size} {'within the node' if axis == 'TP' else 'inside a node'} over {where.link}"
        if axis == "PP" and lay.uneven:
            part += f" (the first and last stages {lay.first} and {lay.last} layers)"
        if axis == "PP" and lay.virtual > 1:
            part += f" ({lay.virtual} virtual stages each, interleaved)"
        if axis == "TP" and not lay.sp:
            part += " without sequence parallelism"
        parts.append(part)
    text = ", ".join(parts) if parts else "one GPU, no parallelism"
    if lay.zero:
        sharded = {
            1: "optimizer state",
            2: "optimizer state and gradients",
            3: "weights, gradients and optimizer state (FSDP)",
        }[lay.zero]
        text += f" with ZeRO-{lay.zero} ({sharded} sharded over DP)"
    return f"{text}; {lay.recompute} recompute"


def memory_text(scored: Scored, gpu_memory: int | None) -> str:
    """``70.9 GB per GPU of 85.9 GB (weights 17.5 GB + gradients ... + activations 22.8 GB)``."""
    mem = scored.memory
    parts = [
        f"weights {human_bytes(mem.weights)}",
        f"gradients {human_bytes(mem.gradients)}",
        f"optimizer {human_bytes(mem.optimizer)}",
    ]
    if mem.activations is not None:
        parts.append(f"activations {human_bytes(mem.activations)}")
    limit = f" of {human_bytes(gpu_memory)}" if gpu_memory is not None else ""
    return f"{human_bytes(mem.total)} per GPU{limit} ({' + '.join(parts)})"


def _reasons(inputs: PlannerInputs, layouts: list[Scored], chosen: Scored | None) -> list[str]:
    gpu = inputs.cluster.gpu_memory
    if not layouts:
        return [
            ("no valid layout: no TP x PP x DP of this world size divides the heads and layers with TP inside a node")
        ]
    if gpu is None:
        return ["GPU memory unknown (set spec.accelerator.memory in the runtime): nothing can be said to fit"]
    if chosen is None:
        least = min(layouts, key=lambda s: s.memory.total)
        return [
            (
                f"no layout fits {human_bytes(int(gpu * HEADROOM))} per GPU ({HEADROOM * 100}% of "
                f"{human_bytes(gpu)}); the least memory is {human_bytes(least.memory.total)} per GPU "
                f"({least.layout.describe()}): add nodes, or shorten sequences / micro-batches"
            )
        ]
    out = [headline(inputs, chosen), memory_text(chosen, gpu)]
    lay = chosen.layout
    smaller = [
        s
        for s in layouts
        if s.layout.model_parallel < lay.model_parallel and s.layout.recompute != "full" and s.layout.zero != 3
    ]
    why = (
        f"the smallest model-parallel size ({'TP x CP x PP' if lay.cp > 1 else 'TP x PP'} = {lay.model_parallel}) "
        "that fits without "
        f"{'ZeRO-3' if lay.recompute == 'full' else 'full recomputation or ZeRO-3'}"
    )
    if lay.recompute == "full" or lay.zero == 3:
        why = f"nothing fits without {'full recomputation' if lay.recompute == 'full' else 'ZeRO-3'}"
    pin = inputs.pin
    if not pin.empty:
        free = [
            s
            for s in (
                score(PlannerInputs(inputs.arch, inputs.cluster), lay_)
                for lay_ in valid_layouts(inputs.arch.shape, inputs.cluster)
            )
            if s.fits
        ]
        unpinned = min(free, key=rank) if free else None
        why = (
            "pinned in spec.parallelism, and it fits"
            if _fixed(pin)
            else f"spec.parallelism pins part of the layout; among the layouts that agree, {why}"
        )
        if unpinned is not None and unpinned.layout != lay:
            why += (
                f"; unpinned, the planner would choose {unpinned.layout.describe()} "
                f"({human_bytes(unpinned.memory.total)} per GPU)"
            )
        out.append(why)
        out.extend(traffic_text(item) for item in chosen.traffic)
        return out
    if smaller:
        best = min(smaller, key=lambda s: s.memory.total)
        why += f"; the best smaller split, {best.layout.describe()}, needs {human_bytes(best.memory.total)}"
    out.append(why)
    out.extend(traffic_text(item) for item in chosen.traffic)
    return out


def traffic_text(item: Traffic) -> str:
    """``TP 8: all-reduce x4 per layer over NVLink, 17.2 GB per GPU per step (at least 38 ms)``."""
    when = f" (at least {_duration(item.seconds)})" if item.seconds is not None else ""
    return (
        f"{item.axis} {item.size}: {item.collective} over {item.link}, {human_bytes(item.bytes_per_gpu)} per GPU "
        f"per {item.per}{when}"
    )


def _duration(seconds: SupportsFloat) -> str:
    value = float(seconds)
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"
