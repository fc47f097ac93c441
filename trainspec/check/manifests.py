"""The manifests a check looks at: compiled ones with their provenance, and ones read from files.

A :class:`Manifest` carries what is needed to point its findings somewhere users can read:
the provenance lowering recorded (``sources``) for a compiled object, the positions of every
field (``located``) for an object read from YAML. Inside the checker a manifest is known by
its ``key`` (``#m0``, ``#r3``, ``#c1``), which stands in for a file name until
:mod:`.locate` replaces it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainspec.dsl.yaml_loader import LoadLimits

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
    from trainspec.compiler.emit import manifest_dicts

    out: list[Manifest] = []
    for output in result.outputs:
        for data, sources in zip(manifest_dicts(output.objects), output.provenance):
            meta = data.get("metadata") or {}
            kind, name = data.get("kind"), meta.get("name")
            where = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
            label = f"compiled {kind} {where} ({output.path})"
            out.append(Manifest(f"#m{len(out)}", data, sources=sources, label=label))
    return out


def read_manifests(files: Iterable[Any], limits: LoadLimits | None = None) -> tuple[list[Manifest], list[Any]]:
    """Kubernetes manifests (not trainspec specs) in the input YAML files, and load problems.
    ``limits``: the loader's caps (the load pass's, so both read the same files alike)."""
    from trainspec.kueue.located import read_objects

    objects, problems = read_objects(list(files), limits)  # load problems repeat the compile pass's: deduplicated
    # A kustomization (as `trainspec compile -o DIR` writes one) configures the build; it is never applied.
    objects = [o for o in objects if not o.api_version.startswith("kustomize.config.k8s.io/")]
    return [Manifest(f"#r{i}", o.data, located=o) for i, o in enumerate(objects)], problems


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
        if runtime.get("kind") == kind and meta.get("name") == ref.get("name") and (
                kind == "ClusterTrainingRuntime" or meta.get("namespace") in (None, namespace)):
            return runtime
    return None
