"""Admission-webhook rules over a set of manifests (so TrainJobs can find their runtimes).

TrainJob rules of the Trainer webhook, re-implemented:

* the referenced runtime exists (``runtimeRef.kind`` ClusterTrainingRuntime by default, or a
  TrainingRuntime in the TrainJob's namespace; ``apiGroup`` trainer.kubeflow.org), either among
  the manifests or in ``known_runtimes``;
* no framework-reserved env names in ``spec.trainer.env`` (all families are checked, whatever
  the runtime's framework, so a runtime swap cannot turn a spec invalid);
* ``spec.initializer.dataset``/``model`` need a replicatedJob of that name with a container of
  that name mounting a volume named ``initializer``;
* ``runtimePatches``: domain-prefixed manager; patched replicatedJobs and containers exist in
  the runtime; no ``env`` on the containers ``node``/``dataset-initializer``/``model-initializer``;
* MPI with ``runLauncherAsNode`` and two or more nodes needs ``launcher`` and ``node`` jobs;
* the JobSet the TrainJob would produce keeps every pod name within 63 characters.

Runtime and JobSet rules are in :mod:`.runtime_rules`. Two list limits that are also webhook
rules upstream (one runtime patch per ``manager``, at most 5 ``dependsOn``) are already in the
CRD schemas (list-map keys, ``maxItems``) and are reported there as TS500, not twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.k8s.wellknown import (
    ANCESTOR_TRAINER, DATASET_INITIALIZER, LAUNCHER, MODEL_INITIALIZER, NODE, SHARD_VOLUME, TRAINER_GROUP,
    TRAINER_RESERVED_ENV,
)

from ._paths import join_path
from .core import subdomain_problem
from .runtime_rules import (
    ancestor_of,
    check_jobset,
    check_runtime,
    claim_name_problems,
    container_names,
    pod_name_problems,
    rjobs_of,
)

RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
#: Environment variables the Trainer controller sets itself, by framework.
RESERVED_ENV = TRAINER_RESERVED_ENV
_RESERVED = {name: family for family, names in RESERVED_ENV.items() for name in names}
_NO_PATCH_ENV = (NODE, DATASET_INITIALIZER, MODEL_INITIALIZER)
_HTTP_PATH = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:@]+$")
_PATCH_RJOBS = ("trainingRuntimeSpec", "template", "spec", "replicatedJobs")


@dataclass(frozen=True)
class RuntimeEntry:
    """A runtime a TrainJob may reference; ``body`` is None when only its name is known."""

    kind: str
    name: str
    namespace: str | None
    body: Mapping[str, Any] | None = None
    file: str | None = None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_trainer(manifest: Mapping[str, Any], kinds: tuple[str, ...]) -> bool:
    return (
        str(manifest.get("apiVersion", "")).startswith(TRAINER_GROUP + "/") and manifest.get("kind") in kinds
    )


def runtime_index(
    manifests: Sequence[tuple[str | None, Any]], known_runtimes: Iterable[str | Mapping[str, Any]] = ()
) -> list[RuntimeEntry]:
    """Runtimes among ``manifests`` plus ``known_runtimes``.

    A known runtime is a runtime manifest (used for the checks but not itself validated), or a
    name: ``"torch-distributed"`` for a ClusterTrainingRuntime, ``"namespace/name"`` for a
    TrainingRuntime. Names only allow the existence check.
    """
    known_runtimes = list(known_runtimes)  # iterated twice below
    entries: list[RuntimeEntry] = []
    sources: list[tuple[str | None, Any]] = [
        *manifests,
        *((None, k) for k in known_runtimes if isinstance(k, Mapping)),
    ]
    for file, manifest in sources:
        if isinstance(manifest, Mapping) and _is_trainer(manifest, RUNTIME_KINDS):
            meta = _dict(manifest.get("metadata"))
            namespace = meta.get("namespace") if manifest["kind"] == "TrainingRuntime" else None
            entries.append(RuntimeEntry(manifest["kind"], str(meta.get("name")), namespace, manifest, file))
    for known in known_runtimes:
        if isinstance(known, str):
            namespace, slash, name = known.rpartition("/")
            kind = "TrainingRuntime" if slash else "ClusterTrainingRuntime"
            entries.append(RuntimeEntry(kind, name, namespace or None))
    return entries


def _find_runtime(
    entries: list[RuntimeEntry], kind: str, name: str, namespace: str | None
) -> RuntimeEntry | None:
    matches = [e for e in entries if e.kind == kind and e.name == name]
    if kind == "TrainingRuntime":
        # Same namespace; a manifest without one lands in whatever namespace it is applied to.
        matches = [e for e in matches if e.namespace == namespace or e.namespace is None or namespace is None]
    with_body = [e for e in matches if e.body is not None]
    return (with_body or matches)[0] if matches else None


def _manager_problem(manager: Any) -> str | None:
    host, slash, path = str(manager).partition("/")
    if not slash or not host or not path:
        return "must be a domain-prefixed path such as 'example.com/my-tool'"
    problem = subdomain_problem(host)
    if problem:
        return f"domain {host!r} {problem}"
    if not _HTTP_PATH.match(path):
        return f"path part {path!r} contains characters not allowed in a URL path"
    return None


class _TrainJobCheck:
    def __init__(self, tj: Mapping[str, Any], file: str | None, runtimes: list[RuntimeEntry]) -> None:
        self.tj, self.file, self.runtimes = tj, file, runtimes
        self.meta = _dict(tj.get("metadata"))
        self.spec = _dict(tj.get("spec"))
        self.out: list[Diagnostic] = []
        self.related: tuple[Related, ...] = ()

    def error(self, message: str, path: str, hint: str | None = None) -> None:
        self.out.append(
            Diagnostic(
                code="TS503", message=message, path=path, file=self.file, hint=hint, related=self.related
            )
        )

    def run(self) -> list[Diagnostic]:
        self.check_env()
        runtime = self.resolve()
        if runtime is not None and runtime.body is not None:
            self.related = (Related(f"runtime {runtime.kind} {runtime.name!r}", file=runtime.file),)
            body_spec = _dict(runtime.body.get("spec"))
            rjobs = rjobs_of(_dict(_dict(body_spec.get("template")).get("spec")))
            self.check_initializers(rjobs, runtime.name)
            self.check_patches(rjobs)
            self.check_mpi_and_names(body_spec, rjobs)
        return self.out

    def resolve(self) -> RuntimeEntry | None:
        ref = _dict(self.spec.get("runtimeRef"))
        name, kind = ref.get("name"), ref.get("kind", "ClusterTrainingRuntime")
        group = ref.get("apiGroup", TRAINER_GROUP)
        if not isinstance(name, str):
            return None  # missing name is a schema error
        if group != TRAINER_GROUP or kind not in RUNTIME_KINDS:
            self.error(
                f"runtimeRef {group}/{kind} is not supported; use apiGroup {TRAINER_GROUP} with kind "
                "ClusterTrainingRuntime or TrainingRuntime",
                "spec.runtimeRef",
            )
            return None
        found = _find_runtime(self.runtimes, kind, name, self.meta.get("namespace"))
        if found is None:
            where = " in the TrainJob's namespace" if kind == "TrainingRuntime" else ""
            self.error(
                f"referenced runtime {kind} {name!r} does not exist{where}; the webhook rejects a TrainJob "
                "whose runtime is missing",
                "spec.runtimeRef.name",
                hint="apply the runtime first, or pass it to the checker as a known runtime",
            )
        return found

    def check_env(self) -> None:
        for index, env in enumerate(_list(_dict(self.spec.get("trainer")).get("env"))):
            name = _dict(env).get("name")
            if name in _RESERVED:
                self.error(
                    f"environment variable {name!r} is reserved by Kubeflow Trainer ({_RESERVED[name]}); "
                    "the controller sets it",
                    join_path("spec.trainer.env", index, "name"),
                )

    def check_initializers(self, rjobs: list[dict[str, Any]], runtime_name: str) -> None:
        initializer = _dict(self.spec.get("initializer"))
        for field, step in (("dataset", DATASET_INITIALIZER), ("model", MODEL_INITIALIZER)):
            if initializer.get(field) is None:
                continue
            path = join_path("spec.initializer", field)
            rjob = next((r for r in rjobs if r.get("name") == step), None)
            if rjob is None:
                self.error(
                    f"spec.initializer.{field} is set but runtime {runtime_name!r} has no replicatedJob "
                    f"named {step!r}",
                    path,
                )
                continue
            pod = _dict(_dict(_dict(_dict(rjob.get("template")).get("spec")).get("template")).get("spec"))
            container = next((c for c in _list(pod.get("containers")) if _dict(c).get("name") == step), None)
            if container is None:
                self.error(
                    f"spec.initializer.{field} is set but replicatedJob {step!r} of runtime {runtime_name!r} "
                    f"has no container named {step!r}",
                    path,
                )
            elif not any(_dict(m).get("name") == SHARD_VOLUME for m in _list(container.get("volumeMounts"))):
                self.error(
                    f"spec.initializer.{field} is set but container {step!r} of runtime {runtime_name!r} "
                    f"has no volumeMount named {SHARD_VOLUME!r}",
                    path,
                )

    def check_patches(self, rjobs: list[dict[str, Any]]) -> None:
        by_name = {str(r.get("name")): r for r in rjobs}
        for index, patch in enumerate(_list(self.spec.get("runtimePatches"))):
            base = join_path("spec.runtimePatches", index)
            problem = _manager_problem(_dict(patch).get("manager"))
            if problem:
                self.error(
                    f"runtimePatches manager {_dict(patch).get('manager')!r} {problem}",
                    join_path(base, "manager"),
                )
            node: Any = patch
            for key in _PATCH_RJOBS:
                node = _dict(node).get(key)
            for j, prjob in enumerate(_list(node)):
                rpath = join_path(base, *_PATCH_RJOBS, j)
                name = _dict(prjob).get("name")
                if name not in by_name:
                    self.error(
                        f"runtime patch targets replicatedJob {name!r}, which the runtime does not have",
                        join_path(rpath, "name"),
                        hint=f"replicatedJobs: {', '.join(by_name)}",
                    )
                    continue
                pod = _dict(
                    _dict(_dict(_dict(_dict(prjob).get("template")).get("spec")).get("template")).get("spec")
                )
                for field in ("containers", "initContainers"):
                    existing = container_names(by_name[str(name)], field)
                    for k, container in enumerate(_list(pod.get(field))):
                        cpath = join_path(rpath, "template", "spec", "template", "spec", field, k)
                        cname = _dict(container).get("name")
                        if cname not in existing:
                            self.error(
                                f"runtime patch targets {field[:-1]} {cname!r} in replicatedJob {name!r}, "
                                f"which has only {existing}",
                                join_path(cpath, "name"),
                            )
                        if field == "containers" and cname in _NO_PATCH_ENV and "env" in _dict(container):
                            self.error(
                                f"runtime patches must not set env on container {cname!r}; use "
                                f"{'spec.trainer.env' if cname == NODE else 'spec.initializer.*.env'}",
                                join_path(cpath, "env"),
                            )

    def check_mpi_and_names(self, runtime_spec: Mapping[str, Any], rjobs: list[dict[str, Any]]) -> None:
        policy = _dict(runtime_spec.get("mlPolicy"))
        trainer = _dict(self.spec.get("trainer"))
        nodes = trainer.get("numNodes", policy.get("numNodes", 1))
        nodes = nodes if isinstance(nodes, int) and not isinstance(nodes, bool) else 1
        mpi = policy.get("mpi") if isinstance(policy.get("mpi"), dict) else None
        launcher_as_node = bool(mpi and mpi.get("runLauncherAsNode"))
        names = {r.get("name") for r in rjobs}
        if launcher_as_node and nodes >= 2 and not {LAUNCHER, NODE} <= names:
            missing = sorted({LAUNCHER, NODE} - names)
            self.error(
                f"MPI runtime with runLauncherAsNode and numNodes {nodes} needs replicatedJobs 'launcher' "
                f"and 'node'; missing {missing}",
                "spec.trainer.numNodes" if "numNodes" in trainer else "spec.runtimeRef.name",
            )

        def pods_of(rjob: dict[str, Any]) -> int:
            if mpi is not None and rjob.get("name") == LAUNCHER:
                return 1
            if mpi is not None and rjob.get("name") == NODE:
                return nodes - 1 if launcher_as_node else nodes
            if mpi is None and ancestor_of(rjob) == ANCESTOR_TRAINER:
                return nodes
            value = _dict(_dict(rjob.get("template")).get("spec")).get("parallelism", 1)
            return value if isinstance(value, int) else 1

        name = self.meta.get("name")
        if isinstance(name, str):
            for _index, _pod, message in pod_name_problems(name, rjobs, pods_of):
                self.error(message, "metadata.name")
            for message in claim_name_problems(name, _dict(_dict(runtime_spec.get("template")).get("spec"))):
                self.error(message, "metadata.name")


def check_webhooks(
    manifests: Sequence[tuple[str | None, Any]],
    *,
    known_runtimes: Iterable[str | Mapping[str, Any]] = (),
    policy: bool = True,
) -> list[Diagnostic]:
    """TS503 findings for every TrainJob, runtime and JobSet among ``manifests``.

    ``manifests`` are ``(source file, manifest)`` pairs. ``policy=False`` drops the trainspec
    policy checks on runtimes (framework label, explicit mlPolicy, no disabled webhook).
    """
    entries = runtime_index(manifests, known_runtimes)
    out: list[Diagnostic] = []
    for file, manifest in manifests:
        if not isinstance(manifest, Mapping):
            continue
        if _is_trainer(manifest, ("TrainJob",)):
            out.extend(_TrainJobCheck(manifest, file, entries).run())
        elif _is_trainer(manifest, RUNTIME_KINDS):
            out.extend(check_runtime(manifest, file, policy=policy))
        elif (
            str(manifest.get("apiVersion", "")).startswith("jobset.x-k8s.io/")
            and manifest.get("kind") == "JobSet"
        ):
            out.extend(check_jobset(manifest, file))
    return out


__all__ = ["RESERVED_ENV", "RuntimeEntry", "check_webhooks", "runtime_index"]
