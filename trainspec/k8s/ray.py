"""KubeRay ``RayJob`` (``ray.io/v1``, KubeRay 1.7): the sub-trees the ray target emits.

Only the fields trainspec writes are modelled; the CRD has many more (autoscaler, GCS fault
tolerance, auth, deletion rules). A RayJob carries the whole cluster it runs on
(``rayClusterSpec``): KubeRay creates a RayCluster ``<rayjob>-<5 random>`` from it, submits the
``entrypoint`` to the head and, with ``shutdownAfterJobFinishes``, deletes the cluster after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from trainspec.k8s.base import Model, Resource
from trainspec.k8s.core import PodTemplateSpec
from trainspec.k8s.meta import ObjectMeta
from trainspec.k8s.wellknown import RAY_API_VERSION

__all__ = ["RAY_API_VERSION", "HeadGroupSpec", "RayClusterSpec", "RayJob", "RayJobSpec", "WorkerGroupSpec"]

#: K8sJobMode (a submitter Job; KubeRay's default), HTTPMode, InteractiveMode or SidecarMode.
SubmissionMode = str


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class HeadGroupSpec(Model):
    """The head pod: GCS, dashboard, and (in K8sJobMode) where the job's driver runs.

    ``rayStartParams`` become ``ray start`` flags; KubeRay fills ``num-cpus``, ``num-gpus`` and
    ``memory`` from the Ray container's resource limits unless they are given here.
    """

    ray_start_params: dict[str, str] | None = None
    template: PodTemplateSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class WorkerGroupSpec(Model):
    """One group of identical worker pods; KubeRay 1.7 requires min and max replicas without autoscaling."""

    group_name: str
    replicas: int | None = None
    min_replicas: int
    max_replicas: int
    num_of_hosts: int | None = None
    ray_start_params: dict[str, str] | None = None
    template: PodTemplateSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RayClusterSpec(Model):
    """The cluster a RayJob creates: one head group and worker groups."""

    ray_version: str | None = None
    enable_in_tree_autoscaling: bool | None = None
    head_group_spec: HeadGroupSpec
    worker_group_specs: list[WorkerGroupSpec] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RayJobSpec(Model):
    """What to run (``entrypoint``), on which cluster, and how long and how often."""

    entrypoint: str | None = None
    submission_mode: SubmissionMode | None = None
    # The wire name is not the derived camelCase ("runtimeEnvYaml").
    runtime_env_yaml: str | None = field(default=None, metadata={"wire": "runtimeEnvYAML"})
    ray_cluster_spec: RayClusterSpec | None = None
    cluster_selector: dict[str, str] | None = None
    shutdown_after_job_finishes: bool | None = None
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    suspend: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RayJob(Resource):
    """A Ray job with its own Ray cluster (top-level, namespaced). Kueue reads the queue label here."""

    api_version: ClassVar[str] = RAY_API_VERSION
    kind: ClassVar[str] = "RayJob"

    metadata: ObjectMeta
    spec: RayJobSpec
