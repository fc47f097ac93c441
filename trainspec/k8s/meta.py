"""Object metadata (meta/v1)."""

from __future__ import annotations

from dataclasses import dataclass

from trainspec.k8s.base import Model

__all__ = ["ObjectMeta", "OwnerReference"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class OwnerReference(Model):
    """A reference to the owning object (garbage collection follows it)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ObjectMeta(Model):
    """Standard object metadata.

    Inside templates embedded in a CRD (JobSet template, Job template, pod template, PVC
    templates) the CRD schema keeps only name, namespace, labels, annotations and finalizers;
    the other fields are pruned there, so set them on top-level objects only.
    """

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
