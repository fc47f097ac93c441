"""Generator configuration of ``trainspec.k8s.ray``: KubeRay's RayJob."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["RAY"]

RAY = Module(
    name="ray",
    doc="""KubeRay ``RayJob`` (``ray.io/v1``, KubeRay 1.7): the sub-trees the ray target emits.

Only the fields trainspec writes are modelled; the CRD has many more (autoscaler, GCS fault
tolerance, auth, deletion rules). A RayJob carries the whole cluster it runs on
(``rayClusterSpec``): KubeRay creates a RayCluster ``<rayjob>-<5 random>`` from it, submits the
``entrypoint`` to the head and, with ``shutdownAfterJobFinishes``, deletes the cluster after.""",
    classes=(
        Cls(
            "HeadGroupSpec",
            """The head pod: GCS, dashboard, and (in K8sJobMode) where the job's driver runs.

``rayStartParams`` become ``ray start`` flags; KubeRay fills ``num-cpus``, ``num-gpus`` and
``memory`` from the Ray container's resource limits unless they are given here.""",
            (
                "ray_start_params",
                Field("template", ref="PodTemplateSpec"),
            ),
        ),
        Cls(
            "WorkerGroupSpec",
            "One group of identical worker pods; KubeRay 1.7 requires min and max replicas without autoscaling.",
            (
                "group_name",
                "replicas",
                "min_replicas",
                "max_replicas",
                "num_of_hosts",
                "ray_start_params",
                Field("template", ref="PodTemplateSpec"),
            ),
        ),
        Cls(
            "RayClusterSpec",
            "The cluster a RayJob creates: one head group and worker groups.",
            (
                "ray_version",
                "enable_in_tree_autoscaling",
                Field("head_group_spec", ref="HeadGroupSpec"),
                Field("worker_group_specs", ref="WorkerGroupSpec"),
            ),
        ),
        Cls(
            "RayJobSpec",
            "What to run (``entrypoint``), on which cluster, and how long and how often.",
            (
                "entrypoint",
                Field("submission_mode", type="SubmissionMode"),
                "runtime_env_yaml",
                Field("ray_cluster_spec", ref="RayClusterSpec"),
                "cluster_selector",
                "shutdown_after_job_finishes",
                "ttl_seconds_after_finished",
                "active_deadline_seconds",
                "backoff_limit",
                "suspend",
            ),
        ),
        Cls(
            "RayJob",
            "A Ray job with its own Ray cluster (top-level, namespaced). Kueue reads the queue label here.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="RayJobSpec"),
            ),
            resource=("RAY_API_VERSION", "RayJob"),
            path="rayjob:",
        ),
    ),
    preamble="""#: K8sJobMode (a submitter Job; KubeRay's default), HTTPMode, InteractiveMode or SidecarMode.
SubmissionMode = str""",
    reexports=(("wellknown", "RAY_API_VERSION"),),
)
