"""``trainspec ladder run --local``: a job's scaling ladder, rung after rung, measured on this machine.

The rungs are the plans of a ladder compile (``Options(ladder=True)``,
:mod:`trainspec.compiler.ladder_rungs`): the same jobs ``compile --ladder`` writes. Each rung runs
as ``run --local`` runs a job (:func:`trainspec.run.local.prepare` and :func:`~trainspec.run.local.execute`),
after the previous one finished, with ``TRAINSPEC_STEP_LOG_DIR`` set so the step timers of its
ranks log every step (:mod:`trainspec.stages.step_log`); its figures are read back from those
logs (:func:`trainspec.stages.step_rates.measure`).

Where each rung lives: ``<root>/<rung>/`` (root: ``.trainspec/ladder/<namespace>/<job>``, or
``--workdir``), a ``run --local`` work directory with ``steps/`` (the step logs) and
``output.log`` (everything the rung printed) beside the volumes. A rung measures from step 0:
its ``checkpoints/`` and ``steps/`` are emptied before it starts (the shards are kept: the next
ladder run of the same data is a cache hit).

A rung that does not fit this machine is skipped with the reason: more GPUs than it has, more
CPUs than it has cores (``resourcesPerNode.cpu`` x nodes), or, for a job without GPUs, more
processes than cores (they would take turns on the cores: the figure would measure contention,
not scaling). After a rung fails, the ladder stops: the later rungs are "not run".
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from trainspec.compiler.ladder_rungs import ladder_of
from trainspec.compiler.pipeline import CompileResult
from trainspec.compiler.plan import JobPlan
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.kube_facts import STEP_LOG_DIR_ENV
from trainspec.run import gpus as G
from trainspec.run.local import Prepared, RunOptions, execute, prepare
from trainspec.stages.step_rates import Measurement, Warmup, measure

#: Where the rungs of a ladder run live unless ``--workdir`` says otherwise.
DEFAULT_ROOT = Path(".trainspec") / "ladder"
#: Lines of a failed rung's output shown on the terminal (all of it is in its output.log).
TAIL_LINES = 20
#: Exit statuses of a run stopped by Ctrl-C or SIGTERM: the ladder stops there too.
_INTERRUPTED = (130, 143)


@dataclass(frozen=True)
class LadderOptions:
    """What the command line chose for a local ladder run."""

    job: str | None = None
    #: Only these rungs (tags, e.g. ``("1n", "2n")``); None: every rung.
    rungs: tuple[str, ...] | None = None
    workdir: str | None = None
    env_file: str | None = None
    data_source: str | None = None
    warmup: Warmup = field(default_factory=Warmup)
    #: The local environment the processes start from (default: this process's).
    environ: Mapping[str, str] | None = None
    #: This machine's GPUs (None: detect them when a rung needs some).
    gpu_devices: Sequence[str] | None = None
    #: This machine's cores (None: the ones this process may run on).
    cores: int | None = None


@dataclass(frozen=True)
class RungRun:
    """What happened to one rung."""

    plan: JobPlan
    tag: str
    #: ``measured``, ``skipped``, ``failed``, ``not run`` or ``no measurement``.
    status: str
    note: str | None = None
    measurement: Measurement | None = None
    #: Wall-clock seconds the rung took (start-up and sharding included).
    seconds: float | None = None

    @property
    def name(self) -> str:
        return self.plan.resolved.name

    @property
    def nodes(self) -> int:
        return self.plan.resolved.nodes.value

    @property
    def procs_per_node(self) -> int:
        return self.plan.resolved.procs_per_node.value

    @property
    def world_size(self) -> int:
        return self.plan.resolved.world_size

    @property
    def gpus(self) -> int:
        return self.nodes * self.plan.resolved.gpus_per_node.value


@dataclass(frozen=True)
class Ladder:
    """One job's rungs, smallest first."""

    namespace: str
    job: str
    plans: tuple[JobPlan, ...]

    @property
    def tags(self) -> list[str]:
        """The rungs' tags (``1gpu``, ``1n``, ``2n`` ...), smallest first."""
        return [rung_tag(plan) for plan in self.plans]

    def unknown(self, tags: Sequence[str] | None) -> str:
        """What is wrong with ``--rungs TAG,...`` for this ladder ("" when every tag is one of its rungs)."""
        known = self.tags
        missing = [t for t in tags or () if t not in known]
        if not missing:
            return ""
        return f"no rung {', '.join(missing)} in the ladder of {self.namespace}/{self.job} (rungs: {', '.join(known)})"


def pick_ladder(result: CompileResult, job: str | None) -> tuple[Ladder | None, list[Diagnostic]]:
    """The ladder of the job named ``job``, or of the only job (TS703 otherwise)."""
    grouped: dict[tuple[str, str], list[JobPlan]] = {}
    for plan in result.plans:
        found = ladder_of(plan)
        if found is not None:
            grouped.setdefault((plan.resolved.namespace, found[0]), []).append(plan)
    chosen = [key for key in grouped if job is None or key[1] == job]
    if len(chosen) == 1:
        namespace, name = chosen[0]
        return Ladder(namespace, name, tuple(grouped[chosen[0]])), []
    names = ", ".join(sorted(f"{ns}/{name}" for ns, name in grouped)) or "none"
    if job is not None and chosen:
        message = f"several jobs are named {job!r}: {names}"
    elif job is not None:
        message = f"no job named {job!r} among the inputs (jobs: {names})"
    else:
        message = (
            f"the inputs hold {len(grouped)} jobs ({names}); ladder run climbs one job's ladder"
            if grouped
            else "the inputs hold no TrainingJob to climb a ladder with"
        )
    hint = "pick one with --job NAME" if grouped else "give a spec file with a TrainingJob"
    return None, [
        Diagnostic(code=codes.LOCAL_JOB_CHOICE, message=message, file="<command line>", path="--job", hint=hint)
    ]


def machine_cores() -> int:
    """The cores this process may run on (its affinity), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def fit_problem(plan: JobPlan, gpus: int, cores: int) -> str | None:
    """Why the rung cannot be measured on a machine with ``gpus`` GPUs and ``cores`` cores, or None."""
    resolved = plan.resolved
    nodes, per_node = resolved.nodes.value, resolved.gpus_per_node.value
    if nodes * per_node > gpus:
        return f"needs {nodes * per_node} GPUs ({nodes} node{'s' * (nodes != 1)} x {per_node}); this machine has {gpus}"
    cpu = resolved.resources.get("cpu")
    if cpu is not None:
        wanted = math.ceil(cpu.value.value * nodes)
        if wanted > cores:
            return f"asks for {wanted} CPUs ({nodes} x cpu {cpu.value}); this machine has {cores} cores"
    if per_node == 0 and resolved.world_size > cores:
        return (
            f"runs {resolved.world_size} processes without GPUs on {cores} cores: they would take turns on the "
            "cores, and the figure would measure that, not scaling"
        )
    return None


def spec_batch(plan: JobPlan) -> tuple[int | None, int | None]:
    """The spec's global batch (sequences per step) and sequence length, when it has a model."""
    model = plan.resolved.job.spec.model
    if model is None:
        return None, None
    return getattr(model, "global_batch", None), getattr(model, "sequence_length", None)


class LadderRunner:
    """Runs a ladder's rungs in order; ``say`` gets one line per rung, ``report`` the diagnostics."""

    def __init__(
        self,
        result: CompileResult,
        options: LadderOptions,
        *,
        say: TextIO,
        report: Callable[[list[Diagnostic]], None],
    ) -> None:
        self.result = result
        self.options = options
        self.say = say
        self.report = report
        self.code = 0
        self._devices: list[str] | None = None

    def root(self, ladder: Ladder) -> Path:
        if self.options.workdir:
            return Path(self.options.workdir)
        return DEFAULT_ROOT / ladder.namespace / ladder.job

    def run(self, ladder: Ladder) -> list[RungRun]:
        """Every chosen rung of ``ladder``, in order; :attr:`code` is the exit status afterwards."""
        plans = [p for p in ladder.plans if self.options.rungs is None or rung_tag(p) in self.options.rungs]
        root = self.root(ladder)
        count = f"{len(plans)} rung{'s' * (len(plans) != 1)}"
        self._line(
            f"trainspec ladder run: {ladder.namespace}/{ladder.job}, {count} on this machine, one after the other"
        )
        self._line(f"  work directory: {root} (a directory per rung; its output.log holds what the rung printed)")
        done: list[RungRun] = []
        stopped: str | None = None
        for plan in plans:
            tag = rung_tag(plan)
            if stopped is not None:
                done.append(RungRun(plan, tag, "not run", stopped))
                continue
            rung = self._rung(plan, tag, root / tag)
            if rung is None:  # it could not be prepared: the diagnostics were reported
                self.code = 1
                return done
            done.append(rung)
            if rung.status == "failed":
                stopped = f"interrupted at rung {tag}" if self.code in _INTERRUPTED else f"rung {tag} failed"
        return done

    def _line(self, text: str) -> None:
        self.say.write(text + "\n")
        self.say.flush()

    def _gpus(self) -> int:
        if self._devices is None:
            given = self.options.gpu_devices
            environ = os.environ if self.options.environ is None else self.options.environ
            self._devices = list(given) if given is not None else G.detect(environ)
        return len(self._devices)

    def _rung(self, plan: JobPlan, tag: str, where: Path) -> RungRun | None:
        needs_gpus = plan.resolved.gpus_per_node.value > 0
        cores = self.options.cores or machine_cores()
        problem = fit_problem(plan, self._gpus() if needs_gpus else 0, cores)
        if problem is not None:
            self._line(f"  rung {tag}: skipped: {problem}")
            return RungRun(plan, tag, "skipped", problem)
        options = RunOptions(
            job=plan.resolved.name,
            workdir=str(where),
            env_file=self.options.env_file,
            data_source=self.options.data_source,
            environ=self.options.environ,
            gpu_devices=self._devices if needs_gpus else [],
        )
        prepared, problems = prepare(self.result, options)
        if problems:
            self.report(problems)
        if prepared is None:
            return None
        if prepared.lock is not None and prepared.lock.others:
            other, pid = prepared.lock.others[0]
            prepared.lock.release()
            note = f"run {other} (pid {pid}) uses {where} too: measuring beside it would measure both"
            self._line(f"  rung {tag}: failed: {note}")
            return RungRun(plan, tag, "failed", note)
        steps = _fresh(prepared)
        size = f"{prepared.nodes} node{'s' * (prepared.nodes != 1)} x {prepared.procs_per_node}"
        log_path = where / "output.log"
        self._line(f"  rung {tag} ({size} process{'es' * (prepared.procs_per_node != 1)}): running")
        started = time.monotonic()
        code = _execute(prepared, log_path)
        seconds = time.monotonic() - started
        if code != 0:
            self.code = code
            self._line(f"  rung {tag}: failed: exited {code} after {seconds:.1f} s; the end of {log_path}:")
            for line in _tail(log_path):
                self._line(f"    {line}")
            return RungRun(plan, tag, "failed", f"exited {code} (see {log_path})", seconds=seconds)
        samples_per_step, tokens_per_sample = spec_batch(plan)
        found, why = measure(
            steps,
            prepared.nodes * prepared.procs_per_node,
            self.options.warmup,
            samples_per_step=samples_per_step,
            tokens_per_sample=tokens_per_sample,
        )
        if found is None:
            self._line(f"  rung {tag}: succeeded in {seconds:.1f} s, not measured: {why}")
            return RungRun(plan, tag, "no measurement", why, seconds=seconds)
        self._line(f"  rung {tag}: succeeded in {seconds:.1f} s; {found.steps} steps measured")
        return RungRun(plan, tag, "measured", None, found, seconds)


def rung_tag(plan: JobPlan) -> str:
    """The rung's tag (``1gpu``, ``1n``, ``2n`` ...)."""
    found = ladder_of(plan)
    assert found is not None
    return found[1]


def _fresh(prepared: Prepared) -> Path:
    """Empty the rung's checkpoints and step logs (a rung measures from step 0); the step-log directory."""
    checkpoints = prepared.work.checkpoints
    for entry in list(checkpoints.iterdir()) if checkpoints.is_dir() else ():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    steps = prepared.work.root / "steps"
    shutil.rmtree(steps, ignore_errors=True)
    steps.mkdir(parents=True)
    log = str(steps)
    prepared.members = [replace(m, env={**m.env, STEP_LOG_DIR_ENV: log}) for m in prepared.members]
    return steps


def _execute(prepared: Prepared, log_path: Path) -> int:
    """Run the rung with everything it prints (its processes' output and run --local's lines) in ``log_path``."""
    with log_path.open("wb") as log:
        say = io.TextIOWrapper(log, encoding="utf-8", errors="replace", write_through=True)
        try:
            return execute(prepared, stdout=log, stderr=log, say=say)
        finally:
            with contextlib.suppress(ValueError):
                say.detach()  # the log is closed by its own with block


def _tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]


__all__ = [
    "DEFAULT_ROOT",
    "Ladder",
    "LadderOptions",
    "LadderRunner",
    "RungRun",
    "fit_problem",
    "pick_ladder",
    "rung_tag",
    "spec_batch",
]
