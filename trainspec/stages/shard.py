"""``python -m trainspec.stages.shard``: the dataset-initializer stage that shards a dataset.

Reads ``STORAGE_URI`` (or ``--source``) and writes ``$TRAINSPEC_DATA_DIR/manifest.json``
atomically, and exits 0 at once when an identical output already exists. Index mode (the
default for contiguous assignment) writes only the manifest: each shard's byte ranges (jsonl,
text), row groups (parquet) or whole files (files) of the source, read in place by
``my_shards()``. Copy mode (``--mode copy``; the default for hashed and round-robin) also
writes ``shards/...`` files. ``manifest.py`` documents the manifest.
Exit codes: 0 done or cache hit, 1 a problem with the input or output, 2 bad usage
(flags or environment variables), 130/143 interrupted. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

# The in-pod contract's names, shared with the compiler (a standard-library module).
from trainspec.dsl.kube_facts import (
    DATA_DIR_ENV,
    DATA_FORMAT_ENV,
    INT64_MAX,
    NUM_SHARDS_ENV,
    SEED_MAX,
    SHARD_ASSIGNMENT_ENV,
    SHARD_BALANCE_ENV,
    SHARD_BY_ENV,
    SHARD_CHECKSUM_ENV,
    SHARD_MODE_ENV,
    SHARD_SEED_ENV,
    STORAGE_URI_ENV,
)
from trainspec.stages.config import (
    ASSIGNMENTS,
    BALANCES,
    CHECKSUMS,
    FORMATS,
    MODES,
    SHARD_BY,
    Config,
    Options,
    Settings,
    default_mode,
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
    "mode": (SHARD_MODE_ENV, None),  # None: the assignment's default (index for contiguous)
    "balance": (SHARD_BALANCE_ENV, "records"),
    "checksum": (SHARD_CHECKSUM_ENV, "none"),
}
#: Settings with a fixed set of values, and those values.
_CHOICES = (
    ("format", FORMATS),
    ("shard_by", SHARD_BY),
    ("assignment", ASSIGNMENTS),
    ("mode", MODES),
    ("balance", BALANCES),
    ("checksum", CHECKSUMS),
)


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
        "--mode",
        metavar="MODE",
        help="index: write only the manifest of byte ranges/row groups/files (default for contiguous); "
        "copy: also write shard files (default, and the only mode, for hashed and round-robin) "
        f"[env {SHARD_MODE_ENV}]",
    )
    add(
        "--balance",
        metavar="BY",
        help="contiguous boundaries by records (counts within one; one counting pass) or by bytes "
        f"(a seek per boundary, no full scan) (default records) [env {SHARD_BALANCE_ENV}]",
    )
    add(
        "--checksum",
        metavar="ALG",
        help=f"{' | '.join(CHECKSUMS)}: checksum of every source file (index) or shard (copy) "
        f"(default none; xxh3 needs the xxhash package) [env {SHARD_CHECKSUM_ENV}]",
    )
    add(
        "--count-records",
        action="store_true",
        help="with --balance bytes: also count the records of every range (one full read)",
    )
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
        help="on a cache check, recompute every recorded checksum (default: sizes only)",
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
    if raw["mode"][0] is None:
        raw["mode"] = (default_mode(str(raw["assignment"][0])), raw["mode"][1])
    for dest, allowed in _CHOICES:
        value, origin = raw[dest]
        if value is None:
            raise UsageError(f"no {dest.replace('_', ' ')}: pass --{dest.replace('_', '-')} or set {ENV_VARS[dest][0]}")
        if value not in allowed:
            raise UsageError(
                f"unknown {dest.replace('_', ' ')} {value!r} (from {origin}); expected one of: {', '.join(allowed)}"
            )
    if raw["mode"][0] == "index" and raw["assignment"][0] != "contiguous":
        raise UsageError(
            f"index mode needs contiguous assignment, not {raw['assignment'][0]} "
            f"(from {raw['mode'][1]}); use --mode copy"
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
        mode=str(raw["mode"][0]),
        balance=str(raw["balance"][0]),
        checksum=str(raw["checksum"][0]),
    )
    if not -INT64_MAX - 1 <= settings.seed <= SEED_MAX:
        raise UsageError(f"seed must fit in 64 bits, got {settings.seed}")
    return Config(
        source=str(raw["source"][0]),
        output=Path(os.path.abspath(str(raw["output"][0]))),
        settings=settings,
        options=Options(
            validate=args.validate,
            allow_empty_shards=args.allow_empty_shards,
            durable=args.durable,
            count_records=args.count_records,
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
    with contextlib.suppress(ValueError):  # not the main thread (embedded use): no handler, the rest works
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
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
    except Exception as exc:
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
