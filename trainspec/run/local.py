"""``run --local`` put together: the job's processes, prepared from a compile, then run.

:func:`prepare` turns a :class:`~trainspec.compiler.pipeline.CompileResult` into a
:class:`Prepared` run (every diagnostic is found before anything starts); :func:`execute` runs
the sharding stage, then the nodes, and returns the job's exit status.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

from trainspec.compiler.pipeline import CompileResult
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.kube_facts import CHECKPOINT_DIR_ENV, DATA_DIR_ENV, NUM_SHARDS_ENV, RUN_ID_ENV, STORAGE_URI_ENV
from trainspec.dsl.spec.models import Framework
from trainspec.k8s.wellknown import DATASET_INITIALIZER, LAUNCHER
from trainspec.run import environment as E, gpus as G
from trainspec.run.job import EnvEntry, LocalJob, check_engine, local_job, pick_plan
from trainspec.run.lock import RunLock, take as take_workdir
from trainspec.run.processes import Member, Outcome, StartError, Supervisor
from trainspec.run.secrets import read_secret_file_values, resolve_secrets
from trainspec.run.workdir import WorkDir, default_workdir, prepare as prepare_workdir

#: The stage runs from the trainspec that runs this command (the image's, in a cluster).
STAGE_ARGV = (sys.executable, "-m", "trainspec.stages.shard")
_MPI = (Framework.MPI, Framework.DEEPSPEED)


@dataclass(frozen=True)
class RunOptions:
    """What the command line chose (None: the job's own value)."""

    job: str | None = None
    nodes: int | None = None
    procs_per_node: int | None = None
    env_file: str | None = None
    workdir: str | None = None
    data_source: str | None = None
    #: The local environment the processes start from (default: this process's).
    environ: Mapping[str, str] | None = None
    #: This machine's GPUs (None: detect them).
    gpu_devices: Sequence[str] | None = None


@dataclass
class Prepared:
    """A run ready to start: what to say first, the stage, the nodes."""

    job: LocalJob
    work: WorkDir
    nodes: int
    procs_per_node: int
    stage: Member | None
    members: list[Member]
    header: list[str] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    #: The work directory, taken for this run id (:mod:`.lock`; released by :func:`execute`, or when dropped).
    lock: RunLock | None = None


def prepare(result: CompileResult, options: RunOptions) -> tuple[Prepared | None, list[Diagnostic]]:
    """Everything needed to run the chosen job, or the diagnostics that prevent it."""
    environ = dict(os.environ if options.environ is None else options.environ)
    plan, problems = pick_plan(result, options.job)
    if plan is None:
        return None, problems
    problems = check_engine(plan)
    if problems:
        return None, problems
    job = local_job(result, plan)
    if not job.argv:
        return None, [
            job.loaded.diagnostic(
                codes.LOCAL_COMMAND,
                ("spec", "command"),
                f"job {job.name} sets no command (in a cluster the image's entrypoint "
                "would run; locally there is no image)",
                hint="set spec.command (and spec.args) in the job",
            )
        ]
    missing = _missing_program(job.argv[0], environ)
    if missing is not None:
        return None, [missing(job)]
    nodes = options.nodes or job.nodes
    procs = options.procs_per_node or job.procs_per_node
    problems = []
    file_values, found = read_secret_file_values(options.env_file)
    problems += found
    secret_values, found = resolve_secrets(
        job.env, file_values=file_values, environ=environ, loaded=job.loaded, env_file=options.env_file
    )
    problems += found
    if job.stage is not None and options.data_source is None and job.stage.storage_uri.startswith("pvc://"):
        problems.append(
            job.loaded.diagnostic(
                codes.LOCAL_DATA_SOURCE,
                ("spec", "data", "source"),
                f"data source {job.stage.storage_uri} is a PersistentVolumeClaim of the cluster; this machine cannot "
                "read it",
                hint="pass --data-source PATH (a local copy of the data) or an s3:// / gs:// URI",
            )
        )
    devices = list(options.gpu_devices) if options.gpu_devices is not None else G.detect(environ)
    visible = _gpu_slices(job, devices, nodes, problems)
    root = Path(options.workdir) if options.workdir else default_workdir(job.namespace, job.name)
    if [p for p in problems if p.is_error]:
        return None, problems
    work, found = prepare_workdir(root)
    if work is None:
        return None, found
    run_id = _run_id(job)
    taken, found = take_workdir(work.root, run_id)  # before anything is written there: one run of an id at a time
    if found:
        return None, found
    base = E.base_environment(environ)
    shards = _local_shards(job, nodes, procs)
    stage = _stage_member(job, work, base, options.data_source, shards)
    members = _node_members(job, work, base, secret_values, nodes, procs, shards, visible, run_id)
    prepared = Prepared(
        job, work, nodes, procs, stage, members, warnings=[p for p in problems if not p.is_error], lock=taken
    )
    prepared.header = _header(prepared, options)
    return prepared, prepared.warnings


def _missing_program(program: str, environ: Mapping[str, str]) -> Callable[[LocalJob], Diagnostic] | None:
    """None when ``program`` can be started here, else a maker of the TS706 diagnostic."""
    if os.sep in program:
        found = os.access(program, os.X_OK) and os.path.isfile(program)
    else:
        found = shutil.which(program, path=environ.get("PATH", os.defpath)) is not None
    if found:
        return None
    return lambda job: job.loaded.diagnostic(
        codes.LOCAL_COMMAND,
        ("spec", "command"),
        f"{program!r} (the job's command) is not found on this machine's PATH: in the cluster it comes with the image",
        hint=f"install {program} locally (or activate the environment that has it) and run again",
    )


def _gpu_slices(job: LocalJob, devices: list[str], nodes: int, problems: list[Diagnostic]) -> list[str]:
    per_node = job.gpus_per_node
    if per_node > 0 and not devices:
        problems.append(
            job.loaded.diagnostic(
                codes.LOCAL_GPUS,
                ("spec", "resourcesPerNode"),
                f"the job asks for {per_node} GPU(s) per node and this machine has none: the nodes run without GPUs",
                severity=Severity.WARNING,
                hint="code that needs CUDA (NCCL) fails here; use gloo/CPU for local runs",
            )
        )
        return []
    visible = G.slices(devices, nodes, per_node)
    if visible is None:
        problems.append(
            job.loaded.diagnostic(
                codes.LOCAL_GPUS,
                ("spec", "resourcesPerNode"),
                f"{nodes} node(s) x {per_node} GPU(s) need {nodes * per_node} GPUs; this machine has {len(devices)} "
                f"({','.join(devices)})",
                hint=f"run fewer nodes locally: --nodes {max(1, len(devices) // per_node)}"
                if len(devices) >= per_node
                else "this machine has fewer GPUs than one node needs",
            )
        )
        return []
    return visible


def _local_shards(job: LocalJob, nodes: int, procs: int) -> int | None:
    """The shard count for the local size (one shard per node or per process, as the compiler counts)."""
    if job.shard_by is None:
        return None
    return nodes if job.shard_by == "node" else nodes * procs


def _plain(entries: Sequence[EnvEntry], secrets: Mapping[str, str]) -> dict[str, str]:
    return {e.name: (secrets[e.name] if e.secret is not None else e.value or "") for e in entries}


def _homes(mounts: Mapping[str, str], work: WorkDir) -> dict[str, Path]:
    volumes = work.volume_homes()
    return {path: volumes[name] for path, name in mounts.items() if name in volumes}


def _stage_member(
    job: LocalJob, work: WorkDir, base: dict[str, str], data_source: str | None, shards: int | None
) -> Member | None:
    if job.stage is None:
        return None
    env, _ = E.map_paths(_plain(job.stage.env, {}), _homes(job.stage.mounts, work))
    if data_source is not None:
        local = Path(data_source)
        env[STORAGE_URI_ENV] = data_source if "://" in data_source else str(local.resolve())
    if shards is not None:
        env[NUM_SHARDS_ENV] = str(shards)
    return Member(DATASET_INITIALIZER, STAGE_ARGV, {**base, **env})


def _node_members(
    job: LocalJob,
    work: WorkDir,
    base: dict[str, str],
    secrets: Mapping[str, str],
    nodes: int,
    procs: int,
    shards: int | None,
    visible: list[str],
    run_id: str,
) -> list[Member]:
    env, _ = E.map_paths(_plain(job.env, secrets), _homes(job.mounts, work))
    if job.checkpoint_kind == "uri":  # object storage in the cluster; a local directory here
        env[CHECKPOINT_DIR_ENV] = str(work.checkpoints)
    if shards is not None and NUM_SHARDS_ENV in env:
        env[NUM_SHARDS_ENV] = str(shards)
    env[RUN_ID_ENV] = run_id
    port = E.free_port()
    if job.framework in _MPI:
        work.hostfile.write_text(E.hostfile_text(nodes, procs), encoding="utf-8")
        injected = E.controller_env(
            job.framework, node=0, nodes=nodes, procs_per_node=procs, port=port, hostfile=work.hostfile.resolve()
        )
        return [Member(LAUNCHER, job.argv, {**base, **env, **injected, **_visible_all(visible)})]
    members = []
    for node in range(nodes):
        injected = E.controller_env(job.framework, node=node, nodes=nodes, procs_per_node=procs, port=port)
        gpu = {G.VISIBLE_DEVICES: visible[node]} if visible else {}
        members.append(Member(_label(job, node, procs), job.argv, {**base, **env, **injected, **gpu}))
    return members


def _run_id(job: LocalJob) -> str:
    """A TrainJob compiled with a run id keeps it (the lease names the same run); else one per local run."""
    compiled = next((e.value for e in job.env if e.name == RUN_ID_ENV and e.secret is None), None)
    return compiled or E.local_run_id()


def _visible_all(visible: list[str]) -> dict[str, str]:
    """The MPI launcher's ranks all run here: it sees every node's GPUs."""
    if not visible:
        return {}
    return {G.VISIBLE_DEVICES: ",".join(v for v in visible if v)}


def _label(job: LocalJob, node: int, procs: int) -> str:
    if job.framework is not Framework.TORCH or procs == 1:
        return f"node {node}"
    first = node * procs
    return f"node {node} ranks {first}-{first + procs - 1}"


def _header(run: Prepared, options: RunOptions) -> list[str]:
    job = run.job
    size = "1 launcher" if job.framework in _MPI else f"{run.nodes} node{'s' * (run.nodes != 1)}"
    procs = f" x {run.procs_per_node} process{'es' * (run.procs_per_node != 1)}"
    lines = [f"trainspec run --local: {job.namespace}/{job.name} ({job.framework.value}, {size}{procs})"]
    scaled = [
        f"--{n} {v} (job: {j})"
        for n, v, j in (
            ("nodes", options.nodes, job.nodes),
            ("procs-per-node", options.procs_per_node, job.procs_per_node),
        )
        if v is not None and v != j
    ]
    if scaled:
        lines.append("  scaled down: " + ", ".join(scaled))
    lines.append(f"  work directory: {_shown(run.work.root)} (kept between runs; delete it to start over)")
    if job.checkpoint_kind is not None:
        pod = job.checkpoint_path if job.checkpoint_kind != "uri" else f"{job.checkpoint_path} (object storage)"
        lines.append(f"  checkpoints: {pod} -> {_shown(run.work.checkpoints)}")
    if run.stage is not None:
        source = run.stage.env.get(STORAGE_URI_ENV, "")
        target = run.stage.env.get(DATA_DIR_ENV, str(run.work.workspace))
        lines.append(
            f"  dataset: {_shown(source)} -> {_shown(target)} ({_count(run.stage.env.get(NUM_SHARDS_ENV), 'shard')})"
        )
    if not job.runtime_known:
        lines.append("  note: the runtime lives in the cluster; only its spec's env is known here")
    if run.lock is not None:
        if run.lock.taken_over is not None:
            lines.append(
                f"  note: the last run of this job here (pid {run.lock.taken_over}) ended without releasing the "
                "work directory (killed?); none of its processes is left, this run took it over"
            )
        lines.extend(
            f"  note: run {other} (pid {pid}) uses this work directory too: the checkpoint lease makes them take turns"
            for other, pid in run.lock.others
        )
    return lines


def _count(number: str | None, word: str) -> str:
    return f"{number} {word}{'' if number == '1' else 's'}"


def _shown(path: str | Path) -> str:
    """A path as the header shows it: relative to the working directory when it is inside it."""
    text = str(path)
    if not os.path.isabs(text):
        return text
    cwd = os.getcwd()
    return os.path.relpath(text, cwd) if text == cwd or text.startswith(cwd.rstrip(os.sep) + os.sep) else text


def execute(run: Prepared, *, stdout: BinaryIO, stderr: BinaryIO, say: TextIO, grace: float | None = None) -> int:
    """Run the stage, then the nodes; returns the job's exit status (and reports it on ``say``)."""
    kwargs = {} if grace is None else {"grace": grace}
    hold = () if run.lock is None or run.lock.fd is None else (run.lock.fd,)
    for line in run.header:
        say.write(line + "\n")
    say.flush()
    name = f"{run.job.namespace}/{run.job.name}"
    try:
        if run.stage is not None:
            outcome = Supervisor(stdout, stderr, hold_fds=hold, **kwargs).run([run.stage])
            if outcome.code != 0:
                _report(say, name, outcome, "the sharding stage")
                return outcome.code
        outcome = Supervisor(stdout, stderr, hold_fds=hold, **kwargs).run(run.members)
    except StartError as exc:
        say.write(f"trainspec run --local: {name}: cannot start {exc.member.label}: {exc}\n")
        return 127 if isinstance(exc.error, FileNotFoundError) else 126
    finally:
        if run.lock is not None:
            run.lock.release()
    _report(say, name, outcome, None)
    return outcome.code


def _report(say: TextIO, name: str, outcome: Outcome, what: str | None) -> None:
    if outcome.interrupted is not None:
        sig = signal.Signals(outcome.interrupted).name
        say.write(f"trainspec run --local: {name} interrupted ({sig}): every process was stopped\n")
    elif outcome.failed is not None:
        where = what or outcome.failed
        say.write(f"trainspec run --local: {name} failed: {where} exited {outcome.code}\n")
    else:
        say.write(f"trainspec run --local: {name} succeeded\n")
    say.flush()


__all__ = ["Prepared", "RunOptions", "execute", "prepare"]
