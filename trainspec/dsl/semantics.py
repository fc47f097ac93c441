"""Checks inside one job spec that need nothing else: env clashes, reserved names, credentials."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache

from trainspec.dsl.models import TrainingJob

# The names trainspec sets in trainer pods (the in-pod contract), reserved whatever the runtime.
# The names Kubeflow Trainer sets depend on the runtime's framework, known only after resolve:
# that half of TS303 is a plan rule (trainspec.compiler.rules).
from trainspec.dsl.wellknown import TRAINSPEC_ENV

__all__ = ["TRAINSPEC_ENV", "Finding", "check_job", "looks_like_credential"]

# Shapes of well-known credentials. A match in a plain env value is an error: it would land in
# a manifest in a Git repository. Each pattern is specific enough to keep false alarms rare.
# Patterns as text, compiled on first use (a job without env never needs them; compiling all of
# them at import cost every command's start-up about 1 ms).
_CREDENTIALS: tuple[tuple[str, str], ...] = (
    ("an AWS access key id", r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("a GitHub token", r"\b(ghp|gho|ghs|ghu|github_pat)_[A-Za-z0-9_]{20,}\b"),
    ("an OpenAI-style API key", r"\bsk-[A-Za-z0-9_-]{20,}\b"),
    ("a Slack token", r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b"),
    ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ("a bearer token", r"\b(?i:bearer)\s+[A-Za-z0-9._~+/-]{20,}=*"),
    ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    ("a password in a URL", r"://[^/\s:@]+:[^/\s@]{3,}@"),
)
# Names that say "secret" get a stricter test: any long, high-entropy-looking value.
_SECRET_NAME = r"(?i)(SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL)"  # noqa: S105
_OPAQUE_VALUE = r"^[A-Za-z0-9+/=_\-.]{16,}$"


@cache
def _compiled() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """One alternation (one scan per value: group i names _CREDENTIALS[i]), the secret-name test
    and the opaque-value test."""
    alternation = "|".join(f"(?P<c{i}>{pattern})" for i, (_, pattern) in enumerate(_CREDENTIALS))
    return re.compile(alternation), re.compile(_SECRET_NAME), re.compile(_OPAQUE_VALUE)


def looks_like_credential(name: str, value: str) -> str | None:
    """What credential ``value`` looks like, or None."""
    any_credential, secret_name, opaque_value = _compiled()
    match = any_credential.search(value)
    if match and match.lastgroup:  # every alternative is a named group, so a match names one
        return _CREDENTIALS[int(match.lastgroup[1:])][0]
    if secret_name.search(name) and opaque_value.match(value) and not value.startswith(("$(", "/")):
        return f"a secret (the name {name} says so)"
    return None


#: A finding: (code, field path, message, hint).
Finding = tuple[str, tuple, str, str]


def check_job(job: TrainingJob) -> list[Finding]:
    """All single-spec problems of ``job``."""
    findings: list[Finding] = []
    for check in _CHECKS:
        findings.extend(check(job))
    return findings


def _env_clash(job: TrainingJob) -> Iterator[Finding]:
    for name in sorted(set(job.spec.env) & set(job.spec.secret_env)):
        yield (
            "TS302",
            ("spec", "secretEnv", name),
            f"{name} is set in both env and secretEnv",
            f"remove {name} from env; the value comes from the Secret",
        )


def _reserved(job: TrainingJob) -> Iterator[Finding]:
    for field, names in (("env", job.spec.env), ("secretEnv", job.spec.secret_env)):
        for name in names:
            if name in TRAINSPEC_ENV:
                yield (
                    "TS303",
                    ("spec", field, name),
                    f"{name} is set by trainspec from the spec",
                    "use spec.checkpoint / spec.data instead of setting it by hand",
                )


def _credentials(job: TrainingJob) -> Iterator[Finding]:
    for name, value in job.spec.env.items():
        what = looks_like_credential(name, value)
        if what:
            yield (
                "TS304",
                ("spec", "env", name),
                f"the value of {name} looks like {what}",
                f"put it in a Secret and use secretEnv: {{{name}: {{secret: <name>, key: <key>}}}}",
            )


_CHECKS: tuple[Callable[[TrainingJob], Iterator[Finding]], ...] = (_env_clash, _reserved, _credentials)
