"""The loader's caps, which keep hostile or accidental input cheap to reject, and ``--max-file-size``."""

from __future__ import annotations

import re

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.record import Record

#: The default file-size cap. It must admit every object the API server admits: etcd's default
#: request limit is 1.5 MiB, so an object with a 1 MiB ``command`` item is valid, and the YAML of
#: an object can be larger than its JSON (indentation, comments). 4 MiB holds the largest object
#: with room for YAML's overhead, or two such objects in one file, and keeps the worst case of a
#: hostile file (a flat list of tiny nodes composed before ``max_nodes`` can refuse it) at about
#: two seconds and a few hundred MB. ``--max-file-size`` moves it.
DEFAULT_MAX_BYTES = 4 << 20
#: ``--max-file-size`` refuses more than this: past it the cap would not protect anything.
MAX_FILE_SIZE_OPTION = 1 << 30


class LoadLimits(Record):
    """Caps that keep hostile or accidental input cheap to reject."""

    max_bytes: int = DEFAULT_MAX_BYTES  # per file
    max_nodes: int = 100_000  # value nodes visited, alias re-visits included (billion laughs)
    max_depth: int = 64  # nesting of mappings and sequences


DEFAULT_LIMITS = LoadLimits()
# Compiled on first use (re caches it): only --max-file-size needs it, not start-up.
_SIZE = r"\s*([0-9]+(?:\.[0-9]+)?)\s*(?:([kKMGT])(i?)B?|B?)\s*"
_SIZE_UNITS = {"k": 1, "K": 1, "M": 2, "G": 3, "T": 4}


def parse_size(text: str) -> int:
    """A byte count as ``--max-file-size`` takes it: ``4194304``, ``4MiB``/``4Mi`` (binary),
    ``10MB``/``10M``/``10k`` (decimal). Raises ValueError for anything else, for less than one
    byte, a fraction of a byte, or more than 1 GiB."""
    match = re.fullmatch(_SIZE, text)
    if match is None:
        raise ValueError(f"{text!r} is not a size (examples: 4194304, 4MiB, 10MB)")
    number, unit, binary = match.groups()
    base = 1024 if binary else 1000
    scaled = float(number) * base ** _SIZE_UNITS[unit] if unit else float(number)
    size = int(scaled)
    if size != scaled or ("." in number and not unit):
        raise ValueError(f"{text!r} is not a whole number of bytes")
    if not 1 <= size <= MAX_FILE_SIZE_OPTION:
        raise ValueError(f"{text!r} is out of range: between 1 byte and 1GiB")
    return size


def too_big(file: str, size: int, cap: int) -> Diagnostic:
    """The diagnostic of a file over the size cap (such a file is never parsed)."""
    return Diagnostic(
        codes.FILE_TOO_LARGE,
        f"file is {size} bytes, larger than the {cap}-byte cap; not parsed",
        Severity.ERROR,
        file,
        None,
        None,
        "",
        "split the file, or raise the cap with --max-file-size if this is intended",
    )
