"""Label and annotation keys trainspec writes, and the ones it reads from upstream projects."""

from __future__ import annotations

MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "trainspec"
JOB_LABEL = "trainspec.dev/job"
#: The runtimePatches entry trainspec owns on every TrainJob (Kueue owns its own entry).
PATCH_MANAGER = "trainspec.dev/compiler"

FRAMEWORK = "trainer.kubeflow.org/framework"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"
ANCESTOR_DATASET = "dataset-initializer"

QUEUE_NAME = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME = "kueue.x-k8s.io/max-exec-time-seconds"
TOPOLOGY_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
TOPOLOGY_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"

VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"

API_GROUP = "trainer.kubeflow.org"
