"""``run --local`` of a Pipeline: its steps in the graph's order, on this machine.

Steps run one at a time, in the order of :class:`~trainspec.dsl.load.pipeline_steps.PipelineGraph`
(every step after what it needs; ties in the order written), so a run's output reads the same
every time. Each step (:mod:`trainspec.run.pipeline_steps_local`) is

* **skipped** when a step it needs failed or was skipped (its dependants with it), or when its
  ``when`` does not hold (:func:`~trainspec.dsl.spec.pipeline_refs.holds`: a step output is read
  as the stripped text of its file, ``$(steps.s.status)`` is ``Succeeded`` or ``Failed``). A
  step whose ``when`` reads another step's *status* runs after that step whether it succeeded
  or failed: the condition decides;
* otherwise run, up to ``1 + retries`` times until it exits 0, each attempt stopped after the
  step's ``timeout``.

A failed step stops its dependants only: independent branches still run. The exit status is 0
when every step that ran succeeded, else the first failed step's; Ctrl-C (SIGINT/SIGTERM) stops
the running step's processes and the run (128 + the signal's number).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from trainspec.compiler.pipeline import CompileResult
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.load.pipeline_steps import GraphStep, PipelineGraph
from trainspec.dsl.spec.pipeline_refs import Condition, Ref, holds, parse_condition
from trainspec.dsl.spec.pipeline_spec import Step
from trainspec.run import environment as E
from trainspec.run.pipeline_params import param_text, parameter_values
from trainspec.run.pipeline_steps_local import Attempt, RunDir, StepContext, run_step
from trainspec.run.workdir import DEFAULT_ROOT

SUCCEEDED, FAILED, SKIPPED, INTERRUPTED, NOT_RUN = "succeeded", "failed", "skipped", "interrupted", "not run"
#: What ``$(steps.s.status)`` reads for a step that ran.
_STATUS = {SUCCEEDED: "Succeeded", FAILED: "Failed"}


@dataclass(frozen=True)
class PipelineOptions:
    """What the command line chose for a pipeline run."""

    #: ``--param`` values, already of their parameters' types (:func:`.pipeline_params.parse_params`).
    params: Mapping[str, Any] = field(default_factory=dict)
    #: The runs' root (default ``.trainspec/run/<namespace>``); a run is ``pipelines/<pipeline>/<run id>`` in it.
    workdir: str | None = None
    env_file: str | None = None
    environ: Mapping[str, str] | None = None
    #: Seconds between SIGTERM and SIGKILL when a step's processes are stopped (None: the default).
    grace: float | None = None


@dataclass
class StepEnd:
    """How a step ended, for its line and the summary."""

    name: str
    result: str
    seconds: float = 0.0
    note: str = ""
    code: int = 0
    outputs: dict[str, Path] = field(default_factory=dict)


def run_pipeline(
    result: CompileResult,
    graph: PipelineGraph,
    options: PipelineOptions,
    *,
    stdout: BinaryIO,
    stderr: BinaryIO,
    say: TextIO,
    report: Callable[[list[Diagnostic]], None],
) -> int:
    """Run every step of ``graph`` (compiled in ``result``); returns the run's exit status."""
    pipeline = graph.pipeline
    name = f"{pipeline.namespace or 'default'}/{pipeline.name}"
    run_id = E.local_run_id()
    base = Path(options.workdir) if options.workdir else DEFAULT_ROOT / (pipeline.namespace or "default")
    run_dir = RunDir((base / "pipelines" / pipeline.name / run_id).absolute())
    try:
        run_dir.root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        report([_workdir_problem(run_dir.root, exc)])
        return 1
    environ = dict(os.environ if options.environ is None else options.environ)
    values = parameter_values(graph, options.params)
    ctx = StepContext(
        result, graph, values, run_dir, environ, stdout, stderr, say, report, options.env_file, options.grace
    )
    _write(say, _header(name, graph, run_id, run_dir, values, options.params))
    ends: dict[str, StepEnd] = {}
    with _signals() as stopped:
        for step in graph.steps:
            spec = _spec(graph, step.name)
            end = StepEnd(step.name, NOT_RUN, note="the run was interrupted") if stopped else None
            end = end or _skip(ctx, step, spec, ends)
            if end is None:
                end = _run(ctx, step, spec)
                if end.result == INTERRUPTED:
                    stopped.append(end.code)
            ends[step.name] = end
            _write(say, [_line(end)])
    _write(say, _summary(name, graph, ends, stopped))
    if stopped:
        return stopped[0]
    failed = [e for e in ends.values() if e.result == FAILED]
    return failed[0].code or 1 if failed else 0


def _spec(graph: PipelineGraph, name: str) -> Step:
    return next(s for s in graph.pipeline.spec.steps if s.name == name)


def _skip(ctx: StepContext, step: GraphStep, spec: Step, ends: Mapping[str, StepEnd]) -> StepEnd | None:
    """The step's end when it does not run (a need failed or was skipped, or its ``when`` is false)."""
    condition = parse_condition(spec.when) if spec.when is not None else None
    status_read = _status_steps(condition)
    for need in step.needs:
        other = ends[need]
        if other.result == FAILED and need not in status_read:
            return StepEnd(step.name, SKIPPED, note=f"step {need} failed")
        if other.result in (SKIPPED, NOT_RUN):
            return StepEnd(step.name, SKIPPED, note=f"step {need} {other.result}")
    if condition is None or spec.when is None:
        return None

    def value_of(ref: Ref) -> str:
        return _condition_value(ctx, ref, ends)

    if holds(condition, value_of):
        return None
    left, right = (value_of(s) if isinstance(s, Ref) else str(s) for s in (condition.left, condition.right))
    return StepEnd(step.name, SKIPPED, note=f"when {spec.when} is false ({left} {condition.op} {right})")


def _status_steps(condition: Condition | None) -> set[str]:
    if condition is None:
        return set()
    return {s.step for s in (condition.left, condition.right) if isinstance(s, Ref) and s.kind == "status"}


def _condition_value(ctx: StepContext, ref: Ref, ends: Mapping[str, StepEnd]) -> str:
    """A reference of ``when`` as text: a parameter, a step's status, a step output's file content."""
    if ref.kind == "param":
        return param_text(ctx.values[ref.name])
    if ref.kind == "status":
        return _STATUS.get(ends[ref.step].result, "")
    path = ctx.run.output(ctx.graph, ref.step, ref.name)
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""  # a directory or an output not written: compares as empty text


def _run(ctx: StepContext, step: GraphStep, spec: Step) -> StepEnd:
    what = f" (job {step.job})" if step.kind == "job" else ""
    tries = 1 + spec.retries
    _write(ctx.say, [f"step {step.name}: started{what}"])
    started = time.monotonic()
    attempt = Attempt(1)
    for number in range(1, tries + 1):
        attempt = run_step(ctx, spec, float(spec.timeout.seconds) if spec.timeout is not None else None)
        if attempt.code == 0 or attempt.interrupted is not None:
            break
        if number < tries:
            _write(ctx.say, [f"step {step.name}: attempt {number} of {tries} failed: {_why(attempt)}; retrying"])
    seconds = time.monotonic() - started
    if attempt.interrupted is not None:
        return StepEnd(step.name, INTERRUPTED, seconds, attempt.note, attempt.code)
    if attempt.code != 0:
        note = _why(attempt) + (f" (after {tries} attempts)" if tries > 1 else "")
        return StepEnd(step.name, FAILED, seconds, note, attempt.code)
    outputs = ["checkpoint"] if step.kind == "job" else list(spec.outputs)
    return StepEnd(step.name, SUCCEEDED, seconds, outputs={o: ctx.run.output(ctx.graph, step.name, o) for o in outputs})


def _why(attempt: Attempt) -> str:
    return attempt.note or f"exited {attempt.code}"


@contextmanager
def _signals() -> Iterator[list[int]]:
    """SIGINT/SIGTERM between steps (a step's supervisor handles them while it runs) stop the run;
    the list holds the exit status once one came."""
    stopped: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield stopped
        return

    def on_signal(signum: int, _frame: object) -> None:
        if not stopped:
            stopped.append(128 + signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stopped
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


def _header(
    name: str, graph: PipelineGraph, run_id: str, run_dir: RunDir, values: Mapping[str, Any], given: Mapping[str, Any]
) -> list[str]:
    count = len(graph.steps)
    lines = [f"trainspec run --local: pipeline {name} ({count} step{'s' * (count != 1)}, run {run_id})"]
    lines.append(f"  work directory: {_shown(run_dir.root)}")
    if values:
        shown = ", ".join(f"{k}={param_text(v)}{' (--param)' * (k in given)}" for k, v in values.items())
        lines.append(f"  parameters: {shown}")
    return lines


def _line(end: StepEnd) -> str:
    if end.result == SUCCEEDED:
        where = ", ".join(f"{k} -> {_shown(v)}" for k, v in end.outputs.items())
        return f"step {end.name}: succeeded in {end.seconds:.1f}s" + (f"; outputs: {where}" if where else "")
    if end.result in (FAILED, INTERRUPTED):
        return f"step {end.name}: {end.result} after {end.seconds:.1f}s: {end.note}"
    return f"step {end.name}: {end.result}: {end.note}"


def _summary(name: str, graph: PipelineGraph, ends: Mapping[str, StepEnd], stopped: list[int]) -> list[str]:
    width = max(len(s.name) for s in graph.steps)
    lines = ["summary:"]
    for step in graph.steps:
        end = ends[step.name]
        timing = f" {end.seconds:7.1f}s" if end.result in (SUCCEEDED, FAILED, INTERRUPTED) else " " * 9
        lines.append(f"  {end.name:<{width}}  {end.result:<11}{timing}  {end.note}".rstrip())
    failed = [e.name for e in ends.values() if e.result == FAILED]
    if stopped:
        lines.append(f"trainspec run --local: pipeline {name} interrupted: the running step was stopped")
    elif failed:
        lines.append(f"trainspec run --local: pipeline {name} failed: step {', '.join(failed)} failed")
    else:
        lines.append(f"trainspec run --local: pipeline {name} succeeded")
    return lines


def _write(say: TextIO, lines: list[str]) -> None:
    for line in lines:
        say.write(line + "\n")
    say.flush()


def _shown(path: Path) -> str:
    """A path relative to the working directory when it is inside it."""
    cwd = os.getcwd()
    text = str(path)
    return os.path.relpath(text, cwd) if text.startswith(cwd.rstrip(os.sep) + os.sep) else text


def _workdir_problem(root: Path, exc: OSError) -> Diagnostic:
    return Diagnostic(
        code=codes.LOCAL_WORK_DIR,
        message=f"cannot use work directory {root}: {exc}",
        file="<command line>",
        path="--workdir",
        hint="pass --workdir DIR with a directory you can write to",
    )


__all__ = ["PipelineOptions", "StepEnd", "run_pipeline"]
