"""Kueue metadata: queue and priority labels on the TrainJob, topology annotations on pods.

No job is emitted with ``suspend``: Kueue's job webhook suspends a job that names a queue when it
is created, and admitting the job sets ``suspend: false``. A manifest that said ``suspend: true``
would, on the next GitOps sync, suspend every admitted job again (docs/gitops.md).
"""

from __future__ import annotations

from trainspec.compiler.lower import labels as L
from trainspec.dsl.spec.models import TopologyMode, TrainingJob


def job_labels(job: TrainingJob) -> dict[str, str]:
    """Labels Kueue reads on the TrainJob itself (never the elastic-job annotation)."""
    labels: dict[str, str] = {}
    if job.spec.queue:
        labels[L.QUEUE_NAME] = job.spec.queue
    if job.spec.priority:
        labels[L.PRIORITY_CLASS] = job.spec.priority
    if job.spec.max_run_time:
        labels[L.MAX_EXEC_TIME] = str(job.spec.max_run_time.seconds)
    return labels


def topology_annotations(job: TrainingJob) -> dict[str, str]:
    topology = job.spec.topology
    if topology is None:
        return {}
    key = L.TOPOLOGY_REQUIRED if topology.mode is TopologyMode.REQUIRED else L.TOPOLOGY_PREFERRED
    return {key: topology.level}
