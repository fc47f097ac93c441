"""Standard input as a source of specs and manifests: ``-`` on the command line, as in ``kubectl -f -``.

* Read once (``-`` given twice is one TS100: :func:`trainspec.dsl.load.discovery.split_stdin`), in
  pieces until end of input, and never beyond the size cap a file has (TS102).
* Empty input is a TS108 warning: a producer that failed upstream of the pipe must not pass for
  "no specs, all fine".
* YAML only. A Python spec module is code, and code that comes through a pipe is never run: text
  that is not valid YAML but is a spec module is refused with one TS123 (save it as a file),
  rather than the YAML syntax errors Python source would give.
"""

from __future__ import annotations

import sys
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.load.discovery import STDIN_NAME

__all__ = ["python_refusal", "read_stdin"]

_HINT = "pipe the specs in (cat job.yaml | trainspec validate -), or name the files"
#: Bytes asked for per read: a pipe or terminal hands over what it has, often less.
_CHUNK = 1 << 16


def read_stdin(max_bytes: int, stream: Any = None) -> tuple[bytes | None, list[Diagnostic]]:
    """Standard input's bytes (``stream``: a binary stream instead), or None and why not."""
    source = stream if stream is not None else getattr(sys.stdin, "buffer", sys.stdin)
    chunks: list[bytes] = []
    size = 0
    try:
        if source is None:  # no standard input at all (a daemon, pythonw)
            raise OSError("standard input is closed")
        while size <= max_bytes:
            chunk = source.read(min(_CHUNK, max_bytes + 1 - size))
            if not chunk:
                break
            chunk = chunk.encode("utf-8", "surrogateescape") if isinstance(chunk, str) else bytes(chunk)
            chunks.append(chunk)
            size += len(chunk)
    except (OSError, ValueError) as exc:
        return None, [
            Diagnostic(codes.UNREADABLE_FILE, f"cannot read standard input: {exc}", file=STDIN_NAME, hint=_HINT)
        ]
    if size > max_bytes:
        too_big = Diagnostic(
            codes.FILE_TOO_LARGE,
            f"standard input holds more than the {max_bytes}-byte cap; not parsed",
            file=STDIN_NAME,
            hint="split the input, or raise the cap with --max-file-size if this is intended",
        )
        return None, [too_big]
    data = b"".join(chunks)
    if not data.strip():
        empty = Diagnostic(
            codes.EMPTY_DOCUMENT,
            "standard input is empty: no spec read from `-`",
            Severity.WARNING,
            file=STDIN_NAME,
            hint=_HINT,
        )
        return None, [empty]
    return data, []


def python_refusal(data: bytes) -> Diagnostic | None:
    """TS123 when ``data`` (which did not load as YAML) is a Python spec module, else None."""
    from trainspec.dsl.load.python.imports import builds_specs

    if not builds_specs(data.decode("utf-8", errors="replace")):
        return None
    return Diagnostic(
        codes.PYTHON_NOT_RUN,
        "a Python spec module cannot be read from standard input: Python specs are code, "
        "and trainspec runs no code that comes through a pipe",
        file=STDIN_NAME,
        line=1,
        column=1,
        hint="save it as a .py file and name that file (Python specs run supervised, when allowed); "
        "standard input takes YAML",
    )
