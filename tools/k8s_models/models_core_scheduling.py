"""Scheduling classes of ``trainspec.k8s.core`` (tolerations, node affinity, gates), for ``models_core``."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field

__all__ = ["SCHEDULING_CLASSES"]

#: Where pods may run: tolerations, node selector terms and affinity, scheduling gates (in ``CORE`` order).
SCHEDULING_CLASSES: tuple[Cls, ...] = (
    Cls(
        "Toleration",
        "Lets pods schedule onto nodes with a matching taint.",
        (
            "key",
            "operator",
            "value",
            "effect",
            "toleration_seconds",
        ),
    ),
    Cls(
        "NodeSelectorRequirement",
        "``key operator values``, e.g. ``nvidia.com/gpu.product In [H100-SXM]``.",
        (
            "key",
            "operator",
            "values",
        ),
    ),
    Cls(
        "NodeSelectorTerm",
        "Requirements ANDed together (terms in a list are ORed).",
        (
            Field("match_expressions", ref="NodeSelectorRequirement"),
            Field("match_fields", ref="NodeSelectorRequirement"),
        ),
    ),
    Cls(
        "NodeSelector",
        "The required node-affinity rule: any one of the terms must match.",
        (Field("node_selector_terms", ref="NodeSelectorTerm"),),
    ),
    Cls(
        "PreferredSchedulingTerm",
        "A weighted (1-100) soft node preference.",
        (
            "weight",
            Field("preference", ref="NodeSelectorTerm"),
        ),
    ),
    Cls(
        "NodeAffinity",
        "Hard and soft node constraints.",
        (
            Field("required_during_scheduling_ignored_during_execution", ref="NodeSelector"),
            Field("preferred_during_scheduling_ignored_during_execution", ref="PreferredSchedulingTerm"),
        ),
    ),
    Cls(
        "Affinity",
        "Pod affinity rules; only node affinity is modelled (pod (anti-)affinity is not emitted).",
        (Field("node_affinity", ref="NodeAffinity"),),
    ),
    Cls(
        "PodSchedulingGate",
        "A gate that keeps the pod unschedulable until removed (Kueue uses these).",
        ("name",),
    ),
)
