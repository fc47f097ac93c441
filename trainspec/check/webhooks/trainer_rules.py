"""Rules of Kubeflow Trainer's runtime plugins: what its TrainJob webhook rejects.

On every TrainJob create and update, Trainer's webhook builds the runtime as the TrainJob would
get it (the runtime template with the TrainJob's ``runtimePatches`` merged in) and runs the
``Validate`` step of every plugin. Re-implemented here, after kubeflow/trainer at the commit of
the shipped CRDs (v2.3.0 + 58 commits; file paths are that repository's):

* reserved env names, only under the ``mlPolicy`` source whose plugin sets them
  (``plugins/torch/torch.go``, ``plugins/mpi/mpi.go``, ``plugins/xgboost/xgboost.go``; the JAX,
  Flux and plain-ML plugins reserve none);
* ``mlPolicy.torch.envInjection`` targets name replicatedJobs and containers (or init
  containers) the runtime has (``plugins/torch/torch.go``);
* torchtune, when the TrainJob's command is exactly ``tune run`` (``plugins/torch/torchtune.go``):
  the model named by the runtime, multi-node only for Llama 3.3 70B, LoRA single-node, QLoRA
  rules, no runtime-managed config in ``args``;
* the init container ``flux-installer`` of the ``node`` replicatedJob is the Flux plugin's
  (``plugins/flux/flux.go``);
* with ``mpi.runLauncherAsNode`` and ``numNodes >= 2`` the runtime needs ``launcher`` and
  ``node`` (``plugins/mpi/mpi.go``);
* the Volcano queue annotation is not empty (``plugins/volcano/volcano.go``).

The rules that depend on the runtime alone also make every TrainJob that uses a runtime fail, so
they are reported on the runtime too (:func:`runtime_plugin_findings`). What stays undecided
offline: Volcano's PriorityClass existence, and every rule when only the runtime's name is known
(then the reserved names of every framework are a warning).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from trainspec.check._paths import join_path
from trainspec.dsl.diagnostics import Severity
from trainspec.dsl.framework.quantity import QuantityError, quantity_value
from trainspec.k8s.wellknown import (
    ANCESTOR_LABEL,
    ANCESTOR_TRAINER,
    LAUNCHER,
    NODE,
    TRAINER_RESERVED_ENV,
    VOLCANO_QUEUE_LABEL,
)

#: mlPolicy sources, in the order of the CRD's one-of rule.
POLICY_SOURCES = ("torch", "mpi", "jax", "xgboost", "flux")
#: mlPolicy source -> (plugin, env names its webhook step rejects in ``spec.trainer.env``).
RESERVED_ENV_BY_SOURCE: dict[str, tuple[str, tuple[str, ...]]] = {
    "torch": ("Torch", TRAINER_RESERVED_ENV["Torch"]),
    "mpi": ("MPI", TRAINER_RESERVED_ENV["MPI"]),
    "xgboost": ("XGBoost", TRAINER_RESERVED_ENV["XGBoost"]),
}
#: The init container the Flux plugin adds to the ``node`` replicatedJob.
FLUX_INSTALLER = "flux-installer"
#: Volcano's queue annotation on the runtime's JobSet template (or a runtime patch).
VOLCANO_QUEUE = VOLCANO_QUEUE_LABEL
#: Label a ClusterTrainingRuntime carries when it is deprecated (the webhook warns).
SUPPORT_LABEL = "trainer.kubeflow.org/support"

#: The command that makes the torch plugin treat a TrainJob as a torchtune run.
TORCHTUNE_ENTRYPOINT = ["tune", "run"]
#: Models the torchtune trainer supports, as ``<family>/<size>`` derived from the runtime name.
TORCHTUNE_MODELS = frozenset({"llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B"})
TORCHTUNE_MULTI_NODE = frozenset({"llama3_3/70B"})
TORCHTUNE_NO_QLORA = frozenset({"qwen2_5/1.5B"})
TORCHTUNE_QLORA_ONE_DEVICE = frozenset({"llama3_2/1B", "llama3_2/3B"})
#: Config keys the runtime sets in the trainer command; ``args`` must not override them.
TORCHTUNE_IMMUTABLE = frozenset(
    {"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file"}
)
_LORA_KEY = "model.lora_attn_modules"
_QUANTIZE_KEY = "model.quantize_base"
_DORA_KEY = "model.use_dora"

_PATCH_JOBSET = ("trainingRuntimeSpec", "template")
_POD = ("template", "spec", "template", "spec")


@dataclass(frozen=True)
class Finding:
    """One plugin rule broken: where (a manifest path) and why."""

    path: str
    message: str
    hint: str | None = None
    severity: Severity = Severity.ERROR


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        value = _dict(value).get(key)
    return value


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def policy_sources(runtime_spec: Mapping[str, Any]) -> list[str]:
    """The mlPolicy sources a runtime sets (at most one on a valid runtime; none = plain ML)."""
    policy = _dict(runtime_spec.get("mlPolicy"))
    return [s for s in POLICY_SOURCES if isinstance(policy.get(s), dict)]


def _rjobs(runtime_spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [r for r in _list(_dig(runtime_spec, "template", "spec", "replicatedJobs")) if isinstance(r, dict)]


def _names(pod: Mapping[str, Any], field: str) -> list[str]:
    return [str(c.get("name")) for c in _list(pod.get(field)) if isinstance(c, dict)]


# -- rules that depend on the runtime alone --------------------------------------------------------


def _injection_problems(spec: Mapping[str, Any], extra: Mapping[str, set[str]]) -> Iterator[tuple[str, str]]:
    """(path inside the runtime, message) per envInjection target the runtime lacks.

    ``extra`` holds container names a TrainJob's runtime patches add, by replicatedJob.
    """
    by_name = {str(r.get("name")): r for r in _rjobs(spec)}
    base = "spec.mlPolicy.torch.envInjection.targets"
    for t, target in enumerate(_list(_dig(spec, "mlPolicy", "torch", "envInjection", "targets"))):
        job = _dict(target).get("jobName")
        rjob = by_name.get(str(job))
        if rjob is None and str(job) not in extra:
            yield (
                join_path(base, t, "jobName"),
                (
                    f"envInjection target replicatedJob {job!r} is not in the runtime template "
                    f"(replicatedJobs: {', '.join(by_name)})"
                ),
            )
            continue
        pod = _dig(rjob, *_POD)
        present = set(_names(_dict(pod), "containers")) | set(_names(_dict(pod), "initContainers"))
        present |= extra.get(str(job), set())
        for c, name in enumerate(_list(_dict(target).get("containerNames"))):
            if name not in present:
                yield (
                    join_path(base, t, "containerNames", c),
                    (
                        f"envInjection target container {name!r} is not in replicatedJob {job!r} of the "
                        f"runtime template (containers and init containers: {', '.join(sorted(present))})"
                    ),
                )


def _flux_problems(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    if "flux" not in policy_sources(spec):
        return
    for i, rjob in enumerate(_rjobs(spec)):
        if rjob.get("name") != NODE:
            continue  # the plugin looks at the replicatedJob named node only
        for k, name in enumerate(_names(_dict(_dig(rjob, *_POD)), "initContainers")):
            if name == FLUX_INSTALLER:
                yield (
                    join_path("spec.template.spec.replicatedJobs", i, *_POD, "initContainers", k, "name"),
                    (
                        f"init container {FLUX_INSTALLER!r} of replicatedJob 'node' is reserved by Trainer's "
                        "Flux plugin (mlPolicy.flux), which adds it itself"
                    ),
                )


def _volcano_problem(annotations: Any) -> bool:
    return _dict(annotations).get(VOLCANO_QUEUE, None) == ""


def runtime_plugin_findings(runtime: Mapping[str, Any]) -> Iterator[Finding]:
    """Plugin rules a (Cluster)TrainingRuntime breaks by itself.

    The runtime webhook accepts such a runtime; Trainer's TrainJob webhook then rejects every
    TrainJob that references it, which is what the message says.
    """
    spec = _dict(runtime.get("spec"))
    every = "Trainer's webhook rejects every TrainJob that uses this runtime: "
    if "torch" in policy_sources(spec):
        for path, message in _injection_problems(spec, {}):
            yield Finding(
                path,
                every + message + " (torch plugin)",
                hint="add the container to that replicatedJob, or drop it from containerNames",
            )
    for path, message in _flux_problems(spec):
        yield Finding(path, every + message, hint="rename the init container")
    if isinstance(_dig(spec, "podGroupPolicy", "volcano"), dict) and _volcano_problem(
        _dig(spec, "template", "metadata", "annotations")
    ):
        yield Finding(
            join_path("spec.template.metadata.annotations", VOLCANO_QUEUE),
            every + f"the Volcano queue annotation {VOLCANO_QUEUE!r} is empty (Volcano plugin)",
            hint="name a Volcano queue, or remove the annotation for the default queue",
        )
    labels = _dict(_dict(runtime.get("metadata")).get("labels"))
    if runtime.get("kind") == "ClusterTrainingRuntime" and labels.get(SUPPORT_LABEL) == "deprecated":
        yield Finding(
            join_path("metadata.labels", SUPPORT_LABEL),
            "Trainer's webhook warns: this ClusterTrainingRuntime is marked deprecated and will be "
            "removed in a future Trainer release",
            severity=Severity.WARNING,
        )


# -- rules on a TrainJob ----------------------------------------------------------------------------


class _Merged:
    """What a TrainJob's runtime patches add to the runtime (names by replicatedJob)."""

    def __init__(self, trainjob_spec: Mapping[str, Any]) -> None:
        self.containers: dict[str, set[str]] = {}
        #: (replicatedJob, init container name, path in the TrainJob)
        self.init_containers: list[tuple[str, str, str]] = []
        #: (annotation value, path in the TrainJob)
        self.annotations: list[tuple[Any, str]] = []
        for p, patch in enumerate(_list(trainjob_spec.get("runtimePatches"))):
            base = join_path("spec.runtimePatches", p, *_PATCH_JOBSET)
            annotations = _dict(_dig(patch, *_PATCH_JOBSET, "metadata", "annotations"))
            if VOLCANO_QUEUE in annotations:
                self.annotations.append(
                    (annotations[VOLCANO_QUEUE], join_path(base, "metadata", "annotations", VOLCANO_QUEUE))
                )
            for j, rjob in enumerate(_list(_dig(patch, *_PATCH_JOBSET, "spec", "replicatedJobs"))):
                name = str(_dict(rjob).get("name"))
                pod = _dict(_dig(rjob, *_POD))
                names = self.containers.setdefault(name, set())
                names.update(_names(pod, "containers"), _names(pod, "initContainers"))
                for k, init in enumerate(_names(pod, "initContainers")):
                    path = join_path(base, "spec", "replicatedJobs", j, *_POD, "initContainers", k, "name")
                    self.init_containers.append((name, init, path))


def _gpus(resources: Any) -> int:
    """GPUs per node as Trainer counts them: the first resource whose name has "gpu", requests first."""

    def count(amounts: Any) -> int:
        for name, amount in _dict(amounts).items():
            if "gpu" in str(name).lower():
                try:
                    return math.ceil(quantity_value(amount))
                except (QuantityError, TypeError, ValueError):
                    return 0  # a schema error (TS500) already
        return 0

    requests, limits = count(_dict(resources).get("requests")), count(_dict(resources).get("limits"))
    return requests or limits


def _runtime_resources(runtime_spec: Mapping[str, Any]) -> Any:
    for rjob in _rjobs(runtime_spec):
        labels = _dict(_dig(rjob, "template", "metadata", "labels"))
        if rjob.get("name") != NODE and labels.get(ANCESTOR_LABEL) != ANCESTOR_TRAINER:
            continue
        for container in _list(_dig(rjob, *_POD, "containers")):
            if _dict(container).get("name") == NODE and isinstance(_dict(container).get("resources"), dict):
                return container["resources"]
    return None


def torchtune_model(runtime_name: str) -> str:
    """``torchtune-llama3.2-1b`` -> ``llama3_2/1B``; "" when the name has not three parts."""
    parts = runtime_name.split("-")
    if len(parts) != 3:
        return ""
    return f"{parts[1].replace('.', '_')}/{parts[2].upper()}"


def _flag(args: list[str], key: str) -> bool:
    """A ``key=true`` argument (any case), as the plugin reads it: ``key`` may be part of the name."""
    for arg in args:
        name, eq, value = arg.partition("=")
        if eq and key in name and value.strip().lower() == "true":
            return True
    return False


def _torchtune(tj_spec: Mapping[str, Any], runtime_spec: Mapping[str, Any]) -> Iterator[Finding]:
    trainer = _dict(tj_spec.get("trainer"))
    name = str(_dig(tj_spec, "runtimeRef", "name"))
    args = [a for a in _list(trainer.get("args")) if isinstance(a, str)]
    model = torchtune_model(name)
    why = "Trainer's webhook (torch plugin, torchtune) rejects this TrainJob: "
    if model not in TORCHTUNE_MODELS:
        yield Finding(
            "spec.runtimeRef.name",
            why
            + (
                f"runtime {name!r} names model {model!r}, which is not a supported pretrained model"
                if model
                else f"runtime name {name!r} names no supported pretrained model "
                "(torchtune runtimes are named torchtune-<model>-<size>)"
            ),
            hint=f"supported: {', '.join(sorted(TORCHTUNE_MODELS))} (runtime names like torchtune-llama3.2-1b)",
        )
    nodes = _int(trainer.get("numNodes"), 1)
    if nodes > 1 and model not in TORCHTUNE_MULTI_NODE:
        yield Finding(
            "spec.trainer.numNodes",
            why + f"numNodes must be 1 for model {model!r}, got {nodes}",
            hint=f"multi-node torchtune runs only for {', '.join(sorted(TORCHTUNE_MULTI_NODE))}",
        )
    lora = any(_LORA_KEY in a for a in args)
    qlora = not _flag(args, _DORA_KEY) and _flag(args, _QUANTIZE_KEY)
    procs = trainer.get("numProcPerNode")
    # The TrainJob's resourcesPerNode replaces the runtime's here (no key-by-key merge).
    resources = trainer.get("resourcesPerNode")
    if resources is None:
        resources = _runtime_resources(runtime_spec)
    one_device = nodes == 1 and (_int(procs, 0) == 1 or _gpus(resources) == 1)
    # The recipe the plugin picks decides the config; QLoRA has a single-device and a distributed one.
    if nodes == 1 and qlora:
        if model in TORCHTUNE_NO_QLORA:
            yield Finding("spec.runtimeRef.name", why + f"QLoRA is not supported for model {model!r}")
        if not one_device and model in TORCHTUNE_QLORA_ONE_DEVICE:
            shown = procs if procs is not None else "auto"
            yield Finding(
                "spec.trainer.numProcPerNode",
                why + f"numProcPerNode must be auto or 1 for model {model!r} with QLoRA, got {shown!r}",
            )
            yield Finding(
                "spec.trainer.resourcesPerNode",
                why + f"resourcesPerNode must ask for exactly 1 GPU for model {model!r} with QLoRA, "
                f"found {_gpus(resources)}",
            )
    if nodes > 1 and (lora or qlora):
        yield Finding(
            "spec.trainer.numNodes",
            why + f"LoRA fine-tuning is not supported for multi-node training (numNodes {nodes})",
            hint="run LoRA/QLoRA on one node, or drop the LoRA arguments",
        )
    for i, arg in enumerate(_list(trainer.get("args"))):
        key = str(arg).split("=", 1)[0]
        if key in TORCHTUNE_IMMUTABLE:
            yield Finding(
                join_path("spec.trainer.args", i),
                why + f"args must not set {key!r}: it is managed by the runtime",
                hint="the runtime's command sets it; remove the argument",
            )


def _reserved_env(tj_spec: Mapping[str, Any], sources: list[str] | None, runtime: str) -> Iterator[Finding]:
    """Reserved names in ``spec.trainer.env``; ``sources`` None when the runtime's body is unknown."""
    families = (
        RESERVED_ENV_BY_SOURCE
        if sources is None
        else {s: RESERVED_ENV_BY_SOURCE[s] for s in sources if s in RESERVED_ENV_BY_SOURCE}
    )
    for index, env in enumerate(_list(_dig(tj_spec, "trainer", "env"))):
        name = _dict(env).get("name")
        for source, (plugin, names) in families.items():
            if name not in names:
                continue
            path = join_path("spec.trainer.env", index, "name")
            if sources is None:
                yield Finding(
                    path,
                    f"environment variable {name!r} is reserved by Kubeflow Trainer ({plugin}) under "
                    f"mlPolicy.{source}: Trainer's webhook rejects it if {runtime} is a {source} runtime "
                    "(its definition is not among the files, so its framework is not known)",
                    hint="rename the variable, or pass the runtime's definition (--cluster) to decide",
                    severity=Severity.WARNING,
                )
            else:
                yield Finding(
                    path,
                    f"environment variable {name!r} is reserved by Kubeflow Trainer ({plugin}) under "
                    f"mlPolicy.{source}: its {source} plugin sets it, and Trainer's webhook rejects a "
                    "TrainJob that sets it",
                    hint="rename the variable",
                )


def trainjob_plugin_findings(
    trainjob: Mapping[str, Any], runtime: Mapping[str, Any] | None, runtime_label: str
) -> Iterator[Finding]:
    """Plugin rules for ``trainjob`` on ``runtime`` (None: only the runtime's name is known).

    ``runtime_label`` names the runtime in messages (``ClusterTrainingRuntime 'x'``).
    """
    tj_spec = _dict(trainjob.get("spec"))
    if runtime is None:
        yield from _reserved_env(tj_spec, None, runtime_label)
        return
    spec = _dict(runtime.get("spec"))
    sources = policy_sources(spec)
    yield from _reserved_env(tj_spec, sources, runtime_label)
    merged = _Merged(tj_spec)
    trainer = tj_spec.get("trainer")
    rejects = "Trainer's webhook rejects this TrainJob: "
    if "torch" in sources:
        for _path, message in _injection_problems(spec, merged.containers):
            yield Finding("spec.runtimeRef.name", rejects + f"{runtime_label}: {message} (torch plugin)")
        if isinstance(trainer, dict) and trainer.get("command") == TORCHTUNE_ENTRYPOINT:
            yield from _torchtune(tj_spec, spec)
    if "flux" in sources:
        in_runtime = list(_flux_problems(spec))
        for _path, message in in_runtime:
            yield Finding("spec.runtimeRef.name", rejects + f"{runtime_label}: {message}")
        for rjob, name, path in merged.init_containers:
            # A patch entry merges into the runtime's container of that name: one finding, not two.
            if rjob == NODE and name == FLUX_INSTALLER and not in_runtime:
                yield Finding(
                    path,
                    rejects + f"init container {FLUX_INSTALLER!r} of replicatedJob 'node' is "
                    "reserved by Trainer's Flux plugin (mlPolicy.flux)",
                )
    if "mpi" in sources:
        yield from _mpi_launcher(tj_spec, spec)
    if isinstance(_dig(spec, "podGroupPolicy", "volcano"), dict):
        annotations = _dig(spec, "template", "metadata", "annotations")
        patched = merged.annotations[-1] if merged.annotations else None  # the last patch wins
        if patched is not None and patched[0] == "":
            yield Finding(
                patched[1], rejects + f"the Volcano queue annotation {VOLCANO_QUEUE!r} is empty (Volcano plugin)"
            )
        elif patched is None and _volcano_problem(annotations):
            yield Finding(
                "spec.runtimeRef.name",
                rejects + f"{runtime_label} sets the Volcano queue annotation {VOLCANO_QUEUE!r} to '' (Volcano plugin)",
            )


def _mpi_launcher(tj_spec: Mapping[str, Any], spec: Mapping[str, Any]) -> Iterator[Finding]:
    trainer = tj_spec.get("trainer")
    if not isinstance(trainer, dict) or not _dig(spec, "mlPolicy", "mpi", "runLauncherAsNode"):
        return
    # Only the TrainJob's numNodes counts here (default 1), not the runtime's mlPolicy.numNodes.
    nodes = _int(trainer.get("numNodes"), 1)
    names = {r.get("name") for r in _rjobs(spec)}
    if nodes >= 2 and not {LAUNCHER, NODE} <= names:
        missing = sorted({LAUNCHER, NODE} - names)
        yield Finding(
            "spec.trainer.numNodes",
            f"Trainer's webhook (MPI plugin) rejects this TrainJob: an MPI runtime with runLauncherAsNode "
            f"and numNodes {nodes} needs replicatedJobs 'launcher' and 'node'; missing {missing}",
        )


__all__ = [
    "FLUX_INSTALLER",
    "Finding",
    "POLICY_SOURCES",
    "RESERVED_ENV_BY_SOURCE",
    "TORCHTUNE_MODELS",
    "policy_sources",
    "runtime_plugin_findings",
    "torchtune_model",
    "trainjob_plugin_findings",
]
