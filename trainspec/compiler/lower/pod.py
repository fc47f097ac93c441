"""Pod parts every engine builds the same way from a Runtime spec.

The Trainer runtime's pods, a RayJob's head and workers and the Training Operator's replicas
all get these from the runtime: the container's security context (IPC_LOCK for RDMA, the MPI
user), the pod's (fsGroup of the MPI user), the ``/dev/shm`` memory volume and the scheduling
fields. Each dialect calls them; none reaches into another dialect's modules.
"""

from __future__ import annotations

from typing import Any

from trainspec.dsl.spec.models import Gang, RuntimeSpec, Toleration as SpecToleration
from trainspec.k8s import (
    Capabilities,
    EmptyDirVolumeSource,
    PodSecurityContext,
    SecurityContext,
    Toleration,
    Volume,
)
from trainspec.k8s.wellknown import COSCHEDULING_SCHEDULER, SHM_VOLUME, VOLCANO_SCHEDULER


def security(spec: RuntimeSpec) -> SecurityContext | None:
    """The trainer container's security context: IPC_LOCK for RDMA, the MPI user."""
    rdma = spec.network is not None and spec.network.wants_rdma
    run_as = spec.mpi.run_as_user if spec.mpi else None
    if not rdma and run_as is None:
        return None
    # RDMA registers (pins) memory, which needs IPC_LOCK.
    return SecurityContext(capabilities=Capabilities(add=["IPC_LOCK"]) if rdma else None, run_as_user=run_as)


def pod_security(spec: RuntimeSpec) -> PodSecurityContext | None:
    """The pod's security context: the MPI user's fsGroup."""
    run_as = spec.mpi.run_as_user if spec.mpi else None
    return PodSecurityContext(fs_group=run_as) if run_as is not None else None


def shared_memory_volumes(spec: RuntimeSpec) -> list[Volume] | None:
    """The ``/dev/shm`` memory volume of ``sharedMemory``."""
    if not spec.shared_memory:
        return None
    return [
        Volume(name=SHM_VOLUME, empty_dir=EmptyDirVolumeSource(medium="Memory", size_limit=spec.shared_memory.to_k8s()))
    ]


def scheduling(spec: RuntimeSpec) -> dict[str, Any]:
    """Pod-level scheduling fields shared by every pod of the runtime."""
    sched = spec.scheduling
    scheduler = sched.scheduler_name if sched else None
    if scheduler is None and spec.gang is Gang.COSCHEDULING:
        scheduler = COSCHEDULING_SCHEDULER  # Trainer creates the PodGroup but does not set the scheduler
    if scheduler is None and spec.gang is Gang.VOLCANO:
        scheduler = VOLCANO_SCHEDULER
    return {
        "node_selector": dict(sched.node_selector) if sched and sched.node_selector else None,
        "tolerations": [toleration(t) for t in sched.tolerations] if sched and sched.tolerations else None,
        "scheduler_name": scheduler,
        "priority_class_name": sched.priority_class_name if sched else None,
    }


def toleration(t: SpecToleration) -> Toleration:
    """A spec toleration as the Kubernetes one."""
    return Toleration(
        key=t.key,
        operator=t.operator.value,
        value=t.value,
        effect=t.effect.value if t.effect else None,
        toleration_seconds=t.toleration_seconds,
    )


__all__ = ["pod_security", "scheduling", "security", "shared_memory_volumes", "toleration"]
