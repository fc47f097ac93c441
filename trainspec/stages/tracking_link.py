"""Where a job's tracker run is: its name, and its URL from the job's env and the run's ids.

Standard library only: the in-pod :class:`~trainspec.stages.Tracker` and ``trainspec status``
both use it. In a pod the tracker knows its run's ids; it posts them with Trainer's progress
status as metrics (:data:`LINK_METRICS`: a metric value holds at most 64 characters, a run URL
is usually longer), and ``status`` puts the URL together again from them and the TrainJob's own
``MLFLOW_TRACKING_URI`` / ``WANDB_*`` variables, as the pod did.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from trainspec.dsl.kube_facts import (
    JOB_NAME_ENV,
    MLFLOW_TRACKING_URI_ENV,
    RUN_ID_ENV,
    WANDB_ENTITY_ENV,
    WANDB_PROJECT_ENV,
)

__all__ = [
    "LINK_METRICS",
    "MLFLOW_EXPERIMENT_METRIC",
    "MLFLOW_RUN_METRIC",
    "WANDB_ENTITY_METRIC",
    "WANDB_PROJECT_METRIC",
    "WANDB_RUN_METRIC",
    "mlflow_run_url",
    "run_link",
    "run_name",
    "shown_uri",
    "wandb_run_id",
    "wandb_run_url",
]

#: The progress-status metrics that name the tracker's run.
MLFLOW_RUN_METRIC = "mlflow_run_id"
MLFLOW_EXPERIMENT_METRIC = "mlflow_experiment_id"
WANDB_RUN_METRIC = "wandb_run_id"
WANDB_ENTITY_METRIC = "wandb_entity"
WANDB_PROJECT_METRIC = "wandb_project"
LINK_METRICS = (
    MLFLOW_RUN_METRIC,
    MLFLOW_EXPERIMENT_METRIC,
    WANDB_RUN_METRIC,
    WANDB_ENTITY_METRIC,
    WANDB_PROJECT_METRIC,
)
#: W&B's hosted API, and where its pages are (a self-hosted server serves both at one address).
WANDB_API = "https://api.wandb.ai"
WANDB_APP = "https://wandb.ai"
#: What a W&B run id may hold, and how long it may be.
_WANDB_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def run_name(env: Mapping[str, str], default_job: str = "train") -> str:
    """``<job>-<run id>``: the tracker run of this run of the job (every restart of it: the same name).

    The job is ``TRAINSPEC_JOB_NAME`` (else ``default_job``), the run id ``TRAINSPEC_RUN_ID``;
    without a run id the name is the job's alone.
    """
    job = env.get(JOB_NAME_ENV, "").strip() or default_job
    run = env.get(RUN_ID_ENV, "").strip()
    return f"{job}-{run}" if run else job


def wandb_run_id(name: str) -> str:
    """A W&B run id for the run named ``name``: the name itself when W&B takes it as an id, else a
    shortened name plus a digest of the whole (the same name, the same id: a restart resumes)."""
    if _WANDB_ID.fullmatch(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:51]
    return f"{safe}-{digest}" if safe else digest


def shown_uri(uri: str) -> str:
    """``uri`` with any user part replaced by ``***`` (what a log line may show of it)."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return uri
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    return f"{scheme}://{authority}{slash}{path}"


def mlflow_run_url(tracking_uri: str, experiment_id: str, run_id: str) -> str | None:
    """The MLflow UI's page of a run, when the tracking URI is a server's (http or https)."""
    if not tracking_uri.lower().startswith(("http://", "https://")):
        return None  # a store (sqlite, file, a database) has no pages: `mlflow ui` serves one
    return f"{shown_uri(tracking_uri).rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"


def wandb_run_url(base_url: str | None, entity: str, project: str, run_id: str) -> str:
    """The W&B page of a run; ``base_url`` is ``WANDB_BASE_URL`` (None: W&B's hosted service)."""
    base = (base_url or WANDB_API).rstrip("/")
    app = WANDB_APP if base == WANDB_API else shown_uri(base)
    return f"{app}/{entity}/{project}/runs/{run_id}"


def run_link(env: Mapping[str, str], metrics: Mapping[str, str]) -> str | None:
    """The tracker run a job's pod reported in its progress ``metrics``: a URL where one exists,
    else a line naming the run and its store; None when the pod reported none.

    ``env`` is the trainer container's plain environment (the TrainJob's ``spec.trainer.env``).
    """
    run = metrics.get(MLFLOW_RUN_METRIC)
    if run:
        uri = env.get(MLFLOW_TRACKING_URI_ENV, "")
        experiment = metrics.get(MLFLOW_EXPERIMENT_METRIC, "")
        url = mlflow_run_url(uri, experiment, run) if uri and experiment else None
        if url is not None:
            return url
        where = f" at {shown_uri(uri)}" if uri else ""
        return f"mlflow run {run}" + (f" (experiment {experiment})" if experiment else "") + where
    run = metrics.get(WANDB_RUN_METRIC)
    if run:
        entity = metrics.get(WANDB_ENTITY_METRIC) or env.get(WANDB_ENTITY_ENV, "")
        project = metrics.get(WANDB_PROJECT_METRIC) or env.get(WANDB_PROJECT_ENV, "")
        if entity and project:
            return wandb_run_url(env.get("WANDB_BASE_URL"), entity, project, run)
        return f"wandb run {run}" + (f" in project {project}" if project else "")
    return None
