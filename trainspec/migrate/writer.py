"""Render migrated specs as YAML and write them, never over a file trainspec migrate did not write.

Each output file starts with a header that names its source and the digest of the specs below
it. A file is only ever replaced when that header is there and the digest still matches (so
trainspec wrote it and nobody edited it since); anything else in the way is TS545 and nothing
of that file is written. Files are written atomically (a temporary file, then a rename).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity

HEADER = "# Migrated by trainspec migrate from {source} (sha256:{digest}). Review its warnings, then edit freely.\n"
_HEADER = re.compile(r"^# Migrated by trainspec migrate from .* \(sha256:([0-9a-f]{16})\)\. .*\n")


def render(documents: list[dict[str, Any]]) -> str:
    """The specs as one YAML stream, through the compiler's emitter (quoting, block strings, no sorting)."""
    from trainspec.compiler.emit import dump_objects

    return dump_objects(documents)


def digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def with_header(source: str, body: str) -> str:
    return HEADER.format(source=source, digest=digest(body)) + body


def written_by_us(text: str) -> bool:
    """Whether ``text`` is a file trainspec migrate wrote, unchanged since."""
    match = _HEADER.match(text)
    return match is not None and digest(text[match.end() :]) == match.group(1)


@dataclass
class WriteReport:
    """What writing the output directory did."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def write_files(directory: str, files: dict[str, str]) -> WriteReport:
    """Write ``files`` (name -> text) under ``directory``; refuse (TS545) any file in the way."""
    report = WriteReport()
    root = Path(directory)
    if root.exists() and not root.is_dir():
        report.diagnostics.append(_refused(directory, "is not a directory"))
        return report
    for name, text in sorted(files.items()):
        target = root / name
        display = str(target)
        if os.path.islink(target):
            report.diagnostics.append(_refused(display, "is a symbolic link"))
            continue
        if target.exists():
            if not target.is_file():
                report.diagnostics.append(_refused(display, "is in the way and is not a file"))
                continue
            current = target.read_text(encoding="utf-8", errors="replace")
            if current == text:
                report.unchanged.append(display)
                continue
            if not written_by_us(current):
                why = (
                    "was edited since trainspec migrate wrote it"
                    if _HEADER.match(current)
                    else "exists and was not written by trainspec migrate"
                )
                report.diagnostics.append(_refused(display, why))
                continue
        try:
            _atomic_write(target, text)
        except OSError as exc:
            report.diagnostics.append(_refused(display, f"cannot be written: {exc.strerror or exc}"))
            continue
        report.written.append(display)
    return report


def _atomic_write(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temp, 0o666 & ~mask)
        os.replace(temp, target)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _refused(path: str, why: str) -> Diagnostic:
    return Diagnostic(
        code=codes.MIGRATE_OUTPUT_IN_THE_WAY,
        message=f"{path} {why}: not overwritten",
        severity=Severity.ERROR,
        file=path,
        hint="move it away, or migrate into another directory (-o)",
    )


__all__ = ["HEADER", "WriteReport", "render", "with_header", "write_files", "written_by_us"]
