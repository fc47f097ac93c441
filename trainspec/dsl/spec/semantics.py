"""Checks inside one spec that need nothing else: env clashes, reserved names, credentials.

Credentials (TS304) never land in a manifest, so never in Git. Two rules find them:

* **shapes**: a value shaped like a well-known credential (an AWS access key id, a private key,
  a Hugging Face, GitHub, Slack or OpenAI token, a JSON web token, a password in a URL...) is an
  error in any string value of a spec: env, command, args, labels, annotations, URIs, anywhere.
* **names**: a plain ``env`` value under a name that says secret (``*PASSWORD*``, ``*PASSWD*``,
  ``*TOKEN*``, ``*SECRET*``, ``*CREDENTIAL*``, ``*APIKEY*``, ``*_KEY``, ``*_PASS``) is an error
  whatever its length, unless the job lists the name in ``spec.notSecret``. Names that only say
  something *about* a secret (``*_FILE``, ``*_PATH``, ``*_NAME``, ``*_LIMIT``...) and values that
  cannot be one (empty, true/false, a ``$(VAR)`` reference, an absolute path) pass.

A message never repeats the credential: it shows a redacted prefix (``AKIA…``, ``hf_…``).
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code

# The names trainspec sets in trainer pods (the in-pod contract), reserved whatever the runtime.
# The names Kubeflow Trainer sets depend on the runtime's framework, known only after resolve:
# that half of TS303 is a plan rule (trainspec.compiler.rules).
from trainspec.dsl.kube_facts import TRAINSPEC_ENV
from trainspec.dsl.spec.models import Model, Runtime, TrainingJob
from trainspec.dsl.spec.tracking import tracking_findings

__all__ = [
    "TRAINSPEC_ENV",
    "Finding",
    "check_job",
    "check_runtime_secrets",
    "credential_shape",
    "looks_like_credential",
    "says_secret",
]

#: Shapes of well-known credentials: (what, pattern, characters of a match a message may show; -1:
#: all of it, for a private key's header, which is no secret).
#: Each pattern is specific enough to keep false alarms rare. Patterns as text, compiled on first
#: use (compiling all of them at import would cost every command's start-up about 1 ms).
_CREDENTIALS: tuple[tuple[str, str, int], ...] = (
    ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 4),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b", 3),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})", 4),
    ("an OpenAI-style API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", 3),
    ("a Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}", 5),
    ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", -1),
    ("a Google service-account key", r"\"type\"\s*:\s*\"service_account\"|\"private_key(?:_id)?\"\s*:", -1),
    ("a bearer token", r"\b(?i:bearer)\s+[A-Za-z0-9._~+/-]{20,}=*", 7),
    ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", 3),
    # user:password@ in a URL; a $(VAR) or ${VAR} password is a reference, not the password.
    ("a password in a URL", r"://[^/\s:@]+:(?!\$[({])[^/\s@]+@", 0),
)
#: No shape but a password in a URL fits in fewer characters (a Slack token's is the shortest).
_SHORTEST = 15
#: W&B API keys are 40 hex digits (``local-`` ones on a private server): only under a WANDB name.
_WANDB = ("a Weights & Biases API key", r"(?i)^wandb", r"^(?:local-)?[0-9a-f]{40}$")

# -- names that say secret ------------------------------------------------------------------------

#: A word (between '_') with one of these in it says secret; TOKEN only as a word's end, since
#: TOKENIZERS_PARALLELISM and MAX_TOKENS are about text, not credentials.
_SECRET_WORD = r"PASSWORD|PASSWD|SECRET|CREDENTIAL|APIKEY|TOKEN(?![A-Z])"  # noqa: S105 (words of names, no secret)
#: A last word that says secret on its own: AWS_SECRET_ACCESS_KEY, WANDB_API_KEY, SMTP_PASS.
_SECRET_LAST = ("KEY", "PASS")
#: A last word that makes the name about a secret rather than the secret: where it is, what it is
#: called, how large it may be (PASSWORD_FILE, TOKEN_URL, SECRET_NAME, TOKEN_LIMIT).
_ABOUT_LAST = frozenset(
    ("FILE", "FILES", "PATH", "DIR", "NAME", "URL", "URI", "ENDPOINT", "LIMIT", "LENGTH", "COUNT", "SIZE", "TYPE")
)
#: Values no secret has: settings and references.
_NOT_SECRET_VALUES = frozenset(("true", "false", "yes", "no", "on", "off", "none", "null"))
_REFERENCE = r"^(?:\$\([A-Za-z_][A-Za-z0-9_]*\))+$"  # Kubernetes expands $(VAR) from other variables
_ABSOLUTE_PATH = r"^/[^\s/]+(?:/[^\s/]*)+$"  # a file's location (/run/secrets/db), at least two levels
_URL_USER = r"://[^/\s:@]+:"  # the user part of a URL with a password


#: Text every shape needs (one of these, or "bearer" in any case): a value with none of them cannot
#: match, and most long values (images, paths, commands) have none, so the shapes are compiled and
#: scanned only for a value that might hold one.
_SHAPE_MARKERS = ("AKIA", "ASIA", "hf_", "gh", "github_pat_", "sk-", "xox", "-----BEGIN", '"', "eyJ", "://")


@cache
def _pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: a run compiles only the patterns its values need."""
    return re.compile(pattern)


@cache
def _shapes() -> re.Pattern[str]:
    """One alternation of the shapes (one scan per value: group i is _CREDENTIALS[i])."""
    return re.compile("|".join(f"(?P<c{i}>{pattern})" for i, (_, pattern, _) in enumerate(_CREDENTIALS)))


def _may_hold_shape(value: str) -> bool:
    return any(marker in value for marker in _SHAPE_MARKERS) or "bearer" in value.lower()


def _redact(value: str, keep: int = 0) -> str:
    """What a message may show of a secret: its first ``keep`` characters, then '…'."""
    return f"{value[:keep]}…"


def credential_shape(value: str, name: str = "") -> tuple[str, str] | None:
    """``(what, redacted)`` when ``value`` holds a well-known credential (``name``: the env name it
    is the value of, if any), else None."""
    if len(value) < _SHORTEST and "://" not in value:
        return None  # most values are short words and numbers: no regular expression for them
    match = _shapes().search(value) if _may_hold_shape(value) else None
    if match and match.lastgroup:  # every alternative is a named group, so a match names one
        what, _, keep = _CREDENTIALS[int(match.lastgroup[1:])]
        found = match.group()
        if what == "a password in a URL":
            return what, _url_shown(value[: match.start()], _pattern(_URL_USER).match(found))
        return what, _redact(found, len(found) if keep < 0 else min(keep, len(found) // 2))
    if name and _pattern(_WANDB[1]).match(name) and _pattern(_WANDB[2]).match(value):
        return _WANDB[0], _redact(value)
    return None


def _url_shown(before: str, user: re.Match[str] | None) -> str:
    """``scheme://user:***@`` of a URL with a password: the user only when it reads as a plain
    account name (a token can stand in the user's place too)."""
    start = len(before)
    while start and (before[start - 1].isalnum() or before[start - 1] in "+.-"):
        start -= 1
    name = user.group()[3:-1] if user else ""
    plain = len(name) <= 16 and name.replace("-", "").replace("_", "").replace(".", "").isalnum()
    return f"{before[start:]}://{name if plain else _redact(name, 2)}:***@"


def says_secret(name: str) -> bool:
    """Whether the environment name ``name`` says its value is a secret (see the module's rules)."""
    words = name.upper().split("_")
    last = words[-1]
    if last in _ABOUT_LAST:
        return False
    secret_word = _pattern(_SECRET_WORD)
    return last in _SECRET_LAST or any(secret_word.search(word) for word in words)


def _plain_secret(name: str, value: str) -> bool:
    """A value under a name that says secret, that is not empty, a setting or a reference."""
    if (
        not value
        or value.lower() in _NOT_SECRET_VALUES
        or _pattern(_REFERENCE).match(value)
        or _pattern(_ABSOLUTE_PATH).match(value)
    ):
        return False
    return says_secret(name)


def looks_like_credential(name: str, value: str) -> str | None:
    """What credential the env value ``value`` of ``name`` looks like, or None."""
    found = credential_shape(value, name)
    if found:
        return found[0]
    if _plain_secret(name, value):
        return f"a secret (the name {name} says so)"
    return None


#: A finding: (code, field path, message, hint).
Finding = tuple[Code, tuple, str, str]


def check_job(job: TrainingJob) -> list[Finding]:
    """All single-spec problems of ``job``."""
    findings: list[Finding] = []
    for check in _CHECKS:
        findings.extend(check(job))
    return findings


def check_runtime_secrets(runtime: Runtime) -> list[Finding]:
    """TS304 for every string value of ``runtime`` shaped like a credential."""
    return list(_shaped(runtime, skip=()))


def _env_clash(job: TrainingJob) -> Iterator[Finding]:
    for name in sorted(set(job.spec.env) & set(job.spec.secret_env)):
        yield (
            codes.ENV_SECRET_CLASH,
            ("spec", "secretEnv", name),
            f"{name} is set in both env and secretEnv",
            f"remove {name} from env; the value comes from the Secret",
        )


def _reserved(job: TrainingJob) -> Iterator[Finding]:
    for field, names in (("env", job.spec.env), ("secretEnv", job.spec.secret_env)):
        for name in names:
            if name in TRAINSPEC_ENV:
                yield (
                    codes.RESERVED_ENV,
                    ("spec", field, name),
                    f"{name} is set by trainspec from the spec",
                    "use spec.checkpoint / spec.data instead of setting it by hand",
                )


_SECRET_HINT = "put it in a Secret and use secretEnv: {{{name}: {{secret: <name>, key: <key>}}}}"  # noqa: S105 (a hint)


def _credentials(job: TrainingJob) -> Iterator[Finding]:
    """TS304 in env: a credential's shape, or a name that says secret over a plain value."""
    # A name in secretEnv too is TS302 already (remove it from env): one finding for one problem.
    exempt = {*job.spec.not_secret, *job.spec.secret_env}
    for name, value in job.spec.env.items():
        shape = credential_shape(value, name)
        if shape is not None:
            what, shown = shape
            yield (
                codes.CREDENTIAL,
                ("spec", "env", name),
                f"the value of {name} looks like {what} ({shown})",
                _SECRET_HINT.format(name=name),
            )
        elif name not in exempt and _plain_secret(name, value):
            yield (
                codes.CREDENTIAL,
                ("spec", "env", name),
                (
                    f"{name} names a secret, and its value ({_redact(value, min(2, len(value) // 6))}, "
                    f"{len(value)} characters) is plain text that would be committed with the manifests"
                ),
                _SECRET_HINT.format(name=name) + f"; if the value is not a secret, list {name} in spec.notSecret",
            )
    for index, name in enumerate(job.spec.not_secret):
        if name not in job.spec.env:
            yield (
                codes.OUT_OF_RANGE,
                ("spec", "notSecret", index),
                f"notSecret lists {name}, which spec.env does not set",
                "remove it: a stale entry would let a secret added later under that name pass unnoticed",
            )


def _other_values(job: TrainingJob) -> Iterator[Finding]:
    """TS304 for credential shapes in every string value of the job but env (checked above)."""
    return _shaped(job, skip=(("spec", "env"),))


def _shaped(spec: Model, skip: tuple[tuple[str, ...], ...]) -> Iterator[Finding]:
    for path, value in _strings(spec):
        if value == RUN_ID_PLACEHOLDER:
            yield (
                codes.RUN_ID_PLACEHOLDER,
                path,
                (
                    f"{value!r} is the text trainspec writes where the job's run id goes, then replaces with "
                    "the id: this value would be replaced too"
                ),
                "use another value",
            )
            continue
        if path[:2] in skip:
            continue
        env_name = str(path[-1]) if path[-2:-1] == ("env",) else ""
        found = credential_shape(value, env_name)
        if found is None:
            continue
        what, shown = found
        yield (
            codes.CREDENTIAL,
            path,
            f"this value looks like {what} ({shown}): specs and the manifests compiled from them are committed",
            (
                "keep credentials in Secrets: pass one to the trainer with secretEnv and write $(NAME) where "
                "command or args need it"
            ),
        )


#: What lowering writes where a job's run id goes (pod labels, ``TRAINSPEC_RUN_ID``): the id is a
#: digest of the objects with this text in place, then put there (trainspec.compiler.runs). A
#: valid label value, so every rule that looks at a lowered object accepts it; and so a value a
#: spec could hold as well, which would be replaced with it (TS316).
RUN_ID_PLACEHOLDER = "trainspec-run-id-0"  # longer than _SHORTEST: _strings looks at it


def _strings(spec: Model) -> list[tuple[tuple[Any, ...], str]]:
    """Every plain string of a spec model that may hold a credential (see :func:`credential_shape`:
    long enough, or a URL), with its field path (YAML names); keys are names, not values. A loop
    over a stack, not recursion, through the fields that can hold text only, and no path made for
    the short words most values are: it runs on every spec of every command."""
    found: list[tuple[tuple[Any, ...], str]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), spec)]
    while stack:
        path, value = stack.pop()
        if type(value) is str:
            found.append((path, value))
        elif isinstance(value, Model):
            for name, alias in _text_fields(type(value)):
                item = getattr(value, name)
                if item is not None and _worth_a_look(item):
                    stack.append(((*path, alias), item))
        elif isinstance(value, dict):
            stack.extend(((*path, key), item) for key, item in value.items() if _worth_a_look(item))
        elif isinstance(value, (list, tuple)):
            stack.extend(((*path, index), item) for index, item in enumerate(value) if _worth_a_look(item))
    return found


def _worth_a_look(value: Any) -> bool:
    """False for a string no credential shape can match (the first test of credential_shape)."""
    return type(value) is not str or len(value) >= _SHORTEST or "://" in value


_TEXT_FIELDS: dict[type[Model], tuple[tuple[str, str], ...]] = {}


def _text_fields(model: type[Model]) -> tuple[tuple[str, str], ...]:
    """(name, YAML name) of the fields of ``model`` whose values can hold free text: strings,
    their lists and mappings, nested models; not numbers, enums, quantities or durations."""
    fields = _TEXT_FIELDS.get(model)
    if fields is None:
        fields = _TEXT_FIELDS[model] = tuple(
            (name, spec_field.alias or name)
            for name, spec_field in model.model_fields.items()
            if _holds_text(spec_field.annotation)
        )
    return fields


def _holds_text(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _holds_text(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_holds_text(arg) for arg in typing.get_args(annotation))
    if origin in (list, tuple, dict):
        return _holds_text(typing.get_args(annotation)[-1])
    if not isinstance(annotation, type):
        return False  # Literal choices and the like: fixed words, never a credential
    return annotation is str or issubclass(annotation, Model)


_CHECKS: tuple[Callable[[TrainingJob], Iterator[Finding]], ...] = (
    _env_clash,
    _reserved,
    _credentials,
    _other_values,
    tracking_findings,  # a user part in the tracking URI (TS304), env that spec.tracking sets (TS303)
)
