"""What a compiled job's pods get, read from the lowered TrainJob and its runtime.

The controller builds each container's environment by upserting, in order: the runtime
template's container env, then ``trainer.env`` (trainer nodes) or ``initializer.dataset.env``
plus ``STORAGE_URI`` (the dataset initializer). :class:`LocalJob` holds the result of those
upserts, still unresolved (secrets are references, paths are the pod's), so the rest of
:mod:`trainspec.run` works on exactly what a cluster would run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trainspec.compiler.pipeline import CompileResult
from trainspec.compiler.plan import JobPlan
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.kube_facts import STORAGE_URI_ENV
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.spec.models import Framework
from trainspec.k8s.wellknown import (
    ANCESTOR_DATASET,
    ANCESTOR_LABEL,
    ANCESTOR_TRAINER,
    DATASET_INITIALIZER,
    JOB_LABEL,
    NODE,
)

_RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


@dataclass(frozen=True)
class EnvEntry:
    """One variable of a container: a plain value, or a reference to a key of a Secret."""

    name: str
    value: str | None = None
    secret: tuple[str, str] | None = None  # (Secret name, key)


@dataclass(frozen=True)
class StageJob:
    """The dataset-initializer container: its env after the controller's upserts."""

    env: tuple[EnvEntry, ...]
    storage_uri: str
    #: The container's mounts: mount path -> volume name.
    mounts: Mapping[str, str]


@dataclass(frozen=True)
class LocalJob:
    """One compiled job, as its trainer pods and its sharding stage would run it."""

    name: str
    namespace: str
    framework: Framework
    nodes: int
    procs_per_node: int
    gpus_per_node: int
    #: command + args of the trainer container (empty: none set, the image's entrypoint would run).
    argv: tuple[str, ...]
    #: The trainer container's env (runtime template, then trainer.env), unresolved.
    env: tuple[EnvEntry, ...]
    #: The trainer container's mounts: mount path -> volume name.
    mounts: Mapping[str, str]
    stage: StageJob | None
    #: The checkpoint form: ``volume``/``claim`` (mounted) or ``uri`` (object storage), or None.
    checkpoint_kind: str | None
    checkpoint_path: str | None
    #: data.shardBy (``rank`` or ``node``) when the job shards its data.
    shard_by: str | None
    loaded: LoadedSpec
    #: Whether the runtime's template was among the compiled objects (False: it lives in the cluster).
    runtime_known: bool


def pick_plan(result: CompileResult, job: str | None) -> tuple[JobPlan | None, list[Diagnostic]]:
    """The plan of the job to run: the one named ``job``, or the only one (TS703 otherwise)."""
    plans = result.plans
    chosen = [p for p in plans if job is None or p.resolved.name == job]
    if len(chosen) == 1:
        return chosen[0], []
    names = ", ".join(sorted(f"{p.resolved.namespace}/{p.resolved.name}" for p in plans)) or "none"
    if job is not None and len(chosen) > 1:  # the same name in several namespaces
        message = f"several jobs are named {job!r}: {names}"
    elif job is not None:
        message = f"no job named {job!r} among the inputs (jobs: {names})"
    else:
        message = (
            f"the inputs hold {len(plans)} jobs ({names}); run --local runs one"
            if plans
            else "the inputs hold no TrainingJob to run"
        )
    hint = "pick one with --job NAME" if plans else "give a spec file with a TrainingJob"
    return None, [
        Diagnostic(code=codes.LOCAL_JOB_CHOICE, message=message, file="<command line>", path="--job", hint=hint)
    ]


def check_engine(plan: JobPlan) -> list[Diagnostic]:
    """TS700 when the job runs on an engine or framework run --local cannot play yet."""
    from trainspec.compiler.lower.dialects import dialect_for

    loaded = plan.resolved.loaded
    if not dialect_for(None, plan.engine).local_run:  # Trainer TrainJobs first (issue 12)
        return [
            loaded.diagnostic(
                codes.LOCAL_UNSUPPORTED,
                ("spec", "runtime"),
                f"job {plan.resolved.name} runs on engine {plan.engine}; run --local runs Kubeflow Trainer TrainJobs "
                "only so far (the Ray and Training Operator engines are not supported locally yet)",
                hint="run it with --target trainer=2.3 (a trainer runtime), or on a cluster with trainspec compile",
            )
        ]
    return []


def local_job(result: CompileResult, plan: JobPlan) -> LocalJob:
    """Read the job's TrainJob and runtime (as compiled) into a :class:`LocalJob`."""
    from trainspec.compiler.emit import manifest_dicts

    resolved = plan.resolved
    dicts = manifest_dicts(result.objects())
    trainjob = _run_object(dicts, resolved.name, resolved.namespace)
    ref = trainjob["spec"]["runtimeRef"]
    runtime = next(
        (
            d
            for d in dicts
            if d["kind"] == ref.get("kind", _RUNTIME_KINDS[0])
            and d["metadata"]["name"] == ref["name"]
            and d["metadata"].get("namespace") in (None, resolved.namespace)
        ),
        None,
    )
    trainer = trainjob["spec"].get("trainer") or {}
    node = _container(runtime, ANCESTOR_TRAINER, NODE) if runtime else None
    if node is None:  # a runtime that lives in the cluster: its template is the Runtime model's
        spec = resolved.runtime.spec.spec
        base_env = {**(spec.network.env if spec.network else {}), **spec.env}
        node = {"env": [{"name": k, "value": v} for k, v in sorted(base_env.items())]}
    command = trainer.get("command", node.get("command")) or []
    args = trainer.get("args", node.get("args")) or []
    checkpoint = plan.checkpoint
    data = resolved.job.spec.data
    return LocalJob(
        name=resolved.name,
        namespace=resolved.namespace,
        framework=resolved.framework,
        nodes=int(trainer.get("numNodes") or resolved.nodes.value),
        procs_per_node=int(trainer.get("numProcPerNode") or resolved.procs_per_node.value or 1),
        gpus_per_node=int(resolved.gpus_per_node.value or 0),
        argv=(*command, *args),
        env=tuple(_upsert(node.get("env") or [], trainer.get("env") or [])),
        mounts={**_mounts(node), **_patched_mounts(trainjob, plan)},
        stage=_stage(runtime, trainjob) if plan.data is not None else None,
        checkpoint_kind=checkpoint.kind.value if checkpoint else None,
        checkpoint_path=checkpoint.path if checkpoint else None,
        shard_by=data.shard_by.value if data is not None and plan.data is not None else None,
        loaded=resolved.loaded,
        runtime_known=runtime is not None,
    )


def _run_object(dicts: list[dict[str, Any]], name: str, namespace: str) -> dict[str, Any]:
    """The job's TrainJob: named after the job (``runs: replace``), or ``<job>-<run id>`` labelled with the job."""
    jobs = [d for d in dicts if d["kind"] == "TrainJob" and d["metadata"].get("namespace") == namespace]
    named = [d for d in jobs if d["metadata"]["name"] == name]
    labelled = [d for d in jobs if (d["metadata"].get("labels") or {}).get(JOB_LABEL) == name]
    return (named or labelled)[0]


def _stage(runtime: dict[str, Any] | None, trainjob: dict[str, Any]) -> StageJob:
    dataset = (trainjob["spec"].get("initializer") or {}).get("dataset") or {}
    container = (_container(runtime, ANCESTOR_DATASET, DATASET_INITIALIZER) if runtime else None) or {}
    uri = dataset.get("storageUri", "")
    env = _upsert(
        container.get("env") or [], [{"name": STORAGE_URI_ENV, "value": uri}] if uri else [], dataset.get("env") or []
    )
    return StageJob(env=tuple(env), storage_uri=uri, mounts=_mounts(container))


def _container(runtime: dict[str, Any], ancestor: str, name: str) -> dict[str, Any] | None:
    """The container ``name`` of the runtime's replicated job labelled with ``ancestor``."""
    for rjob in runtime["spec"]["template"]["spec"].get("replicatedJobs") or []:
        labels = (rjob.get("template", {}).get("metadata") or {}).get("labels") or {}
        if labels.get(ANCESTOR_LABEL) != ancestor:
            continue
        for container in rjob["template"]["spec"]["template"]["spec"].get("containers") or []:
            if container.get("name") == name:
                return container
    return None


def _upsert(*layers: Iterable[dict[str, Any]]) -> list[EnvEntry]:
    """Apply env lists in order, a later entry replacing an earlier one of the same name."""
    out: dict[str, EnvEntry] = {}
    for layer in layers:
        for item in layer:
            ref = (item.get("valueFrom") or {}).get("secretKeyRef")
            if ref is not None:
                out[item["name"]] = EnvEntry(item["name"], secret=(ref["name"], ref["key"]))
            else:
                out[item["name"]] = EnvEntry(item["name"], value=str(item.get("value", "")))
    return list(out.values())


def _mounts(container: Mapping[str, Any]) -> dict[str, str]:
    return {m["mountPath"]: m["name"] for m in container.get("volumeMounts") or []}


def _patched_mounts(trainjob: dict[str, Any], plan: JobPlan) -> dict[str, str]:
    """Mounts the TrainJob's runtime patches add to the trainer container (the checkpoint claim)."""
    found: dict[str, str] = {}
    for patch in trainjob["spec"].get("runtimePatches") or []:
        rjobs = (((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec") or {}).get(
            "replicatedJobs"
        ) or []
        for rjob in rjobs:
            if rjob.get("name") not in plan.trainer_rjobs:
                continue
            pod = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
            for container in (pod.get("spec") or {}).get("containers") or []:
                if container.get("name") == NODE:
                    found.update(_mounts(container))
    return found
