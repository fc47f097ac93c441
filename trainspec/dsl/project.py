"""The project file, ``trainspec.yaml`` at the repository root: targets, defaults and policy.

It keeps specs small (a default queue, storage class and gang mode for every job of the repo)
and lets a platform team set rules that ``validate`` and ``check`` enforce.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

from pydantic import Field

from trainspec.dsl.models import API_VERSION, Gang, Metadata, _Model
from trainspec.dsl.types import Count, LabelKey, NamespaceName, ObjectName

PROJECT_FILE = "trainspec.yaml"


class Target(_Model):
    """The versions of the cluster the manifests are for."""

    trainer: str = Field(default="2.3", pattern=r"^\d+\.\d+$", description="Kubeflow Trainer minor version: 2.1, 2.2 or 2.3.")
    kueue: Optional[str] = Field(default="0.19", pattern=r"^\d+\.\d+$", description="Kueue minor version, or null without Kueue.")


class Defaults(_Model):
    """Values a job or runtime gets when it does not set them."""

    namespace: Optional[NamespaceName] = Field(default=None, description="Namespace of jobs that set none.")
    queue: Optional[ObjectName] = Field(default=None, description="Kueue LocalQueue of jobs that set none.")
    priority: Optional[ObjectName] = Field(default=None, description="WorkloadPriorityClass of jobs that set none.")
    storage_class: Optional[ObjectName] = Field(default=None, description="StorageClass of new checkpoint volumes.")
    gang: Optional[Gang] = Field(default=None, description="Gang policy of runtimes that set none.")


class ImagePolicy(_Model):
    """Which container images jobs may use."""

    require_digest: bool = Field(default=False, description="Images must be pinned by digest (@sha256:...).")
    allowed_registries: list[str] = Field(default_factory=list, description="Registry prefixes allowed (empty: any).")


class Policy(_Model):
    """Rules for every job of the repository; a violation is a diagnostic at the job's line."""

    require_queue: bool = Field(default=False, description="Every job must name a Kueue queue.")
    require_max_run_time: bool = Field(default=False, description="Every job must set maxRunTime.")
    max_gpus_per_job: Optional[Count] = Field(default=None, ge=1, description="GPU ceiling per job (nodes x GPUs per node).")
    required_labels: list[LabelKey] = Field(default_factory=list, description="Labels every job must carry, e.g. team.")
    images: Optional[ImagePolicy] = Field(default=None, description="Image rules.")


class Pricing(_Model):
    """Prices for cost estimates (explain)."""

    gpu_hour: dict[str, float] = Field(
        default_factory=dict, description="Price of one GPU-hour by accelerator name; key 'default' for any other."
    )
    currency: str = Field(default="USD", description="Currency of the prices.")


class ProjectSpec(_Model):
    target: Target = Field(default_factory=Target, description="Cluster versions to emit for.")
    defaults: Defaults = Field(default_factory=Defaults, description="Defaults for specs.")
    policy: Policy = Field(default_factory=Policy, description="Rules for specs.")
    pricing: Pricing = Field(default_factory=Pricing, description="Prices for estimates.")


class Project(_Model):
    """A repository's trainspec settings (``trainspec.yaml``)."""

    api_version: Literal["trainspec.dev/v1alpha1"] = Field(default=API_VERSION, description="trainspec.dev/v1alpha1")
    kind: Literal["Project"] = Field(default="Project", description="Project")
    metadata: Optional[Metadata] = Field(default=None, description="Optional name of the project.")
    spec: ProjectSpec = Field(default_factory=ProjectSpec, description="Settings.")


def find_project_file(start: Path) -> Path | None:
    """``trainspec.yaml`` in ``start`` or the nearest parent, stopping at the repository root."""
    directory = start.resolve()
    for candidate in (directory, *directory.parents):
        path = candidate / PROJECT_FILE
        if path.is_file():
            return path
        if (candidate / ".git").exists():
            return None
    return None
