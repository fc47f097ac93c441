"""The measured scaling table of a ladder: throughput, speed-up, efficiency, data wait, a recommendation.

Fed the rungs as they ran (``trainspec ladder run``: each rung's :class:`~trainspec.stages.step_rates.Measurement`,
or why it has none), :func:`analyse` works out, against the first measured rung (the baseline):

* **speed-up** = throughput / the baseline's;
* **efficiency** = speed-up / (the rung's GPUs / the baseline's GPUs): 100% is perfect linear
  scaling. A job without GPUs counts processes instead;
* **recommendation**: climbing the measured rungs in order, the last one before the first whose
  efficiency falls below ``min_efficiency``: the largest size whose efficiency stays at or above it;
* **bottleneck**: the data pipeline is named when the share of the loop spent waiting for data
  is above ``max_data_wait`` at the last measured rung and grew by at least
  :data:`DATA_WAIT_GROWTH` from the first, or is above it at every measured rung.

Throughput is in tokens/s when every measured rung knows its tokens, else samples/s; with
neither (the script counts no samples and the spec gives no ``model.globalBatch``) only steps/s
are shown, and no speed-up is worked out from them: with more ranks, a step may hold more samples.
Pure functions: the numbers in, the table out (tested with fixed measurements).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from trainspec.stages.step_rates import UNSTEADY, Measurement, Warmup

#: ``--min-efficiency``'s default: a rung must keep 80% of perfect linear scaling to be worth its GPUs.
MIN_EFFICIENCY = 0.8
#: ``--max-data-wait``'s default: above a fifth of the loop waiting for input, the input pipeline limits.
MAX_DATA_WAIT = 0.2
#: How much the data-wait share must grow from the first to the last measured rung to be "growing"
#: (smaller changes are within the noise of short rungs).
DATA_WAIT_GROWTH = 0.05

MEASURED = "measured"
_SINGULAR = {"GPUs": "GPU", "processes": "process"}


@dataclass(frozen=True)
class MeasuredRung:
    """One rung as it ran: its size, and its measurement or why there is none."""

    tag: str
    name: str
    nodes: int
    procs_per_node: int
    world_size: int
    gpus: int
    #: ``measured``, ``skipped`` (does not fit here), ``failed``, ``not run`` or ``no measurement``.
    status: str
    measurement: Measurement | None = None
    note: str | None = None
    #: Wall-clock seconds the rung took (start-up and sharding included), when it ran.
    seconds: float | None = None


@dataclass(frozen=True)
class Settings:
    """The user's thresholds and the warm-up the measurements left out."""

    min_efficiency: float = MIN_EFFICIENCY
    max_data_wait: float = MAX_DATA_WAIT
    warmup: Warmup = field(default_factory=Warmup)
    #: Which steps the figures are over when not the step logs after ``warmup`` (a cluster's ladder:
    #: rank 0's last progress report); None: the step logs.
    window: str | None = None


@dataclass(frozen=True)
class Row:
    """A rung with its figures against the baseline (None where unknown)."""

    rung: MeasuredRung
    units: int
    throughput: float | None
    speedup: float | None
    efficiency: float | None


@dataclass(frozen=True)
class Verdict:
    """A recommendation or a bottleneck: the rung it names (if any) and the sentence that says it."""

    #: recommendation: ``only`` (one rung measured), ``all`` (every rung kept the efficiency), ``below``
    #: (a rung fell under it); bottleneck: ``growing`` or ``everywhere``.
    kind: str
    message: str
    rung: str | None = None
    figures: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Scaling:
    """A job's measured ladder."""

    namespace: str
    job: str
    #: ``tokens/s``, ``samples/s`` or ``steps/s``.
    unit: str
    #: ``GPUs`` or ``processes``: what efficiency is per.
    scale_unit: str
    rows: tuple[Row, ...]
    settings: Settings
    recommendation: Verdict | None
    bottleneck: Verdict | None
    notes: tuple[str, ...] = ()


def _unit(measured: Sequence[Measurement]) -> str:
    if measured and all(m.tokens_per_second is not None for m in measured):
        return "tokens/s"
    if measured and all(m.samples_per_second is not None for m in measured):
        return "samples/s"
    return "steps/s"


def _value(m: Measurement, unit: str) -> float | None:
    return {"tokens/s": m.tokens_per_second, "samples/s": m.samples_per_second}.get(unit, m.steps_per_second)


def analyse(namespace: str, job: str, rungs: Sequence[MeasuredRung], settings: Settings | None = None) -> Scaling:
    """The scaling table of ``rungs`` (smallest first) under ``settings`` (see the module docstring)."""
    settings = settings or Settings()
    measured = [r.measurement for r in rungs if r.measurement is not None]
    unit = _unit(measured)
    gpus = any(r.gpus for r in rungs)
    scale_unit = "GPUs" if gpus else "processes"
    comparable = unit != "steps/s"
    base: tuple[float, int] | None = None
    rows = []
    for rung in rungs:
        units = rung.gpus if gpus else rung.world_size
        m = rung.measurement
        value = _value(m, unit) if m is not None else None
        speedup = efficiency = None
        if value is not None and comparable:
            if base is None:
                base = (value, units)
            if base[0] > 0 and units > 0:
                speedup = value / base[0]
                efficiency = speedup / (units / base[1])
        rows.append(Row(rung, units, value, speedup, efficiency))
    notes: list[str] = []
    if measured and not comparable:
        notes.append(
            "throughput unknown: the script counts no samples and the spec sets no model.globalBatch; count them "
            "with StepMetrics.step(samples=len(batch)) (or tokens=...) to compare the rungs"
        )
    if any(m.samples_from == "spec" for m in measured) and unit != "steps/s":
        notes.append(
            "samples per step from spec.model.globalBatch (the same global batch at every rung); a script that "
            "keeps its per-GPU batch instead should count samples with StepMetrics.step(samples=...)"
        )
    scaled = [
        r
        for r in rows
        if r.rung.measurement is not None and r.rung.measurement.world_size > len(r.rung.measurement.ranks)
    ]
    notes.extend(
        f"{r.rung.tag}: {len(r.rung.measurement.ranks)} of {r.rung.world_size} ranks measured; their counts are "
        "scaled to every rank"
        for r in scaled
        if r.rung.measurement is not None
    )
    unsteady = [r.rung for r in rows if r.rung.measurement is not None and not r.rung.measurement.steady]
    if unsteady:
        spreads = ", ".join(f"{r.tag} {_percent(r.measurement.spread)}" for r in unsteady if r.measurement)
        notes.append(
            f"unsteady figures: the rates of the first and second half of the measured steps differ by more than "
            f"{_percent(UNSTEADY)} ({spreads}): too few steps for the pauses they hold (checkpoints, evaluation), "
            "or a busy machine; run the rungs longer before trusting the comparison"
        )
    recommendation = _recommend(rows, settings, scale_unit) if comparable else None
    bottleneck = _bottleneck([r for r in rows if r.rung.measurement is not None], settings)
    return Scaling(namespace, job, unit, scale_unit, tuple(rows), settings, recommendation, bottleneck, tuple(notes))


def _size(row: Row, scale_unit: str) -> str:
    word = scale_unit if row.units != 1 else _SINGULAR[scale_unit]
    return f"{row.units} {word}"


def _recommend(rows: Sequence[Row], settings: Settings, scale_unit: str) -> Verdict | None:
    measured = [r for r in rows if r.efficiency is not None]
    if not measured:
        return None
    best = measured[0]
    below: Row | None = None
    for row in measured[1:]:
        assert row.efficiency is not None
        if row.efficiency < settings.min_efficiency:
            below = row
            break
        best = row
    threshold = _percent(settings.min_efficiency)
    figures = {"efficiency": round(best.efficiency or 0.0, 4)}
    size = f"{best.rung.tag} ({_size(best, scale_unit)})"
    if len(measured) == 1:
        return Verdict("only", f"{size}: the only rung measured, nothing to compare it with", best.rung.tag, figures)
    if below is not None:
        assert below.efficiency is not None
        return Verdict(
            "below",
            f"{size}: the largest rung at or above {threshold} efficiency; {below.rung.tag} "
            f"({_size(below, scale_unit)}) falls to {_percent(below.efficiency)}",
            best.rung.tag,
            figures,
        )
    return Verdict(
        "all",
        f"{size}: every measured rung keeps at least {threshold} efficiency ({best.rung.tag}: "
        f"{_percent(best.efficiency or 0.0)})",
        best.rung.tag,
        figures,
    )


def _bottleneck(rows: Sequence[Row], settings: Settings) -> Verdict | None:
    shares = [(r.rung.tag, r.rung.measurement.data_wait_share) for r in rows if r.rung.measurement is not None]
    if not shares:
        return None
    bound = settings.max_data_wait
    (first_tag, first), (last_tag, last) = shares[0], shares[-1]
    figures = {"first": round(first, 4), "last": round(last, 4), "bound": bound}
    advice = "feed it faster (more loader workers, prefetching, a closer copy of the data) before scaling out"
    if len(shares) > 1 and last > bound and last - first >= DATA_WAIT_GROWTH:
        return Verdict(
            "growing",
            f"the data pipeline: the loop waits for data {_percent(first)} of its time at {first_tag} and "
            f"{_percent(last)} at {last_tag} (above {_percent(bound)}), growing with the rungs; {advice}",
            last_tag,
            figures,
        )
    if all(share > bound for _, share in shares):
        low, high = min(s for _, s in shares), max(s for _, s in shares)
        span = _percent(low) if _percent(low) == _percent(high) else f"{_percent(low)}-{_percent(high)}"
        where = "at every rung" if len(shares) > 1 else f"at {first_tag}"
        return Verdict(
            "everywhere",
            f"the data pipeline: the loop waits for data {span} of its time {where} (above {_percent(bound)}); "
            f"{advice}",
            None,
            figures,
        )
    return None


def _percent(value: float) -> str:
    return f"{value * 100:.0f}%"


# -- rendering -------------------------------------------------------------------------------------

#: The formats ``ladder run`` prints the table in.
FORMATS = ("text", "json")


def render(scalings: Sequence[Scaling], fmt: str = "text") -> str:
    """The tables of ``scalings`` as text (one block per job) or JSON (``{"ladders": [...]}``)."""
    if fmt == "json":
        import json

        return json.dumps({"ladders": [as_dict(s) for s in scalings]}, indent=2) + "\n"
    if not scalings:
        return "no jobs\n"
    from trainspec.dsl.diagnostics import escape_text

    # A rung's note may quote a controller's or a process's words: shown escaped on a terminal.
    text = "\n".join(_text(s) for s in scalings)
    return "".join(escape_text(line, backslashes=False) + "\n" for line in text.splitlines())


def _number(value: float) -> str:
    """Three significant figures, thousands grouped: 12,345 / 123 / 12.3 / 1.23 / 0.0123."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _seconds(value: float) -> str:
    if value < 60:
        return f"{value:.2g} s" if value < 10 else f"{value:.0f} s"
    minutes, seconds = divmod(round(value), 60)
    return f"{minutes}m{seconds:02d}s"


def _cells(row: Row, unit: str) -> tuple[str, ...]:
    rung = row.rung
    m = rung.measurement
    if m is None:
        return (
            rung.tag,
            str(row.units),
            "-",
            "-",
            "-",
            "-",
            f"{rung.status}: {rung.note}" if rung.note else rung.status,
        )
    return (
        rung.tag,
        str(row.units),
        f"{_number(row.throughput)} {unit}" if row.throughput is not None else "-",
        f"{row.speedup:.2f}x" if row.speedup is not None else "-",
        _percent(row.efficiency) if row.efficiency is not None else "-",
        _percent(m.data_wait_share),
        f"{m.steps} steps in {_seconds(m.seconds)}" + ("" if m.steady else ", unsteady"),
    )


def _text(scaling: Scaling) -> str:
    headers = ("rung", scaling.scale_unit, "throughput", "speed-up", "efficiency", "data wait", "measured")
    table = [headers, *(_cells(row, scaling.unit) for row in scaling.rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(headers) - 1)]
    lines = [f"{scaling.namespace}/{scaling.job}: measured scaling ladder"]
    for line in table:
        cells = [cell.ljust(width) for cell, width in zip(line[:-1], widths, strict=True)]
        lines.append(("  " + "  ".join([*cells, line[-1]])).rstrip())
    settings = scaling.settings
    if scaling.recommendation is not None:
        lines.append(f"  recommendation: {scaling.recommendation.message}")
    elif not any(r.rung.measurement is not None for r in scaling.rows):
        lines.append("  recommendation: none, no rung was measured")
    if scaling.bottleneck is not None:
        lines.append(f"  bottleneck: {scaling.bottleneck.message}")
    lines.extend(f"  note: {note}" for note in scaling.notes)
    measured = f"figures: {settings.window}" if settings.window else f"warm-up left out: {settings.warmup}"
    lines.append(
        f"  {measured}; efficiency = speed-up / {scaling.scale_unit} ratio, "
        f"threshold {_percent(settings.min_efficiency)}; data wait bound {_percent(settings.max_data_wait)}"
    )
    return "\n".join(lines) + "\n"


def _verdict(verdict: Verdict | None) -> dict[str, object] | None:
    if verdict is None:
        return None
    return {"kind": verdict.kind, "rung": verdict.rung, "message": verdict.message, **verdict.figures}


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def as_dict(scaling: Scaling) -> dict[str, object]:
    """One job's table as JSON data (every column of the text table, rounded to 4 decimals)."""
    settings = scaling.settings
    rungs = []
    for row in scaling.rows:
        rung, m = row.rung, row.rung.measurement
        rungs.append(
            {
                "rung": rung.tag,
                "name": rung.name,
                "nodes": rung.nodes,
                "procsPerNode": rung.procs_per_node,
                "worldSize": rung.world_size,
                "gpus": rung.gpus,
                "status": rung.status,
                "note": rung.note,
                "seconds": _rounded(rung.seconds, 3),
                "throughput": _rounded(row.throughput),
                "speedup": _rounded(row.speedup),
                "efficiency": _rounded(row.efficiency),
                "dataWaitShare": _rounded(m.data_wait_share) if m else None,
                "stepsPerSecond": _rounded(m.steps_per_second) if m else None,
                "samplesPerSecond": _rounded(m.samples_per_second) if m else None,
                "tokensPerSecond": _rounded(m.tokens_per_second) if m else None,
                "samplesFrom": m.samples_from if m else None,
                "measuredSteps": m.steps if m else None,
                "measuredSeconds": _rounded(m.seconds) if m else None,
                "spread": _rounded(m.spread) if m else None,
                "steady": m.steady if m else None,
                "ranksMeasured": len(m.ranks) if m else None,
            }
        )
    return {
        "namespace": scaling.namespace,
        "job": scaling.job,
        "unit": scaling.unit,
        "scaleUnit": scaling.scale_unit,
        "warmup": None if settings.window else {"steps": settings.warmup.steps, "fraction": settings.warmup.fraction},
        "window": settings.window,
        "minEfficiency": settings.min_efficiency,
        "maxDataWait": settings.max_data_wait,
        "rungs": rungs,
        "recommendation": _verdict(scaling.recommendation),
        "bottleneck": _verdict(scaling.bottleneck),
        "notes": list(scaling.notes),
    }


__all__ = ["FORMATS", "MeasuredRung", "Row", "Scaling", "Settings", "Verdict", "analyse", "as_dict", "render"]
