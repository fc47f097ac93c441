"""Runtime names Kubeflow Trainer installs itself, and the rule that keeps trainspec off them.

Kubeflow Trainer (manifests/base/runtimes, v2.3) installs these ClusterTrainingRuntimes in every
cluster it runs on. A trainspec ``Runtime`` emitted under one of these names would silently
replace the cluster-wide object every other team uses, and two repositories (or the Trainer
install and a repository) would fight over it. So a Runtime spec may take such a name only
with ``spec.external: true``: it then describes the runtime already in the cluster, and
trainspec resolves jobs against it but never emits it (TS414 otherwise).

The facts trainspec keeps about each of these runtimes are in ``trainspec.runtimes.upstream``;
the names live here because the load pass (which imports nothing outside ``trainspec.dsl``)
applies the rule.
"""

from __future__ import annotations

from trainspec.dsl import codes
from trainspec.dsl.spec.models import Runtime
from trainspec.dsl.spec.semantics import Finding

#: Every runtime Kubeflow Trainer v2.3 installs (a test compares this with the upstream manifests).
UPSTREAM_RUNTIME_NAMES: frozenset[str] = frozenset(
    {
        "deepspeed-distributed",
        "jax-distributed",
        "mlx-distributed",
        "torch-distributed",
        "torch-distributed-with-cache",
        "torchtune-llama3.2-1b",
        "torchtune-llama3.2-3b",
        "torchtune-qwen2.5-1.5b",
        "xgboost-distributed",
    }
)
#: Kubeflow Trainer adds a torchtune runtime per supported model; the whole family is theirs.
UPSTREAM_RUNTIME_PREFIXES: tuple[str, ...] = ("torchtune-",)


def is_upstream_name(name: str) -> bool:
    """Whether ``name`` is (or may become) the name of a runtime Kubeflow Trainer installs."""
    return name in UPSTREAM_RUNTIME_NAMES or name.startswith(UPSTREAM_RUNTIME_PREFIXES)


def check_runtime(runtime: Runtime) -> list[Finding]:
    """TS414 when a runtime trainspec would emit takes a name Kubeflow Trainer installs."""
    name = runtime.metadata.name
    if runtime.spec.external or not is_upstream_name(name):
        return []
    if runtime.metadata.namespace:  # a TrainingRuntime wins over the ClusterTrainingRuntime in the SDK
        namespace = runtime.metadata.namespace
        harm = f"a TrainingRuntime of that name would shadow the cluster's own in namespace {namespace}"
    else:
        harm = "trainspec would overwrite the cluster's own ClusterTrainingRuntime, which other teams use"
    return [
        (
            codes.UPSTREAM_RUNTIME_NAME,
            ("metadata", "name"),
            f"{name} is a runtime Kubeflow Trainer installs: {harm}",
            (
                "to use the runtime the cluster already has, set spec.external: true (trainspec then never emits it); "
                "to define a runtime of your own, give it another name (e.g. torch-h100)"
            ),
        )
    ]


__all__ = ["UPSTREAM_RUNTIME_NAMES", "UPSTREAM_RUNTIME_PREFIXES", "check_runtime", "is_upstream_name"]
