"""Where each kind the cluster commands touch lives in the REST API (no client needed).

The kinds are few and fixed, so a table beats API discovery: one request less per command
and a clear answer, not a 404, for a kind trainspec does not manage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainspec.k8s.wellknown import KUEUE_GROUP, KUEUE_VERSION, MONITORING_API_VERSION, TRAINER_API_VERSION


@dataclass(frozen=True)
class Resource:
    """One kind: its apiVersion, plural and whether its objects live in a namespace."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The collection path (``name`` None) or the object path; ``namespace`` None lists all namespaces."""
        group_version = self.api_version
        base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


TRAINJOB = Resource(TRAINER_API_VERSION, "TrainJob", "trainjobs")
TRAINING_RUNTIME = Resource(TRAINER_API_VERSION, "TrainingRuntime", "trainingruntimes")
CLUSTER_TRAINING_RUNTIME = Resource(
    TRAINER_API_VERSION, "ClusterTrainingRuntime", "clustertrainingruntimes", namespaced=False
)
PVC = Resource("v1", "PersistentVolumeClaim", "persistentvolumeclaims")
POD = Resource("v1", "Pod", "pods")
WORKLOAD = Resource(f"{KUEUE_GROUP}/{KUEUE_VERSION}", "Workload", "workloads")
#: What else ``submit`` applies for a job (trainspec.kube.submit decides the order and the rules).
CONFIG_MAP = Resource("v1", "ConfigMap", "configmaps")
SERVICE_ACCOUNT = Resource("v1", "ServiceAccount", "serviceaccounts")
ROLE = Resource("rbac.authorization.k8s.io/v1", "Role", "roles")
ROLE_BINDING = Resource("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings")
POD_MONITOR = Resource(MONITORING_API_VERSION, "PodMonitor", "podmonitors")

KINDS = {
    r.kind: r
    for r in (
        TRAINJOB,
        TRAINING_RUNTIME,
        CLUSTER_TRAINING_RUNTIME,
        PVC,
        POD,
        WORKLOAD,
        CONFIG_MAP,
        SERVICE_ACCOUNT,
        ROLE,
        ROLE_BINDING,
        POD_MONITOR,
    )
}


def resource_of(obj: dict[str, Any]) -> Resource:
    """The resource of a manifest; ValueError for a kind these commands do not apply."""
    kind = str(obj.get("kind") or "")
    found = KINDS.get(kind)
    if found is None or found.api_version != obj.get("apiVersion"):
        raise ValueError(f"trainspec does not apply {obj.get('apiVersion')}/{kind} objects")
    return found
