"""Generator configuration of ``trainspec.k8s.meta``: object metadata (OwnerReference, ObjectMeta)."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["META"]

META = Module(
    name="meta",
    doc="Object metadata (meta/v1).",
    classes=(
        Cls(
            "OwnerReference",
            "A reference to the owning object (garbage collection follows it).",
            (
                "api_version",
                "kind",
                "name",
                "uid",
                "controller",
                "block_owner_deletion",
            ),
            path="manual:OwnerReference",
        ),
        Cls(
            "ObjectMeta",
            """Standard object metadata.

Inside templates embedded in a CRD (JobSet template, Job template, pod template, PVC
templates) the CRD schema keeps only name, namespace, labels, annotations and finalizers;
the other fields are pruned there, so set them on top-level objects only.""",
            (
                "name",
                "generate_name",
                "namespace",
                "labels",
                "annotations",
                Field("owner_references", ref="OwnerReference"),
                "finalizers",
            ),
            path="manual:ObjectMeta",
        ),
    ),
)
