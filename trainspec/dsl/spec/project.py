"""The project file, ``trainspec.yaml`` at the repository root: targets, defaults and policy.

It keeps specs small (a default queue, storage class and gang mode for every job of the repo)
and lets a platform team set rules that ``validate`` and ``check`` enforce.
"""

from __future__ import annotations

import enum
import os
from typing import Literal

from trainspec.dsl.framework.modeling import field
from trainspec.dsl.framework.types import Count, Image, LabelKey, NamespaceName, ObjectName
from trainspec.dsl.kube_facts import INT32_MAX
from trainspec.dsl.spec.models import API_VERSION, Engine, Gang, Metadata, _Model
from trainspec.dsl.spec.tracking import Tracking

PROJECT_FILE = "trainspec.yaml"


class GitOps(str, enum.Enum):
    """The GitOps controller that applies the output directory (``compile --gitops``)."""

    ARGOCD = "argocd"
    FLUX = "flux"


class PythonPolicy(str, enum.Enum):
    """Whether ``.py`` spec modules of the repository are run (``--no-python`` overrides it with deny)."""

    ALLOW = "allow"
    WARN = "warn"
    DENY = "deny"


class Target(_Model):
    """The versions of the cluster the manifests are for."""

    trainer: str = field(
        default="2.3", pattern=r"^\d+\.\d+$", description="Kubeflow Trainer minor version: 2.1, 2.2 or 2.3."
    )
    kueue: str | None = field(
        default="0.19", pattern=r"^\d+\.\d+$", description="Kueue minor version, or null without Kueue."
    )
    engine: Engine | None = field(
        default=None,
        description="Engine of every job whose runtime names none: trainer (default), ray or training-operator.",
    )
    jobset_feature_gates: list[str] = field(
        default_factory=list,
        description="JobSet feature gates the cluster's JobSet controller runs with, beyond "
        "its defaults (e.g. InPlaceRestart): `check` then admits what they allow.",
    )


class Defaults(_Model):
    """Values a job or runtime gets when it does not set them."""

    namespace: NamespaceName | None = field(default=None, description="Namespace of jobs that set none.")
    queue: ObjectName | None = field(default=None, description="Kueue LocalQueue of jobs that set none.")
    priority: ObjectName | None = field(default=None, description="WorkloadPriorityClass of jobs that set none.")
    storage_class: ObjectName | None = field(default=None, description="StorageClass of new checkpoint volumes.")
    gang: Gang | None = field(default=None, description="Gang policy of runtimes that set none.")
    stage_image: Image | None = field(
        default=None,
        description="Image of the data-sharding stage for runtimes whose dataSharding names none "
        "(build it from trainspec's Dockerfile and push it to your registry).",
    )
    launcher_image: Image | None = field(
        default=None,
        description="Image of the Kubeflow Pipelines launcher step that `trainspec kfp` compiles (build the "
        "`launcher` target of trainspec's Dockerfile and push it to your registry); --image overrides it.",
    )
    tracking: Tracking | None = field(
        default=None,
        description="Experiment tracker of jobs that set none, e.g. {mlflow: {uri: http://mlflow.mlflow:5000}} (each "
        "job's runs then go to an experiment named after the job); a job's own tracking replaces it whole.",
    )


class ImagePolicy(_Model):
    """Which container images jobs may use."""

    require_digest: bool = field(default=False, description="Images must be pinned by digest (@sha256:...).")
    allowed_registries: list[str] = field(default_factory=list, description="Registry prefixes allowed (empty: any).")


class Policy(_Model):
    """Rules for every job of the repository; a violation is a diagnostic at the job's line."""

    require_queue: bool = field(default=False, description="Every job must name a Kueue queue.")
    require_max_run_time: bool = field(default=False, description="Every job must set maxRunTime.")
    # A job's GPUs (nodes x GPUs per node) always fit an int32, so a larger ceiling never binds.
    max_gpus_per_job: Count | None = field(
        default=None, ge=1, le=INT32_MAX, description="GPU ceiling per job (nodes x GPUs per node)."
    )
    required_labels: list[LabelKey] = field(default_factory=list, description="Labels every job must carry, e.g. team.")
    images: ImagePolicy | None = field(default=None, description="Image rules.")


class Pricing(_Model):
    """Prices for cost estimates (explain)."""

    gpu_hour: dict[str, float] = field(
        default_factory=dict, description="Price of one GPU-hour by accelerator name; key 'default' for any other."
    )
    currency: str = field(default="USD", description="Currency of the prices.")


class ProjectSpec(_Model):
    target: Target = field(default_factory=Target, description="Cluster versions to emit for.")
    defaults: Defaults = field(default_factory=Defaults, description="Defaults for specs.")
    policy: Policy = field(default_factory=Policy, description="Rules for specs.")
    pricing: Pricing = field(default_factory=Pricing, description="Prices for estimates.")
    gitops: GitOps | None = field(
        default=None,
        description="The GitOps controller that applies `compile -o DIR`'s tree: argocd (sync waves; no "
        "kustomization.yaml, a directory source with recurse) or flux (no kustomization.yaml); "
        "--gitops overrides it.",
    )
    python: PythonPolicy = field(
        default=PythonPolicy.ALLOW,
        description="Whether .py spec modules are run: allow (in a supervised child process), warn (not run; "
        "a TS123 warning each, their specs are not compiled) or deny (not run; a TS123 error each). "
        "--no-python means deny whatever this says.",
    )


class Project(_Model):
    """A repository's trainspec settings (``trainspec.yaml``)."""

    api_version: Literal["trainspec.dev/v1alpha1"] = field(default=API_VERSION, description="trainspec.dev/v1alpha1")
    kind: Literal["Project"] = field(default="Project", description="Project")
    metadata: Metadata | None = field(default=None, description="Optional name of the project.")
    spec: ProjectSpec = field(default_factory=ProjectSpec, description="Settings.")


def find_project_file(start: str | os.PathLike[str]) -> str | None:
    """``trainspec.yaml`` in ``start`` or the nearest parent, stopping at the repository root.

    The path returned leads from ``start`` (``start/../trainspec.yaml``): the kernel resolves
    ``..`` from the real directory, as this search climbs, so it names the file found also from a
    symlinked directory, and holds no directory name above ``start`` (nothing of the machine's
    layout reaches a diagnostic). Any directory entry of that name is the project file: a
    dangling link, a directory or a FIFO is then reported when it is read, never skipped for a
    parent's file or none (the project file holds the gate's policy). A file as ``start``: its
    directory. None when ``start`` no longer exists (a removed working directory).
    """
    try:
        directory = os.path.realpath(start, strict=True)
    except OSError:
        return None
    if not os.path.isdir(directory):  # a file: the search starts where it is
        directory, start = os.path.dirname(directory), os.path.dirname(os.fspath(start)) or os.curdir
    climbed: list[str] = []
    while True:
        path = os.path.join(directory, PROJECT_FILE)
        if os.path.lexists(path):
            return os.path.join(os.fspath(start), *climbed, PROJECT_FILE)
        if os.path.lexists(os.path.join(directory, ".git")):
            return None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
        climbed.append(os.pardir)
