"""Admission-webhook rules over a set of manifests (so TrainJobs can find their runtimes).

TrainJob rules of the Trainer webhook, re-implemented:

* the referenced runtime exists (``runtimeRef.kind`` ClusterTrainingRuntime by default, or a
  TrainingRuntime in the TrainJob's namespace; ``apiGroup`` trainer.kubeflow.org), either among
  the manifests or in ``known_runtimes``;
* the runtime plugins' rules (:mod:`.trainer_rules`): reserved env names of the runtime's
  ``mlPolicy`` source only, envInjection targets, torchtune, the Flux installer, MPI's
  launcher, Volcano's queue annotation;
* ``spec.initializer.dataset``/``model`` need a replicatedJob of that name with a container of
  that name mounting a volume named ``initializer``;
* ``runtimePatches``: domain-prefixed manager; patched replicatedJobs and containers exist in
  the runtime; no ``env`` on the containers ``node``/``dataset-initializer``/``model-initializer``;
* the JobSet webhook's rules on the JobSet Trainer creates for the TrainJob (its name, node
  count and runtime patches): :mod:`.jobset_trainer`.

Runtime and JobSet rules are in :mod:`.runtime_rules`. Two list limits that are also webhook
rules upstream (one runtime patch per ``manager``, at most 5 ``dependsOn``) are already in the
CRD schemas (list-map keys, ``maxItems``) and are reported there as TS500, not twice.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainspec.check._paths import join_path
from trainspec.check.webhooks.jobset_trainer import check_jobset, check_runtime_jobset, check_trainjob_jobset
from trainspec.check.webhooks.runtime_rules import (
    check_runtime,
    container_names,
    rjobs_of,
)
from trainspec.check.webhooks.trainer_rules import trainjob_plugin_findings
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.k8s.name_rules import subdomain_problem
from trainspec.k8s.wellknown import (
    DATASET_INITIALIZER,
    JOBSET_GROUP,
    MODEL_INITIALIZER,
    NODE,
    SHARD_VOLUME,
    TRAINER_GROUP,
    TRAINER_RESERVED_ENV,
)

RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
#: Environment variables the Trainer controller sets itself, by framework.
RESERVED_ENV = TRAINER_RESERVED_ENV
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
    #: The runtime is among the checked manifests (not only a known runtime).
    checked: bool = False


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_trainer(manifest: Mapping[str, Any], kinds: tuple[str, ...]) -> bool:
    return str(manifest.get("apiVersion", "")).startswith(TRAINER_GROUP + "/") and manifest.get("kind") in kinds


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
    for index, (file, manifest) in enumerate(sources):
        if isinstance(manifest, Mapping) and _is_trainer(manifest, RUNTIME_KINDS):
            meta = _dict(manifest.get("metadata"))
            namespace = meta.get("namespace") if manifest["kind"] == "TrainingRuntime" else None
            entries.append(
                RuntimeEntry(
                    manifest["kind"], str(meta.get("name")), namespace, manifest, file, checked=index < len(manifests)
                )
            )
    for known in known_runtimes:
        if isinstance(known, str):
            namespace, slash, name = known.rpartition("/")
            kind = "TrainingRuntime" if slash else "ClusterTrainingRuntime"
            entries.append(RuntimeEntry(kind, name, namespace or None))
    return entries


def _find_runtime(entries: list[RuntimeEntry], kind: str, name: str, namespace: str | None) -> RuntimeEntry | None:
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
    def __init__(
        self,
        tj: Mapping[str, Any],
        file: str | None,
        runtimes: list[RuntimeEntry],
        jobset_gates: Collection[str] = (),
        memo: dict[int, Any] | None = None,
    ) -> None:
        self.tj, self.file, self.runtimes, self.jobset_gates = tj, file, runtimes, jobset_gates
        self.memo = memo  # one check's JobSet findings per runtime, shared by its TrainJobs
        self.meta = _dict(tj.get("metadata"))
        self.spec = _dict(tj.get("spec"))
        self.out: list[Diagnostic] = []
        self.related: tuple[Related, ...] = ()

    def error(self, message: str, path: str, hint: str | None = None) -> None:
        if "webhook" not in message:
            # Trainer's own JobSet plugin decides these (initializers, runtime patches).
            message = f"Trainer's webhook rejects this TrainJob: {message}"
        self.out.append(
            Diagnostic(
                code=codes.WEBHOOK_RULE, message=message, path=path, file=self.file, hint=hint, related=self.related
            )
        )

    def run(self) -> list[Diagnostic]:
        runtime = self.resolve()
        body = runtime.body if runtime is not None else None
        if runtime is not None and body is not None:
            self.related = (Related(f"runtime {runtime.kind} {runtime.name!r}", file=runtime.file),)
        self.check_plugins(runtime, body)
        if runtime is not None and body is not None:
            body_spec = _dict(body.get("spec"))
            rjobs = rjobs_of(_dict(_dict(body_spec.get("template")).get("spec")))
            self.check_initializers(rjobs, runtime.name)
            self.check_patches(rjobs)
            self.check_jobset(runtime)
        return self.out

    def resolve(self) -> RuntimeEntry | None:
        ref = _dict(self.spec.get("runtimeRef"))
        name, kind = ref.get("name"), ref.get("kind", "ClusterTrainingRuntime")
        group = ref.get("apiGroup", TRAINER_GROUP)
        if not isinstance(name, str):
            return None  # missing name is a schema error
        if group != TRAINER_GROUP or kind not in RUNTIME_KINDS:
            self.error(
                f"runtimeRef {group}/{kind} is not supported: Trainer's webhook rejects it (unsupported "
                f"runtime); use apiGroup {TRAINER_GROUP} with kind ClusterTrainingRuntime or TrainingRuntime",
                "spec.runtimeRef",
            )
            return None
        found = _find_runtime(self.runtimes, kind, name, self.meta.get("namespace"))
        if found is None:
            where = " in the TrainJob's namespace" if kind == "TrainingRuntime" else ""
            self.error(
                f"referenced runtime {kind} {name!r} does not exist{where}; Trainer's webhook rejects a "
                "TrainJob whose runtime is missing",
                "spec.runtimeRef.name",
                hint="apply the runtime first, or pass it to the checker as a known runtime",
            )
        return found

    def check_plugins(self, runtime: RuntimeEntry | None, body: Mapping[str, Any] | None) -> None:
        """The runtime plugins' rules (:mod:`.trainer_rules`); reserved env names only warn
        when the runtime's definition is unknown."""
        ref = _dict(self.spec.get("runtimeRef"))
        if runtime is not None:
            label = f"{runtime.kind} {runtime.name!r}"
        else:
            label = f"{ref.get('kind', 'ClusterTrainingRuntime')} {ref.get('name')!r}"
        for finding in trainjob_plugin_findings(self.tj, body, label):
            self.out.append(
                Diagnostic(
                    code=codes.WEBHOOK_RULE,
                    message=finding.message,
                    path=finding.path,
                    file=self.file,
                    hint=finding.hint,
                    severity=finding.severity,
                    related=self.related,
                )
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
                    f"spec.initializer.{field} is set but runtime {runtime_name!r} has no replicatedJob named {step!r}",
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
                pod = _dict(_dict(_dict(_dict(_dict(prjob).get("template")).get("spec")).get("template")).get("spec"))
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

    def check_jobset(self, runtime: RuntimeEntry) -> None:
        """The JobSet webhook's rules on the JobSet Trainer creates for this TrainJob."""
        if runtime.body is not None:
            self.out.extend(
                check_trainjob_jobset(
                    self.tj,
                    self.file,
                    runtime.body,
                    runtime_checked=runtime.checked,
                    related=self.related,
                    gates=self.jobset_gates,
                    memo=self.memo,
                )
            )


def check_webhooks(
    manifests: Sequence[tuple[str | None, Any]],
    *,
    known_runtimes: Iterable[str | Mapping[str, Any]] = (),
    policy: bool = True,
    jobset_gates: Collection[str] = (),
) -> list[Diagnostic]:
    """TS503 findings for every TrainJob, runtime and JobSet among ``manifests``.

    ``manifests`` are ``(source file, manifest)`` pairs. ``policy=False`` drops the trainspec
    policy checks on runtimes (framework label, explicit mlPolicy, no disabled webhook).
    ``jobset_gates``: the JobSet feature gates the cluster turned on (by default the alpha
    gates are off, as in JobSet's release: ``InPlaceRestart``, ``RestartJob``, ``ElasticJobSet``).
    """
    entries = runtime_index(manifests, known_runtimes)
    out: list[Diagnostic] = []
    memo: dict[int, Any] = {}  # lives for this call: the manifests do not change meanwhile
    for file, manifest in manifests:
        if not isinstance(manifest, Mapping):
            continue
        if _is_trainer(manifest, ("TrainJob",)):
            out.extend(_TrainJobCheck(manifest, file, entries, jobset_gates, memo).run())
        elif _is_trainer(manifest, RUNTIME_KINDS):
            out.extend(check_runtime(manifest, file, policy=policy))
            out.extend(check_runtime_jobset(manifest, file, gates=jobset_gates))
        elif str(manifest.get("apiVersion", "")).startswith(JOBSET_GROUP + "/") and manifest.get("kind") == "JobSet":
            out.extend(check_jobset(manifest, file, gates=jobset_gates))
        else:  # PyTorchJob, JAXJob, MPIJob: the Training Operator's and mpi-operator's rules
            from trainspec.check.webhooks.training_operator import check_operator_job

            out.extend(check_operator_job(manifest, file))
    return out


__all__ = ["RESERVED_ENV", "RuntimeEntry", "check_webhooks", "runtime_index"]
