"""What a manifest becomes: the fields of one ``Runtime`` and one ``TrainingJob``, with origins.

Readers fill a :class:`Draft` in the order the spec models declare their fields, so the written
YAML follows the models (deterministic, as the docs show it). Every field set remembers the
manifest field it came from: a problem the spec validator finds in the result is reported at
the input's ``file:line:col`` (TS544).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainspec.compiler.engines import DEFAULT_ENGINE, Engine
from trainspec.dsl.spec.models import API_VERSION, Framework
from trainspec.migrate.source import Path, Source

#: Where a spec field sits in the written documents: ("Runtime" | "TrainingJob", *field path).
SpecPath = tuple[str | int, ...]

#: The order of the spec models' fields (camelCase): documents are written in this order.
RUNTIME_ORDER = (
    "framework",
    "scope",
    "image",
    "command",
    "env",
    "nodes",
    "maxNodes",
    "procsPerNode",
    "resourcesPerNode",
    "gpuResource",
    "accelerator",
    "sharedMemory",
    "network",
    "gang",
    "restarts",
    "scheduling",
    "dataSharding",
    "mpi",
    "engine",
    "external",
)
JOB_ORDER = (
    "runtime",
    "image",
    "command",
    "args",
    "env",
    "secretEnv",
    "nodes",
    "procsPerNode",
    "resourcesPerNode",
    "queue",
    "priority",
    "maxRunTime",
    "topology",
    "data",
    "checkpoint",
    "podLabels",
    "podAnnotations",
)


@dataclass
class Draft:
    """The specs one manifest becomes, before they are validated and written."""

    source: Source
    name: str
    namespace: str | None
    framework: Framework
    #: The engine the manifest ran on (what ``--target source`` records).
    engine: Engine
    runtime: dict[str, Any] = field(default_factory=dict)
    job: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    #: Why Trainer cannot run this job as it is (None: it can): elastic training, a Ray program.
    needs_engine: str | None = None
    #: The runtime to reference when the migration writes no Runtime (a TrainJob's cluster runtime).
    runtime_ref: str | None = None
    #: The Runtime's name when it is not the job's (a migrated TrainingRuntime keeps its own).
    runtime_own_name: str | None = None
    #: Spec field -> the manifest (and field) it came from.
    origins: dict[SpecPath, tuple[Source, Path]] = field(default_factory=dict)
    #: Other manifests read into this draft (a TrainJob's runtime).
    extra: list[Source] = field(default_factory=list)

    def set_runtime(self, path: tuple[str, ...], value: Any, origin: Path) -> None:
        """Set ``spec.<path>`` of the Runtime, remembering the manifest field ``origin``."""
        _put(self.runtime, path, value)
        self.origins[("Runtime", "spec", *path)] = (self.source, tuple(origin))

    def set_job(self, path: tuple[str, ...], value: Any, origin: Path) -> None:
        """Set ``spec.<path>`` of the TrainingJob, remembering the manifest field ``origin``."""
        _put(self.job, path, value)
        self.origins[("TrainingJob", "spec", *path)] = (self.source, tuple(origin))

    @property
    def runtime_name(self) -> str:
        """The Runtime's name: the job's own (each migrated job gets the runtime it ran with)."""
        return self.runtime_ref or self.runtime_own_name or self.name

    def documents(self, engine: Engine | None) -> list[dict[str, Any]]:
        """The Runtime (unless the job refers to an existing one) and the TrainingJob, as plain data.

        ``engine`` is recorded as the runtime's ``spec.engine`` (None or trainer: left out, the default).
        """
        docs: list[dict[str, Any]] = []
        if self.runtime_ref is None:
            spec = {"framework": self.framework.value, **self.runtime}
            if engine is not None and engine is not DEFAULT_ENGINE:
                spec["engine"] = engine.value
            docs.append(
                {
                    "apiVersion": API_VERSION,
                    "kind": "Runtime",
                    "metadata": {"name": self.runtime_name},
                    "spec": _ordered(spec, RUNTIME_ORDER),
                }
            )
        metadata: dict[str, Any] = {"name": self.name}
        if self.namespace:
            metadata["namespace"] = self.namespace
        if self.labels:
            metadata["labels"] = dict(sorted(self.labels.items()))
        if self.annotations:
            metadata["annotations"] = dict(sorted(self.annotations.items()))
        job = _ordered({"runtime": self.runtime_name, **self.job}, JOB_ORDER)
        docs.append({"apiVersion": API_VERSION, "kind": "TrainingJob", "metadata": metadata, "spec": job})
        return docs


def _put(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value


#: The field order of the nested spec parts (the models' order).
_NESTED_ORDER = {
    "resourcesPerNode": ("gpu", "cpu", "memory", "ephemeralStorage", "extra"),
    "network": ("env", "resources"),
    "scheduling": ("nodeSelector", "tolerations", "schedulerName", "priorityClassName", "volcanoQueue", "gangTimeout"),
    "mpi": ("sshAuthMountPath", "runLauncherAsNode", "runAsUser", "sshPort", "workerCommand"),
    "checkpoint": (
        "path",
        "size",
        "model",
        "keep",
        "storageClass",
        "accessMode",
        "claimName",
        "claimAccessMode",
        "uri",
    ),
    "nodes": ("min", "max", "maxRestarts"),
}


def _ordered(spec: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    rank = {name: index for index, name in enumerate(order)}
    out = {}
    for key in sorted(spec, key=lambda k: (rank.get(k, len(rank)), k)):
        value = spec[key]
        if isinstance(value, dict) and key in _NESTED_ORDER:
            value = _ordered(value, _NESTED_ORDER[key])
        out[key] = _sorted_maps(key, value)
    return out


#: Maps keyed by names the user chose (env names, labels, resources): sorted, so output is stable.
_NAME_MAPS = frozenset({"env", "secretEnv", "podLabels", "podAnnotations", "extra", "nodeSelector", "resources"})


def _sorted_maps(key: str, value: Any) -> Any:
    if isinstance(value, dict):
        items = sorted(value.items()) if key in _NAME_MAPS else value.items()
        return {k: _sorted_maps(k, v) for k, v in items}
    return value


__all__ = ["Draft", "SpecPath"]
