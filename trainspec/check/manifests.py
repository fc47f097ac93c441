"""The manifests a check looks at: compiled ones with their provenance, and ones read from files.

A :class:`Manifest` carries what is needed to point its findings somewhere users can read:
the provenance lowering recorded (``sources``) for a compiled object, the positions of every
field (``located``) for an object read from YAML. Inside the checker a manifest is known by
its ``key`` (``#m0``, ``#r3``, ``#c1``), which stands in for a file name until
:mod:`.locate` replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


@dataclass(frozen=True)
class Manifest:
    """One manifest to check, and where its findings should point."""

    key: str  # unique; stands in for the file name inside the checker
    data: dict[str, Any]
    located: Any = None  # kueue.located.Located, for manifests read from files
    sources: Any = None  # compiler.provenance.FieldSources of a compiled manifest
    label: str = ""  # "compiled TrainJob team-nlp/llama-sft (team-nlp/llama-sft.yaml)"

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", ""))

    @property
    def group(self) -> str:
        """The API group (``""`` for core kinds such as ``v1`` PersistentVolumeClaim)."""
        return str(self.data.get("apiVersion", "")).rpartition("/")[0]


def compiled_manifests(result: Any) -> list[Manifest]:
    """The objects a :class:`~trainspec.compiler.pipeline.CompileResult` holds, each with the
    provenance lowering recorded for its fields."""
    # The plain objects emit renders (its manifest_dicts without GitOps annotations), without
    # importing the emitter: the YAML writer and the output tree cost a check ~50 ms of imports.
    from trainspec.k8s import to_dict

    out: list[Manifest] = []
    for output in [*result.outputs, *getattr(result, "pipeline_jobs", ())]:  # a pipeline's jobs are checked too
        for data, sources in zip([to_dict(o) for o in output.objects], output.provenance, strict=True):
            meta = data.get("metadata") or {}
            kind, name = data.get("kind"), meta.get("name")
            where = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
            label = f"compiled {kind} {where} ({output.path})"
            out.append(Manifest(f"#m{len(out)}", data, sources=sources, label=label))
    return out


def foreign_manifests(result: Any) -> list[Manifest]:
    """The Kubernetes manifests among the inputs: the documents the load pass left alone as not
    trainspec's (already parsed, with their positions), that have an ``apiVersion`` and a ``kind``."""
    from trainspec.kueue.located import Located

    docs = [
        f.doc
        for f in result.foreign
        if f.doc is not None
        and f.api_version
        and f.kind
        # A kustomization (as `trainspec compile -o DIR` writes one) configures the build; never applied.
        and not f.api_version.startswith("kustomize.config.k8s.io/")
    ]
    return [Manifest(f"#r{i}", doc.data, located=Located(doc)) for i, doc in enumerate(docs)]


def cluster_manifests(cluster: Any) -> list[Manifest]:
    """The objects of ``--cluster``: custom resources too, so they are CRD-checked."""
    objects = cluster.objects if cluster is not None else []
    return [Manifest(f"#c{i}", o.data, located=o) for i, o in enumerate(objects)]


def runtime_of(trainjob: dict[str, Any], runtimes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The runtime ``trainjob``'s ``runtimeRef`` names, among ``runtimes``."""
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    kind = ref.get("kind", "ClusterTrainingRuntime")
    namespace = (trainjob.get("metadata") or {}).get("namespace")
    for runtime in runtimes:
        meta = runtime.get("metadata") or {}
        if (
            runtime.get("kind") == kind
            and meta.get("name") == ref.get("name")
            and (kind == "ClusterTrainingRuntime" or meta.get("namespace") in (None, namespace))
        ):
            return runtime
    return None
