"""Provenance every engine records the same way: a job object's metadata and its checkpoint PVC."""

from __future__ import annotations

from trainspec.compiler.lower import labels as L
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.provenance import FieldSources, SpecRef
from trainspec.dsl.load.loaded import LoadedSpec


def metadata_sources(job: LoadedSpec) -> FieldSources:
    """Where a job object's metadata and Kueue labels come from: the same for every engine's object."""

    def at(*path: str) -> SpecRef:
        return SpecRef(job, path)

    sources = FieldSources(default=SpecRef(job, ()))
    for path, ref in (
        (("metadata",), at("metadata", "name")),
        (("metadata", "namespace"), at("metadata", "namespace")),
        (("metadata", "labels"), at("metadata", "labels")),
        (("metadata", "annotations"), at("metadata", "annotations")),
        (("metadata", "labels", L.QUEUE_NAME), at("spec", "queue")),
        (("metadata", "labels", L.PRIORITY_CLASS), at("spec", "priority")),
        (("metadata", "labels", L.MAX_EXEC_TIME), at("spec", "maxRunTime")),
    ):
        sources.set(path, ref)
    return sources


def claim_sources(plan: JobPlan) -> FieldSources:
    """What lowering set in the job's checkpoint PVC, field by field, and from which spec field."""
    job = plan.resolved.loaded

    def at(*path: str) -> SpecRef:
        return SpecRef(job, path)

    sources = FieldSources(default=at("spec", "checkpoint"))
    sources.set(("spec", "resources"), at("spec", "checkpoint", "size"))
    sources.set(("spec", "storageClassName"), at("spec", "checkpoint", "storageClass"))
    sources.set(("spec", "accessModes"), at("spec", "checkpoint", "accessMode"))
    sources.set(("metadata", "namespace"), at("metadata", "namespace"))
    return sources


__all__ = ["claim_sources", "metadata_sources"]
