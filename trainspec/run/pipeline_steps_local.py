"""One step of a local pipeline run: a container step as a local process, a job step as ``run --local``.

* A **container step** runs its ``command`` + ``args`` here (no image is pulled: the command runs
  on this machine, from the working directory, with the step's ``env`` added to the shell's),
  its references substituted: ``$(params.x)`` by the run's value, ``$(outputs.x)`` by the path
  under the run's directory where it writes output x, ``$(steps.s.outputs.x)`` by step s's path.
* A **job step** goes through :func:`trainspec.run.local.prepare`, the code that prepares
  ``run --local JOB``: the compiled TrainJob read as the controller would, the sharding stage,
  one process group per node. Its work directory is the step's (its ``checkpoints/`` is the
  step's ``checkpoint`` output), and a data source that is another step's output is that output's
  local path (the ``--data-source`` override of ``run --local``). Any other stand-in artifact URI
  in the job's command line or env is replaced by the local path too.

Each step runs under a :class:`~trainspec.run.processes.Supervisor` (a process group per
process, everything ended on Ctrl-C). When a step's ``timeout`` passes, a timer asks its
supervisor to stop (:meth:`~trainspec.run.processes.Supervisor.stop`): the step's groups get
SIGTERM, then SIGKILL after the grace period, and the step is reported as timed out.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace as dc_replace
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from trainspec.compiler.pipeline import CompileResult
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.kube_facts import STORAGE_URI_ENV
from trainspec.dsl.load.pipeline_steps import ARTIFACT_STAND_IN, PipelineGraph
from trainspec.dsl.record import replace as record_replace
from trainspec.dsl.spec.pipeline_refs import Ref, parse_ref, substitute
from trainspec.dsl.spec.pipeline_spec import REFERENCE, Step
from trainspec.run.local import Prepared, RunOptions, prepare
from trainspec.run.pipeline_params import param_text
from trainspec.run.processes import Member, Outcome, StartError, Supervisor
from trainspec.run.workdir import WorkDir


@dataclass(frozen=True)
class RunDir:
    """Where one pipeline run keeps its steps' outputs: ``<root>/<step>/outputs/<x>``; a job step's
    work directory is ``<root>/<step>/work`` (its ``checkpoint`` output: ``work/checkpoints``)."""

    root: Path

    def job_work(self, step: str) -> Path:
        return self.root / step / "work"

    def output(self, graph: PipelineGraph, step: str, name: str) -> Path:
        kind = next(s.kind for s in graph.steps if s.name == step)
        if kind == "job":
            return WorkDir(self.job_work(step)).checkpoints
        return self.root / step / "outputs" / name


@dataclass
class StepContext:
    """What every step of one run shares."""

    result: CompileResult
    graph: PipelineGraph
    values: Mapping[str, Any]
    run: RunDir
    environ: Mapping[str, str]
    stdout: BinaryIO
    stderr: BinaryIO
    say: TextIO
    #: Writes the diagnostics that stop a job step (the CLI's report format).
    report: Callable[[list[Diagnostic]], None]
    env_file: str | None = None
    grace: float | None = None
    #: Set by the timeout timer before it stops the step: the interruption is the timeout's.
    timed_out: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Attempt:
    """How one attempt of a step ended."""

    code: int
    #: Why it failed, in words (empty: it succeeded, or the process's exit status says it all).
    note: str = ""
    #: The signal that stopped it, when not its timeout (Ctrl-C: the whole run stops).
    interrupted: int | None = None


def run_step(ctx: StepContext, step: Step, timeout: float | None) -> Attempt:
    """Run one attempt of ``step`` to its end (or its timeout)."""
    if step.container is not None:
        members, note = _container_members(ctx, step)
        if members is None:
            return Attempt(1, note)
        return _supervised(ctx, [members], timeout)
    return _job(ctx, step, timeout)


def with_pipeline_jobs(result: CompileResult) -> CompileResult:
    """``result`` with its pipelines' jobs among the outputs, where :func:`.local.prepare` reads a job's
    TrainJob (they are compiled beside the outputs, not among them: in a cluster a pipeline runs them)."""
    if not result.pipeline_jobs:
        return result
    return record_replace(result, outputs=[*result.outputs, *result.pipeline_jobs], pipeline_jobs=[])


def ref_value(ctx: StepContext, step: str, ref: Ref) -> str:
    """What a reference of a command line or env stands for in step ``step``: text or a local path."""
    if ref.kind == "param":
        return param_text(ctx.values[ref.name])
    if ref.kind == "output":
        path = ctx.run.output(ctx.graph, step, ref.name)
        path.parent.mkdir(parents=True, exist_ok=True)  # the step writes the output itself
        return str(path)
    if ref.kind == "step-output":
        return str(ctx.run.output(ctx.graph, ref.step, ref.name))
    return "$(steps." + ref.step + ".status)"  # checked: a status is read in when: only


def _container_members(ctx: StepContext, step: Step) -> tuple[Member | None, str]:
    container = step.container
    assert container is not None
    if not container.command:
        return None, (
            f"step {step.name} sets no command: in a cluster the entrypoint of image {container.image} would run, "
            "and a local run pulls no image; set container.command (and args) in the step to run it locally"
        )

    def value_of(ref: Ref) -> str:
        return ref_value(ctx, step.name, ref)

    argv = [substitute(text, value_of) for text in (*container.command, *container.args)]
    env = {**ctx.environ, **{name: substitute(text, value_of) for name, text in container.env.items()}}
    return Member(step.name, argv, env), ""


def _job(ctx: StepContext, step: Step, timeout: float | None) -> Attempt:
    name = next(s.job for s in ctx.graph.steps if s.name == step.name)
    options = RunOptions(
        job=name,
        workdir=str(ctx.run.job_work(step.name)),
        data_source=_data_source(ctx, step),
        env_file=ctx.env_file,
        environ=ctx.environ,
    )
    prepared, problems = prepare(with_pipeline_jobs(ctx.result), options)
    if problems:
        ctx.report(problems)
    if prepared is None:
        return Attempt(1, f"job {name} cannot run here (the diagnostics above)")
    _local_artifacts(ctx, prepared)
    for line in prepared.header:
        ctx.say.write("  " + line + "\n")
    ctx.say.flush()
    try:
        if prepared.stage is not None:
            staged = _supervised(ctx, [prepared.stage], timeout, prepared)
            if staged.code != 0 or staged.interrupted is not None:
                return dc_replace(staged, note=staged.note or "the sharding stage failed")
        return _supervised(ctx, prepared.members, timeout, prepared)
    finally:
        if prepared.lock is not None:
            prepared.lock.release()


def _data_source(ctx: StepContext, step: Step) -> str | None:
    """The local path of the step output a job step's ``data.source`` names (None: it names none)."""
    data = (step.job or {}).get("data")
    source = data.get("source") if isinstance(data, dict) else None
    if not isinstance(source, str):
        return None
    whole = REFERENCE.fullmatch(source.strip())
    ref = parse_ref(whole.group(1)) if whole is not None else None
    if ref is None or ref.kind != "step-output":
        return None
    return str(ctx.run.output(ctx.graph, ref.step, ref.name))


def _local_artifacts(ctx: StepContext, prepared: Prepared) -> None:
    """Every stand-in artifact URI in the job's processes made the output's local path."""
    pipeline = ctx.graph.pipeline.name
    local: dict[str, str] = {}
    for other in ctx.graph.steps:
        names = ["checkpoint"] if other.kind == "job" else _declared_outputs(ctx, other.name)
        for output in names:
            uri = ARTIFACT_STAND_IN.format(pipeline=pipeline, step=other.name, output=output)
            local[uri] = str(ctx.run.output(ctx.graph, other.name, output))

    def swap(text: str) -> str:
        for uri, path in local.items():
            text = text.replace(uri, path)
        return text

    def member(m: Member) -> Member:
        return dc_replace(m, argv=[swap(a) for a in m.argv], env={k: swap(v) for k, v in m.env.items()})

    prepared.members = [member(m) for m in prepared.members]
    if prepared.stage is not None:
        kept = prepared.stage.env.get(STORAGE_URI_ENV)  # the --data-source value, as run --local set it
        prepared.stage = member(prepared.stage)
        if kept is not None:
            prepared.stage.env[STORAGE_URI_ENV] = swap(kept)


def _declared_outputs(ctx: StepContext, step: str) -> list[str]:
    return next(list(s.outputs) for s in ctx.graph.pipeline.spec.steps if s.name == step)


def _supervised(
    ctx: StepContext,
    members: Sequence[Member],
    timeout: float | None,
    prepared: Prepared | None = None,
) -> Attempt:
    """Run ``members`` together under a supervisor, stopped when ``timeout`` seconds pass (a job's
    work directory lock is held by every process and released by the caller)."""
    kwargs = {} if ctx.grace is None else {"grace": ctx.grace}
    hold = () if prepared is None or prepared.lock is None or prepared.lock.fd is None else (prepared.lock.fd,)
    supervisor = Supervisor(ctx.stdout, ctx.stderr, hold_fds=hold, **kwargs)
    timer = _timer(ctx, timeout, supervisor)
    try:
        outcome = supervisor.run(members)
    except StartError as exc:
        return Attempt(127 if isinstance(exc.error, FileNotFoundError) else 126, f"cannot start {exc}")
    finally:
        if timer is not None:
            timer.cancel()
    return _attempt(ctx, outcome, timeout)


def _timer(ctx: StepContext, timeout: float | None, supervisor: Supervisor) -> threading.Timer | None:
    if timeout is None:
        return None
    ctx.timed_out.clear()

    def expire() -> None:
        ctx.timed_out.set()
        supervisor.stop()  # every group: SIGTERM, SIGKILL after the grace period

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    return timer


def _attempt(ctx: StepContext, outcome: Outcome, timeout: float | None) -> Attempt:
    if outcome.interrupted is not None and ctx.timed_out.is_set():
        ctx.timed_out.clear()
        return Attempt(outcome.code, f"timed out after {_seconds(timeout or 0)}: its processes were stopped")
    if outcome.interrupted is not None:
        return Attempt(outcome.code, f"interrupted ({signal.Signals(outcome.interrupted).name})", outcome.interrupted)
    if outcome.failed is not None:
        return Attempt(outcome.code, f"{outcome.failed} exited {outcome.code}")
    return Attempt(outcome.code)


def _seconds(value: float) -> str:
    return f"{value:g}s"


__all__ = ["Attempt", "RunDir", "StepContext", "ref_value", "run_step", "with_pipeline_jobs"]
