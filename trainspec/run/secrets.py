"""``secretEnv`` for local runs: values from an env file or the local environment, kept in memory.

In a cluster each ``secretEnv`` entry is a ``secretKeyRef`` the kubelet resolves from a Secret.
Locally the value of variable ``NAME`` comes from ``--env-file`` (``NAME=value`` lines), else
from the shell's ``NAME``. Values are only ever passed to the child processes' environment:
nothing here writes them anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.kube_facts import ENV_NAME_PATTERN
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.run.job import EnvEntry

_NAME = re.compile(ENV_NAME_PATTERN)
#: An env file larger than this is not an env file (and is not read into memory whole).
MAX_ENV_FILE_BYTES = 1 << 20


def read_env_file(path: str) -> tuple[dict[str, str], list[Diagnostic]]:
    """Parse ``NAME=value`` lines (``export`` allowed, ``#`` comments, one pair of quotes stripped)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_ENV_FILE_BYTES + 1)
    except OSError as exc:
        return {}, [_file_problem(path, None, f"cannot read the env file: {exc.strerror or exc}")]
    if len(raw) > MAX_ENV_FILE_BYTES:
        return {}, [_file_problem(path, None, f"the env file is larger than {MAX_ENV_FILE_BYTES} bytes")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {}, [_file_problem(path, None, "the env file is not UTF-8 text")]
    values: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("export "):
            stripped = stripped[len("export ") :].lstrip()
        name, sep, value = stripped.partition("=")
        name = name.strip()
        if not sep or not _NAME.match(name):
            # The line may hold a secret: never echo it, name only where it is.
            problems.append(
                _file_problem(path, number, "expected NAME=value (the line is not shown: it may hold a secret)")
            )
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[name] = value
    return values, problems


def _file_problem(path: str, line: int | None, message: str) -> Diagnostic:
    return Diagnostic(
        code=codes.ENV_FILE,
        message=message,
        file=path,
        line=line,
        column=1 if line else None,
        path="--env-file",
        hint="one NAME=value per line; # starts a comment",
    )


def resolve_secrets(
    entries: Iterable[EnvEntry],
    *,
    file_values: Mapping[str, str],
    environ: Mapping[str, str],
    loaded: LoadedSpec,
    env_file: str | None,
) -> tuple[dict[str, str], list[Diagnostic]]:
    """The value of every secret reference among ``entries``; TS701 for each that has none."""
    values: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for entry in entries:
        if entry.secret is None:
            continue
        if entry.name in file_values:
            values[entry.name] = file_values[entry.name]
        elif entry.name in environ:
            values[entry.name] = environ[entry.name]
        else:
            secret, key = entry.secret
            where = f"--env-file {env_file} nor the local environment" if env_file else "the local environment"
            problems.append(
                loaded.diagnostic(
                    codes.LOCAL_SECRET_MISSING,
                    ("spec", "secretEnv", entry.name),
                    f"{entry.name} comes from key {key!r} of Secret {secret!r} in the cluster; locally its value is in "
                    f"neither {where}",
                    hint=f"export {entry.name}=... before running, or put {entry.name}=... in a file given with "
                    "--env-file (the value is passed to the processes only, never written to disk)",
                )
            )
    return values, problems


def read_secret_file_values(env_file: str | None) -> tuple[dict[str, str], list[Diagnostic]]:
    """The env file's values (none without ``--env-file``)."""
    if env_file is None:
        return {}, []
    if not Path(env_file).is_file():
        return {}, [_file_problem(env_file, None, "no such env file")]
    return read_env_file(env_file)
