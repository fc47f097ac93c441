"""Generator configuration of ``trainspec.k8s.kubeflow_v1``: Training Operator v1 PyTorchJob and JAXJob."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["KUBEFLOW_V1"]

KUBEFLOW_V1 = Module(
    name="kubeflow_v1",
    doc="""Kubeflow Training Operator v1 (``kubeflow.org/v1``, Training Operator 1.9): PyTorchJob and JAXJob.

Only the sub-trees trainspec emits are modelled. ``RunPolicy``, ``SchedulingPolicy`` and
``ReplicaSpec`` are the operator's common types; mpi-operator's MPIJob (:mod:`trainspec.k8s.mpi`)
has the same shapes and reuses them.""",
    classes=(
        Cls(
            "SchedulingPolicy",
            "What a gang scheduler (Volcano, scheduler-plugins coscheduling) gets in the job's PodGroup.",
            (
                "min_available",
                "queue",
                "min_resources",
                "priority_class",
                "schedule_timeout_seconds",
            ),
        ),
        Cls(
            "RunPolicy",
            "Job-wide policies: pod clean-up, retries, deadline, gang scheduling and Kueue's ``suspend``.",
            (
                Field("clean_pod_policy", alias="CleanPodPolicy"),
                "ttl_seconds_after_finished",
                "active_deadline_seconds",
                Field(
                    "backoff_limit",
                    comment="Retries before the job is marked failed (pod restarts count, as in a batch Job).",
                ),
                Field("scheduling_policy", ref="SchedulingPolicy"),
                Field("suspend", comment="Created suspended, Kueue starts the job on admission."),
                "managed_by",
            ),
        ),
        Cls(
            "ReplicaSpec",
            "One replica type (Master, Worker, Launcher): how many pods, their template and restart policy.",
            (
                "replicas",
                Field("template", ref="PodTemplateSpec", required=True),
                Field("restart_policy", alias="RestartPolicy"),
            ),
        ),
        Cls(
            "ElasticPolicy",
            """torchrun's elastic launch: the operator turns it into ``PET_NNODES=min:max``, the rendezvous
endpoint (``<job>-worker-0``) and ``PET_MAX_RESTARTS``.""",
            (
                "min_replicas",
                "max_replicas",
                Field("rdzv_backend", comment="c10d, etcd or etcd-v2 (the CRD takes any string)."),
                "rdzv_port",
                "rdzv_host",
                "rdzv_id",
                "standalone",
                "max_restarts",
            ),
        ),
        Cls(
            "PyTorchJobSpec",
            """Master (exactly one) and Workers, or Workers only when elastic; ``nprocPerNode`` is a string
(``auto``, ``cpu``, ``gpu`` or a number).""",
            (
                Field("run_policy", ref="RunPolicy"),
                Field("elastic_policy", ref="ElasticPolicy"),
                Field("pytorch_replica_specs", ref="ReplicaSpec"),
                "nproc_per_node",
            ),
        ),
        Cls(
            "PyTorchJob",
            "A PyTorch job of the Training Operator (namespaced). Kueue reads the queue label here.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="PyTorchJobSpec"),
            ),
            resource=("KUBEFLOW_V1_API_VERSION", "PyTorchJob"),
            path="pytorchjob:",
        ),
        Cls(
            "JAXJobSpec",
            "Workers only; the operator sets the JAX coordinator address and process ids.",
            (
                Field("run_policy", ref="RunPolicy"),
                Field("jax_replica_specs", ref="ReplicaSpec"),
            ),
        ),
        Cls(
            "JAXJob",
            "A JAX job of the Training Operator (namespaced).",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="JAXJobSpec"),
            ),
            resource=("KUBEFLOW_V1_API_VERSION", "JAXJob"),
            path="jaxjob:",
        ),
    ),
    reexports=(("wellknown", "KUBEFLOW_V1_API_VERSION"),),
)
