"""``python -m trainspec.stages.shard``: the dataset-initializer stage that writes data shards.

Reads ``STORAGE_URI`` (or ``--source``), writes ``$TRAINSPEC_DATA_DIR/shards/...`` and
``manifest.json`` atomically, and exits 0 at once when an identical output already exists.
Exit codes: 0 done or cache hit, 1 a problem with the input or output, 2 bad usage
(flags or environment variables), 130/143 interrupted. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

# The in-pod contract's names, shared with the compiler (a standard-library module).
from trainspec.dsl.wellknown import (
    DATA_DIR_ENV, DATA_FORMAT_ENV, INT64_MAX, NUM_SHARDS_ENV, SEED_MAX, SHARD_ASSIGNMENT_ENV, SHARD_BY_ENV,
    SHARD_SEED_ENV, STORAGE_URI_ENV,
)
from trainspec.stages.config import (
    ASSIGNMENTS,
    FORMATS,
    SHARD_BY,
    Config,
    Options,
    Settings,
)
from trainspec.stages.errors import StageError, UsageError
from trainspec.stages.runner import PROG, run

DEFAULT_OUTPUT = "/workspace/dataset"

#: flag destination -> (environment variable, default); flags win over the environment.
ENV_VARS: dict[str, tuple[str, str | None]] = {
    "source": (STORAGE_URI_ENV, None),
    "format": (DATA_FORMAT_ENV, None),
    "num_shards": (NUM_SHARDS_ENV, None),
    "shard_by": (SHARD_BY_ENV, "rank"),
    "assignment": (SHARD_ASSIGNMENT_ENV, "contiguous"),
    "seed": (SHARD_SEED_ENV, "0"),
    "output": (DATA_DIR_ENV, DEFAULT_OUTPUT),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + error
        raise UsageError(f"{message} (see --help)")


class _Terminated(BaseException):
    """SIGTERM (pod deletion) arrived: unwind so the staging directory is removed."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; each flag's help names the environment variable it overrides."""
    p = _Parser(
        prog=PROG,
        description="Split a dataset into N shards plus a manifest for the trainer pods "
        "(Kubeflow Trainer dataset-initializer stage). Each setting comes from its flag, "
        "else from its environment variable, else from the default.",
        epilog="Exit codes: 0 done or cache hit; 1 input/output problem; 2 usage error.",
    )
    add = p.add_argument
    add(
        "--source",
        metavar="URI",
        help="path, directory, glob, pvc://claim/path, s3://, gs:// or other fsspec URL [env STORAGE_URI]",
    )
    add("--format", metavar="FMT", help=f"record format: {' | '.join(FORMATS)} [env TRAINSPEC_DATA_FORMAT]")
    add("--num-shards", metavar="N", help="number of shards, >= 1 [env TRAINSPEC_NUM_SHARDS]")
    add(
        "--shard-by",
        metavar="UNIT",
        help=f"who reads a shard: {' | '.join(SHARD_BY)} (default rank) [env TRAINSPEC_SHARD_BY]",
    )
    add(
        "--assignment",
        metavar="HOW",
        help=f"{' | '.join(ASSIGNMENTS)} (default contiguous) [env TRAINSPEC_SHARD_ASSIGNMENT]",
    )
    add("--seed", metavar="INT", help="seed of hashed assignment (default 0) [env TRAINSPEC_SHARD_SEED]")
    add(
        "--output",
        metavar="DIR",
        help=f"output directory (default {DEFAULT_OUTPUT}) [env TRAINSPEC_DATA_DIR]",
    )
    add(
        "--validate",
        action="store_true",
        help="check every record (jsonl: valid JSON; text: UTF-8) before writing",
    )
    add(
        "--allow-empty-shards",
        action="store_true",
        help="allow fewer records than shards (some shards empty)",
    )
    add("--force", action="store_true", help="re-shard even if the output already matches")
    add(
        "--verify",
        action="store_true",
        help="on a cache check, recompute every shard's sha256 (default: sizes only)",
    )
    add(
        "--no-fsync",
        dest="durable",
        action="store_false",
        help="skip fsync (faster; a killed process still leaves no partial output, a node crash might)",
    )
    return p


def _int(name: str, origin: str, value: str, minimum: int | None = None) -> int:
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"{name} must be an integer, got {value!r} (from {origin})") from None
    if minimum is not None and number < minimum:
        raise UsageError(f"{name} must be >= {minimum}, got {number} (from {origin})")
    return number


def parse_config(argv: Sequence[str] | None, env: Mapping[str, str]) -> Config:
    """Merge flags over environment over defaults, and validate; raises :class:`UsageError`."""
    args = build_parser().parse_args(argv)
    raw: dict[str, tuple[str | None, str]] = {}
    for dest, (var, default) in ENV_VARS.items():
        flag = "--" + dest.replace("_", "-")
        if getattr(args, dest) is not None:
            raw[dest] = (getattr(args, dest), flag)
        elif env.get(var):
            raw[dest] = (env[var], var)
        else:
            raw[dest] = (default, f"{flag} / {var}")
    for dest, allowed in (("format", FORMATS), ("shard_by", SHARD_BY), ("assignment", ASSIGNMENTS)):
        value, origin = raw[dest]
        if value is None:
            raise UsageError(
                f"no {dest.replace('_', ' ')}: pass --{dest.replace('_', '-')} or set {ENV_VARS[dest][0]}"
            )
        if value not in allowed:
            raise UsageError(
                f"unknown {dest.replace('_', ' ')} {value!r} (from {origin}); "
                f"expected one of: {', '.join(allowed)}"
            )
    if raw["num_shards"][0] is None:
        raise UsageError("no shard count: pass --num-shards or set TRAINSPEC_NUM_SHARDS")
    if raw["source"][0] is None:
        raise UsageError("no source: pass --source or set STORAGE_URI")
    settings = Settings(
        format=str(raw["format"][0]),
        num_shards=_int("number of shards", raw["num_shards"][1], str(raw["num_shards"][0]), 1),
        shard_by=str(raw["shard_by"][0]),
        assignment=str(raw["assignment"][0]),
        seed=_int("seed", raw["seed"][1], str(raw["seed"][0])),
    )
    if not -INT64_MAX - 1 <= settings.seed <= SEED_MAX:
        raise UsageError(f"seed must fit in 64 bits, got {settings.seed}")
    return Config(
        source=str(raw["source"][0]),
        output=Path(os.path.abspath(str(raw["output"][0]))),
        settings=settings,
        options=Options(
            validate=args.validate, allow_empty_shards=args.allow_empty_shards, durable=args.durable
        ),
        force=args.force,
        verify=args.verify,
    )


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Console entry point (``trainspec-shard``); returns the exit code, never raises."""
    env = os.environ if env is None else env
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (embedded use): no handler, the rest still works
        pass
    try:
        return run(parse_config(argv, env), env)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except StageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; partial output removed", file=sys.stderr)
        return 130
    except _Terminated:
        print(f"{PROG}: terminated; partial output removed", file=sys.stderr)
        return 143
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"{PROG}: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - never a traceback in the pod log; one line that can be reported
        print(
            f"{PROG}: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            file=sys.stderr,
        )
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
