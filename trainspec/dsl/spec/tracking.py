"""The ``tracking`` block of a TrainingJob: the experiment tracker its rank 0 logs to.

::

    tracking: {mlflow: {uri: http://mlflow.mlflow:5000, experiment: llama-sft}}
    tracking: {wandb: {project: llama-sft, entity: nlp-team}}

Exactly one tracker. The compiler turns it into the variables the libraries read themselves
(``MLFLOW_TRACKING_URI``, ``MLFLOW_EXPERIMENT_NAME``; ``WANDB_PROJECT``, ``WANDB_ENTITY``) plus
trainspec's ``TRAINSPEC_TRACKING`` and ``TRAINSPEC_JOB_NAME``, on every rank of every engine;
``trainspec.stages.Tracker`` then logs from global rank 0 only, to a run named
``<job>-<run id>`` that a restarted pod resumes (docs/tracking.md).

Credentials never go here: a tracking server's token or password comes from the job's
``secretEnv`` (``MLFLOW_TRACKING_TOKEN``, ``MLFLOW_TRACKING_USERNAME`` and
``MLFLOW_TRACKING_PASSWORD``, ``WANDB_API_KEY``). A URI that carries a user part is TS304, as
a credential-named plain ``env`` value already is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

from trainspec.dsl import codes
from trainspec.dsl.framework.modeling import field
from trainspec.dsl.framework.types import _fail, _PlainStr, fail
from trainspec.dsl.kube_facts import (
    JOB_NAME_ENV,
    MLFLOW_EXPERIMENT_NAME_ENV,
    MLFLOW_TRACKING_URI_ENV,
    TRACKING_ENV,
    WANDB_ENTITY_ENV,
    WANDB_PROJECT_ENV,
)
from trainspec.dsl.spec.parts import _Model

if TYPE_CHECKING:
    from trainspec.dsl.spec.models import TrainingJob

__all__ = [
    "MLFLOW_SCHEMES",
    "MlflowTracking",
    "Tracking",
    "WandbTracking",
    "tracking_env_names",
    "tracking_findings",
]

#: The schemes of an MLflow tracking URI a pod can use: a tracking server (http, https), a
#: database through SQLAlchemy (``postgresql+psycopg2://`` and the like: the part before '+'
#: counts), a local store (file, sqlite: run --local, a shared volume) and Databricks.
MLFLOW_SCHEMES = ("http", "https", "file", "sqlite", "postgresql", "mysql", "mssql", "databricks")
#: Longest URI, experiment, project and entity accepted (they become env values; MLflow keeps
#: experiment names up to 500 characters, W&B project names up to 128).
URI_MAX = 2048
EXPERIMENT_MAX = 500
WANDB_NAME_MAX = 128
_URI = r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>\S*)$"  # compiled on first use (re caches it)
_URI_HINT = (
    "write the tracking server's address, such as http://mlflow.mlflow.svc:5000 or https://mlflow.example.com "
    f"(also allowed: {', '.join(s + '://' for s in MLFLOW_SCHEMES)}, or databricks)"
)

_CREDENTIAL_HINT = (
    "remove it from the URI and give the tracker its credentials through secretEnv, e.g. "
    "{MLFLOW_TRACKING_TOKEN: {secret: mlflow, key: token}} (or MLFLOW_TRACKING_USERNAME and "
    "MLFLOW_TRACKING_PASSWORD)"
)


def _tracking_uri(raw: Any) -> str:
    if not isinstance(raw, str):
        raise fail("string_type", "Input should be a valid string")
    if len(raw) > URI_MAX:
        raise _fail("ts_uri", f"the tracking URI is {len(raw)} characters long; at most {URI_MAX}", _URI_HINT)
    if raw in ("databricks", "databricks-uc"):  # MLflow's names for the Databricks workspace of the profile
        return raw
    match = re.fullmatch(_URI, raw)
    if match is None:
        raise _fail("ts_uri", f"{raw[:80]!r} is not an MLflow tracking URI (scheme://...)", _URI_HINT)
    scheme = match["scheme"].lower().split("+", 1)[0]
    if scheme not in MLFLOW_SCHEMES:
        raise _fail("ts_uri", f"scheme {match['scheme']}:// is not an MLflow tracking store", _URI_HINT)
    authority = match["rest"].split("/", 1)[0]
    if scheme in ("http", "https") and not authority.rpartition("@")[2]:
        raise _fail("ts_uri", f"{raw!r} names no host", _URI_HINT)
    if "@" in authority:  # a user part: a lone token, user:password, or a $(VAR) reference to one
        raise _fail(
            "ts_credential",
            f"the tracking URI carries a user part ({match['scheme']}://***@): a token or password written there "
            "would be committed with the manifests",
            _CREDENTIAL_HINT,
        )
    return raw


#: An MLflow tracking URI (``MLFLOW_TRACKING_URI``).
TrackingUri = Annotated[
    str,
    _PlainStr(
        _tracking_uri,
        {"type": "string", "maxLength": URI_MAX, "pattern": r"^(databricks(-uc)?|[A-Za-z][A-Za-z0-9+.-]*://\S*)$"},
    ),
]
#: A W&B project or entity name: no '/', '\\', '#', '?', '%', ':' (W&B refuses them) nor blanks.
_WANDB_NAME_PATTERN = r"^[^/\\#?%:\s]+$"
#: An MLflow experiment name: any printable text (Databricks names are workspace paths, with '/').
_EXPERIMENT_PATTERN = r"^[^\x00-\x1f\x7f]+$"


def _checked_name(raw: Any, what: str, pattern: str, longest: int, rule: str, hint: str) -> str:
    """``raw`` if it is a string of 1 to ``longest`` characters matching ``pattern``, else an error saying ``rule``."""
    if not isinstance(raw, str):
        raise fail("string_type", "Input should be a valid string")
    if not 0 < len(raw) <= longest:
        raise _fail("ts_value", f"{what} must be 1 to {longest} characters long (this one has {len(raw)})", hint)
    if not re.fullmatch(pattern, raw):
        raise _fail("ts_value", f"{raw[:80]!r} is not {what}: {rule}", hint)
    return raw


def _wandb_name(raw: Any) -> str:
    return _checked_name(
        raw,
        "a W&B project or entity name",
        _WANDB_NAME_PATTERN,
        WANDB_NAME_MAX,
        "W&B refuses /, \\, #, ?, %, : and blanks in it",
        "name it with letters, digits, '-', '_' and '.', as it is shown in W&B",
    )


def _experiment_name(raw: Any) -> str:
    return _checked_name(
        raw,
        "an MLflow experiment name",
        _EXPERIMENT_PATTERN,
        EXPERIMENT_MAX,
        "control characters are not allowed in it",
        "write the experiment's name on one line, without tabs",
    )


#: A W&B project or entity name.
WandbName = Annotated[
    str,
    _PlainStr(
        _wandb_name, {"type": "string", "minLength": 1, "maxLength": WANDB_NAME_MAX, "pattern": _WANDB_NAME_PATTERN}
    ),
]
#: An MLflow experiment name.
ExperimentName = Annotated[
    str,
    _PlainStr(
        _experiment_name,
        {"type": "string", "minLength": 1, "maxLength": EXPERIMENT_MAX, "pattern": _EXPERIMENT_PATTERN},
    ),
]


class MlflowTracking(_Model):
    """Log to MLflow: a tracking server (or store) and the experiment the runs go in."""

    uri: TrackingUri = field(
        description="MLFLOW_TRACKING_URI: the tracking server (http://mlflow.mlflow.svc:5000), or a store "
        "(sqlite:///..., file:///..., postgresql://...), or databricks. No credentials: give them with secretEnv "
        "(MLFLOW_TRACKING_TOKEN, or MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD).",
    )
    experiment: ExperimentName | None = field(
        default=None,
        description="MLFLOW_EXPERIMENT_NAME (default: the job's name); created on first use.",
    )


class WandbTracking(_Model):
    """Log to Weights & Biases: the project (and entity) the runs go in."""

    project: WandbName | None = field(
        default=None,
        description="WANDB_PROJECT (default: the job's name).",
    )
    entity: WandbName | None = field(
        default=None,
        description="WANDB_ENTITY: the team or user (default: the API key's default entity). The API key comes "
        "from secretEnv: {WANDB_API_KEY: {secret: ..., key: ...}}.",
    )


class Tracking(_Model):
    """The experiment tracker of a job: exactly one of mlflow and wandb."""

    mlflow: MlflowTracking | None = field(default=None, description="Log to MLflow.")
    wandb: WandbTracking | None = field(default=None, description="Log to Weights & Biases.")

    def _check(self) -> None:
        chosen = [name for name in ("mlflow", "wandb") if getattr(self, name) is not None]
        if len(chosen) != 1:
            raise _fail(
                "ts_value",
                "tracking names both mlflow and wandb: a job logs to one tracker"
                if chosen
                else "tracking names no tracker",
                "keep exactly one of tracking.mlflow {uri, experiment} and tracking.wandb {project, entity}",
            )

    @property
    def kind(self) -> str:
        """``mlflow`` or ``wandb``: the value of ``TRAINSPEC_TRACKING``."""
        return "mlflow" if self.mlflow is not None else "wandb"

    def env(self, job_name: str) -> dict[str, str]:
        """The variables this block compiles to, for the job named ``job_name``."""
        values = {TRACKING_ENV: self.kind, JOB_NAME_ENV: job_name}
        if self.mlflow is not None:
            values[MLFLOW_TRACKING_URI_ENV] = self.mlflow.uri
            values[MLFLOW_EXPERIMENT_NAME_ENV] = self.mlflow.experiment or job_name
        elif self.wandb is not None:
            values[WANDB_PROJECT_ENV] = self.wandb.project or job_name
            if self.wandb.entity is not None:
                values[WANDB_ENTITY_ENV] = self.wandb.entity
        return values


def tracking_env_names(tracking: Tracking) -> tuple[str, ...]:
    """The variables a ``tracking`` block sets (what the job's own env may not set too)."""
    return tuple(tracking.env("job"))


#: A finding, as :mod:`trainspec.dsl.spec.semantics` reports them: (code, field path, message, hint).
Finding = tuple[codes.Code, tuple[Any, ...], str, str]


def tracking_findings(job: TrainingJob) -> Iterator[Finding]:
    """TS303 for a variable that both the job's env (or secretEnv) and its tracking block set."""
    tracking = job.spec.tracking
    if tracking is None:
        return
    field_of = {
        MLFLOW_TRACKING_URI_ENV: "tracking.mlflow.uri",
        MLFLOW_EXPERIMENT_NAME_ENV: "tracking.mlflow.experiment",
        WANDB_PROJECT_ENV: "tracking.wandb.project",
        WANDB_ENTITY_ENV: "tracking.wandb.entity",
    }
    for where, names in (("env", job.spec.env), ("secretEnv", job.spec.secret_env)):
        for name in names:
            if name in field_of and name in tracking_env_names(tracking):
                yield (
                    codes.RESERVED_ENV,
                    ("spec", where, name),
                    f"{name} is set by trainspec from spec.{field_of[name]}",
                    f"remove {name} from {where}; set spec.{field_of[name]} instead",
                )
