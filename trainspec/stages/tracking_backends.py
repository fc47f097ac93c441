"""The two trackers :class:`~trainspec.stages.Tracker` drives: MLflow and Weights & Biases.

Each library is imported when its backend starts (on global rank 0 only), never when
``trainspec.stages`` is: an image without it runs every other helper, and a job without
``spec.tracking`` never needs it. Both read their settings from the variables the compiler set
(``MLFLOW_TRACKING_URI``, ``MLFLOW_EXPERIMENT_NAME``; ``WANDB_PROJECT``, ``WANDB_ENTITY``) and
their credentials from the job's ``secretEnv`` (``MLFLOW_TRACKING_TOKEN``, ``WANDB_API_KEY``...).

Resuming: the run of ``<job>-<run id>`` is found again after a restart of the pod.

* MLflow assigns run ids itself, so the run carries the tag ``trainspec.run`` = its name: the
  experiment is searched for it (the oldest active run with the tag) and that run is resumed by
  its id; none found, it is created with the tag.
* W&B takes the run id from the caller: it is derived from the name (:func:`wandb_run_id`), with
  ``resume="allow"``. Metrics are plotted against a ``step`` metric of their own, so the steps a
  resumed run repeats (from its checkpoint to where it was killed) are logged again instead of
  dropped as "steps must increase".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.kube_facts import (
    MLFLOW_EXPERIMENT_NAME_ENV,
    MLFLOW_TRACKING_URI_ENV,
    WANDB_ENTITY_ENV,
    WANDB_PROJECT_ENV,
)
from trainspec.stages.tracking_link import (
    MLFLOW_EXPERIMENT_METRIC,
    MLFLOW_RUN_METRIC,
    WANDB_ENTITY_METRIC,
    WANDB_PROJECT_METRIC,
    WANDB_RUN_METRIC,
    mlflow_run_url,
    shown_uri,
    wandb_run_id,
)

__all__ = ["BACKENDS", "Backend", "MlflowBackend", "RunInfo", "Started", "TrackingError", "WandbBackend"]

#: The tag (MLflow) that finds a run again after a restart, and the others every run carries.
RUN_TAG = "trainspec.run"
JOB_TAG = "trainspec.job"
RUN_ID_TAG = "trainspec.run_id"
#: A metric value the API takes is at most this long (Trainer's status: 64 characters).
_METRIC_TEXT_MAX = 64


class TrackingError(RuntimeError, TrainspecError):
    """The tracker named by the job cannot be used (library missing, server refused, bad settings)."""


@dataclass(frozen=True)
class RunInfo:
    """Who the run is: the job (the group of its runs), the run id, the run's name."""

    job: str
    run_id: str
    name: str
    env: Mapping[str, str]


@dataclass
class Started:
    """What a backend says once its run is open."""

    resumed: bool
    #: The run's page, where the tracker has one (an MLflow server, W&B online).
    url: str | None
    #: Where the run is, for the log line when there is no URL.
    where: str
    #: The ids :func:`~trainspec.stages.tracking_link.run_link` needs, posted with the progress status.
    link: dict[str, str] = field(default_factory=dict)


class Backend(Protocol):
    """One tracker: open (or resume) the run, log to it, end it."""

    def start(self, run: RunInfo) -> Started: ...

    def log_metrics(self, step: int, metrics: Mapping[str, float]) -> None: ...

    def log_params(self, params: Mapping[str, Any]) -> list[str]: ...

    def finish(self, status: str) -> None: ...


def _short(link: Mapping[str, str]) -> dict[str, str]:
    """The link metrics a progress status can carry (1 to 64 characters each)."""
    return {name: value for name, value in link.items() if 0 < len(value) <= _METRIC_TEXT_MAX}


class MlflowBackend:
    """MLflow: the run is started with the fluent API (so the script's own ``mlflow.log_*`` calls
    reach the same run) and logged to through a client, by the run's id."""

    library = "mlflow"

    def __init__(self) -> None:
        import mlflow

        self._mlflow = mlflow
        self._client: Any = None
        self._run_id = ""

    def start(self, run: RunInfo) -> Started:
        from mlflow.entities import ViewType
        from mlflow.tracking import MlflowClient

        mlflow = self._mlflow
        uri = run.env.get(MLFLOW_TRACKING_URI_ENV, "").strip()
        if uri:  # the job's (os.environ in a pod; the mapping a caller handed the Tracker otherwise)
            mlflow.set_tracking_uri(uri)
        # Credentials (MLFLOW_TRACKING_TOKEN, ..._USERNAME / ..._PASSWORD) MLflow reads from the environment.
        self._client = MlflowClient(uri or None)
        name = run.env.get(MLFLOW_EXPERIMENT_NAME_ENV, "").strip() or run.job
        experiment_id = self._experiment(name)
        # Without a run id (a script started by hand) there is no run to come back to: a new one each time.
        found: list[Any] = []
        if run.run_id:
            found = self._client.search_runs(
                [experiment_id],
                filter_string=f"tags.`{RUN_TAG}` = '{_quoted(run.name)}'",
                run_view_type=ViewType.ACTIVE_ONLY,
                max_results=1,
                order_by=["attributes.start_time ASC"],
            )
        if found:
            active = mlflow.start_run(run_id=found[0].info.run_id)
        else:
            tags = {JOB_TAG: run.job, **({RUN_TAG: run.name, RUN_ID_TAG: run.run_id} if run.run_id else {})}
            active = mlflow.start_run(experiment_id=experiment_id, run_name=run.name, tags=tags)
        self._run_id = active.info.run_id
        uri = str(mlflow.get_tracking_uri())
        return Started(
            resumed=bool(found),
            url=mlflow_run_url(uri, experiment_id, self._run_id),
            where=f"run id {self._run_id}, experiment {name} (id {experiment_id}) at {shown_uri(uri)}",
            link=_short({MLFLOW_RUN_METRIC: self._run_id, MLFLOW_EXPERIMENT_METRIC: experiment_id}),
        )

    def _experiment(self, name: str) -> str:
        from mlflow.exceptions import MlflowException

        experiment = self._client.get_experiment_by_name(name)
        if experiment is None:
            try:
                return str(self._client.create_experiment(name))
            except MlflowException:  # another job created it meanwhile: use that one
                experiment = self._client.get_experiment_by_name(name)
                if experiment is None:
                    raise
        if experiment.lifecycle_stage == "deleted":
            raise TrackingError(
                f"MLflow experiment {name!r} is deleted: restore it (mlflow experiments restore --experiment-id "
                f"{experiment.experiment_id}) or name another one in spec.tracking.mlflow.experiment"
            )
        return str(experiment.experiment_id)

    def log_metrics(self, step: int, metrics: Mapping[str, float]) -> None:
        import time

        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self._client.log_batch(self._run_id, metrics=[Metric(k, v, now, step) for k, v in metrics.items()])

    def log_params(self, params: Mapping[str, Any]) -> list[str]:
        """Log each parameter; returns the names MLflow refused (a resumed run whose value changed)."""
        from mlflow.exceptions import MlflowException

        refused = []
        for name, value in params.items():
            try:
                self._client.log_param(self._run_id, name, value)
            except MlflowException:
                refused.append(name)
        return refused

    def finish(self, status: str) -> None:
        self._mlflow.end_run(status)


class WandbBackend:
    """Weights & Biases: ``wandb.init`` with a run id derived from the run's name and ``resume="allow"``."""

    library = "wandb"

    def __init__(self) -> None:
        import wandb

        self._wandb = wandb
        self._run: Any = None

    def start(self, run: RunInfo) -> Started:
        # Without a run id (a script started by hand) there is no run to come back to: W&B picks a new id.
        given = wandb_run_id(run.name) if run.run_id else None
        active = self._wandb.init(
            id=given,
            resume="allow" if given else None,
            name=run.name,
            group=run.job,
            project=run.env.get(WANDB_PROJECT_ENV) or None,
            entity=run.env.get(WANDB_ENTITY_ENV) or None,
        )
        self._run = active
        # Our own x-axis: a resumed run logs again the steps since its checkpoint (W&B's own step
        # only grows, and would drop them).
        active.define_metric("step")
        active.define_metric("*", step_metric="step")
        run_id = str(active.id)
        url = getattr(active, "url", None) or None
        entity, project = str(getattr(active, "entity", "") or ""), str(getattr(active, "project", "") or "")
        link = {WANDB_RUN_METRIC: run_id, WANDB_PROJECT_METRIC: project, WANDB_ENTITY_METRIC: entity}
        offline = getattr(getattr(active, "settings", None), "mode", "") == "offline"
        where = f"run id {run_id}, project {project or '?'}" + (
            " (offline: `wandb sync` uploads it)" if offline else ""
        )
        return Started(resumed=bool(getattr(active, "resumed", False)), url=url, where=where, link=_short(link))

    def log_metrics(self, step: int, metrics: Mapping[str, float]) -> None:
        self._run.log({**metrics, "step": step})

    def log_params(self, params: Mapping[str, Any]) -> list[str]:
        if params:
            self._run.config.update(dict(params), allow_val_change=True)
        return []

    def finish(self, status: str) -> None:
        self._run.finish(exit_code=0 if status == "FINISHED" else 1)


def _quoted(value: str) -> str:
    """``value`` inside single quotes of an MLflow search filter."""
    return value.replace("\\", "\\\\").replace("'", "\\'")


#: Backend by ``TRAINSPEC_TRACKING`` value.
BACKENDS: dict[str, type[MlflowBackend] | type[WandbBackend]] = {"mlflow": MlflowBackend, "wandb": WandbBackend}
