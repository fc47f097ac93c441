"""Kubeflow Trainer's own runtimes, as external catalog entries.

Kubeflow Trainer installs these ClusterTrainingRuntimes (``manifests/base/runtimes`` at v2.3).
They belong to the cluster: trainspec never emits or owns them, but a job may name one, and then
compiles to a TrainJob whose ``runtimeRef`` names it and to no runtime object.

Each entry is a hand-written summary of what resolution and the name budget need from the
upstream manifest (framework, default image, ``numNodes``, processes, the GPUs of the ``node``
container, the initializer replicated jobs before the trainer), not a copy of it. A test reads
the upstream manifests, where present, and compares every fact kept here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from trainspec.dsl.kube_facts import MPI_SSH_AUTH_MOUNT_PATH
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.spec.models import Framework, Mpi, Resources, Runtime
from trainspec.k8s.wellknown import DATASET_INITIALIZER, MODEL_INITIALIZER

#: The ``file`` of a catalog entry's LoadedSpec (there is no file: the runtime is the cluster's).
UPSTREAM_FILE_PREFIX = "<kubeflow-trainer>/"

#: trainer.kubeflow.org/framework label -> the trainspec framework that resolves jobs like it.
_FRAMEWORKS: dict[str, Framework] = {
    "torch": Framework.TORCH,
    "torchtune": Framework.TORCH,  # mlPolicy.torch; the torchtune trainer image runs `tune run`
    "deepspeed": Framework.DEEPSPEED,
    "jax": Framework.JAX,
}


@dataclass(frozen=True)
class UpstreamRuntime:
    """What trainspec knows of one runtime Kubeflow Trainer installs."""

    name: str
    #: The ``trainer.kubeflow.org/framework`` label (torch, torchtune, deepspeed, mlx, jax, xgboost).
    framework: str
    #: The ``mlPolicy`` source: torch, mpi, jax or xgboost.
    policy: str
    #: Image of container ``node`` in the trainer replicated job.
    image: str
    #: ``mlPolicy.numNodes``.
    nodes: int = 1
    #: ``mlPolicy.mpi.numProcPerNode`` (MPI only). Trainer replaces 1 by the GPU count when the job
    #: asks for GPUs, so trainspec resolves processes from the GPUs, as for its own runtimes.
    procs_per_node: int | None = None
    #: ``nvidia.com/gpu`` limit of container ``node``, if the runtime sets one.
    gpus: int | None = None
    #: Replicated jobs that run before the trainer (their pod names count in the name budget).
    initializers: tuple[str, ...] = ()
    #: ``mlPolicy.mpi.sshAuthMountPath`` (MPI only).
    ssh_auth_mount_path: str | None = None
    #: ``mlPolicy.mpi.runLauncherAsNode`` (MPI only): the launcher trains too.
    launcher_as_node: bool | None = None

    @property
    def modeled(self) -> Framework | None:
        """The trainspec framework for jobs on this runtime; None when trainspec does not model it."""
        return _FRAMEWORKS.get(self.framework)


_TORCH_IMAGE = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
_TORCHTUNE_IMAGE = "ghcr.io/kubeflow/trainer/torchtune-trainer"
_MPI_SSH = "/home/mpiuser/.ssh"
_INITIALIZERS = (DATASET_INITIALIZER, MODEL_INITIALIZER)
_PLACEHOLDER = "upstream-runtime"

CATALOG: tuple[UpstreamRuntime, ...] = (
    UpstreamRuntime(
        "deepspeed-distributed",
        "deepspeed",
        "mpi",
        "ghcr.io/kubeflow/trainer/deepspeed-runtime",
        procs_per_node=1,
        ssh_auth_mount_path=_MPI_SSH,
        launcher_as_node=True,
    ),
    UpstreamRuntime("jax-distributed", "jax", "jax", "nvcr.io/nvidia/jax:25.10-py3"),
    UpstreamRuntime(
        "mlx-distributed",
        "mlx",
        "mpi",
        "ghcr.io/kubeflow/trainer/mlx-runtime",
        procs_per_node=1,
        ssh_auth_mount_path=_MPI_SSH,
        launcher_as_node=True,
    ),
    UpstreamRuntime("torch-distributed", "torch", "torch", _TORCH_IMAGE),
    UpstreamRuntime(
        "torch-distributed-with-cache", "torch", "torch", _TORCH_IMAGE, initializers=(DATASET_INITIALIZER,)
    ),
    UpstreamRuntime(
        "torchtune-llama3.2-1b", "torchtune", "torch", _TORCHTUNE_IMAGE, gpus=2, initializers=_INITIALIZERS
    ),
    UpstreamRuntime(
        "torchtune-llama3.2-3b", "torchtune", "torch", _TORCHTUNE_IMAGE, gpus=2, initializers=_INITIALIZERS
    ),
    UpstreamRuntime(
        "torchtune-qwen2.5-1.5b", "torchtune", "torch", _TORCHTUNE_IMAGE, gpus=2, initializers=_INITIALIZERS
    ),
    UpstreamRuntime("xgboost-distributed", "xgboost", "xgboost", "ghcr.io/kubeflow/trainer/xgboost-runtime"),
)
_BY_NAME: dict[str, UpstreamRuntime] = {entry.name: entry for entry in CATALOG}


def upstream_names() -> tuple[str, ...]:
    """Names of every runtime Kubeflow Trainer installs that jobs can resolve against, sorted."""
    return tuple(sorted(entry.name for entry in CATALOG if entry.modeled is not None))


def upstream_entry(name: str) -> UpstreamRuntime | None:
    """The catalog entry called ``name``, modeled or not."""
    return _BY_NAME.get(name)


def unmodeled(name: str) -> UpstreamRuntime | None:
    """The entry ``name`` when it is Kubeflow Trainer's but of a framework trainspec does not model."""
    entry = _BY_NAME.get(name)
    return entry if entry is not None and entry.modeled is None else None


@cache
def upstream_runtime(name: str) -> LoadedSpec | None:
    """Entry ``name`` as an external trainspec ``Runtime`` (what resolution reads); None if unknown
    or of a framework trainspec does not model."""
    entry = _BY_NAME.get(name)
    framework = entry.modeled if entry is not None else None
    if entry is None or framework is None:
        return None
    mpi = None
    if entry.policy == "mpi":
        mpi = Mpi(
            ssh_auth_mount_path=entry.ssh_auth_mount_path or MPI_SSH_AUTH_MOUNT_PATH,
            run_launcher_as_node=bool(entry.launcher_as_node),
        )
    runtime = Runtime(
        name=_PLACEHOLDER,
        framework=framework,
        image=entry.image,
        nodes=entry.nodes,
        external=True,
        resources_per_node=Resources(gpu=entry.gpus) if entry.gpus else None,
        mpi=mpi,
    )
    # Kubeflow Trainer's names are Kubernetes object names, some with dots (torchtune-llama3.2-1b),
    # which a trainspec Runtime's RFC 1035 name is not: the entry is built valid, then renamed.
    runtime = runtime.model_copy(update={"metadata": runtime.metadata.model_copy(update={"name": entry.name})})
    return LoadedSpec(spec=runtime, file=UPSTREAM_FILE_PREFIX + entry.name)


__all__ = [
    "CATALOG",
    "UPSTREAM_FILE_PREFIX",
    "UpstreamRuntime",
    "unmodeled",
    "upstream_entry",
    "upstream_names",
    "upstream_runtime",
]
