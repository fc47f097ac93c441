"""The marker file ``.trainspec-managed.json``: which files of an output directory trainspec wrote.

Pruning and the hand-edit check trust nothing else, so the marker is read as untrusted input (a
pull request can edit it): it must be JSON of the exact shape trainspec writes, and every entry
must be a name trainspec itself could have written, relative and normalised, inside the output
directory. One bad entry makes the whole marker unusable; the caller then writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from trainspec.dsl.diagnostics import Diagnostic

MARKER = ".trainspec-managed.json"
GENERATOR = "trainspec"
#: A marker is a list of short paths; anything this large was not written by trainspec.
MAX_MARKER_BYTES = 16 * 1024 * 1024

# The only paths trainspec writes (see pipeline._runtime_path and the job outputs):
# kustomization.yaml, runtimes/<name>.yaml, runtimes/<namespace>/<name>.yaml, <namespace>/<job>.yaml.
_NAME = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"
_NAMESPACE = r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"
_WRITABLE = re.compile(rf"kustomization\.yaml|runtimes/(?:{_NAMESPACE}/)?{_NAME}\.yaml|{_NAMESPACE}/{_NAME}\.yaml")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Marker:
    """The files trainspec wrote last time, each with the sha256 of the bytes it wrote."""

    sha256: Mapping[str, str]

    @property
    def files(self) -> list[str]:
        return sorted(self.sha256)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render_marker(files: Mapping[str, bytes]) -> bytes:
    """The marker for a tree of ``files`` (relative path -> bytes), deterministic."""
    marker = {
        "generator": GENERATOR,
        "files": sorted(files),
        "sha256": {rel: sha256(data) for rel, data in sorted(files.items())},
    }
    return (json.dumps(marker, indent=2, sort_keys=True) + "\n").encode("utf-8")


def entry_problem(rel: object) -> str | None:
    """Why ``rel`` cannot be a file trainspec wrote (None: it can)."""
    if not isinstance(rel, str):
        return f"entry {rel!r} is not a string"
    if not rel:
        return "empty entry"
    if "\\" in rel or "\x00" in rel:
        return f"entry {rel!r} holds a backslash or NUL"
    if rel.startswith("/") or os.path.isabs(rel):
        return f"entry {rel!r} is an absolute path"
    parts = rel.split("/")
    if ".." in parts:
        return f"entry {rel!r} leads outside the output directory"
    if posixpath.normpath(rel) != rel or "." in parts:
        return f"entry {rel!r} is not a normalised path"
    if not _WRITABLE.fullmatch(rel):
        return (
            f"entry {rel!r} is not a file trainspec writes "
            "(kustomization.yaml, runtimes/<name>.yaml, <namespace>/<job>.yaml)"
        )
    return None


def read_marker(root: Path, display: str) -> tuple[Marker | None, list[Diagnostic]]:
    """The marker of the output directory ``root`` (None when there is none), or TS409 problems.

    ``display`` is how the marker's path is shown in diagnostics.
    """
    path = root / MARKER
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, []
    except NotADirectoryError:
        return None, []
    if not stat.S_ISREG(st.st_mode):
        return None, [_problem(display, "is not a regular file (a symbolic link or a directory)")]
    if st.st_size > MAX_MARKER_BYTES:
        return None, [_problem(display, f"is larger than {MAX_MARKER_BYTES} bytes")]
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(MAX_MARKER_BYTES + 1)
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError:
        return None, [_problem(display, "is not UTF-8")]
    except json.JSONDecodeError as exc:
        return None, [_problem(display, f"is not valid JSON: {exc.msg}", line=exc.lineno, column=exc.colno)]
    return _validate(data, text, display)


def _validate(data: object, text: str, display: str) -> tuple[Marker | None, list[Diagnostic]]:
    if not isinstance(data, dict):
        return None, [_problem(display, f"must be a JSON object, not {type(data).__name__}")]
    problems: list[Diagnostic] = []
    unknown = sorted(set(data) - {"generator", "files", "sha256"})
    if unknown:
        problems.append(
            _problem(
                display, f"has unknown keys {', '.join(map(repr, unknown))}", text=text, needle=json.dumps(unknown[0])
            )
        )
    if data.get("generator") != GENERATOR:
        problems.append(
            _problem(display, f"generator must be {GENERATOR!r}", path="generator", text=text, needle='"generator"')
        )
    files, hashes = data.get("files"), data.get("sha256")
    if not isinstance(files, list):
        problems.append(_problem(display, "files must be a list of paths", path="files", text=text, needle='"files"'))
        files = []
    if not isinstance(hashes, dict):
        problems.append(
            _problem(display, "sha256 must map each file to its digest", path="sha256", text=text, needle='"sha256"')
        )
        hashes = {}
    seen: set[str] = set()
    for index, rel in enumerate(files):
        why = entry_problem(rel)
        if why is None and rel in seen:
            why = f"entry {rel!r} is listed twice"
        if why is None and not (isinstance(hashes.get(rel), str) and _SHA256.fullmatch(hashes[rel])):
            why = f"entry {rel!r} has no sha256 digest"
        if why is not None:
            problems.append(_problem(display, why, path=f"files[{index}]", text=text, needle=json.dumps(rel)))
        seen.add(str(rel))
    problems.extend(
        _problem(
            display, f"sha256 names {rel!r}, which is not in files", path="sha256", text=text, needle=json.dumps(rel)
        )
        for rel in sorted(set(map(str, hashes)) - seen)
    )
    if problems:
        return None, problems
    return Marker({rel: hashes[rel] for rel in files}), []


def _problem(
    display: str,
    why: str,
    *,
    path: str = "",
    line: int | None = None,
    column: int | None = None,
    text: str | None = None,
    needle: str | None = None,
) -> Diagnostic:
    if text is not None and needle is not None and line is None:
        line, column = _position(text, needle)
    return Diagnostic(
        code="TS409",
        file=display,
        line=line or 1,
        column=column or 1,
        path=path,
        message=f"the marker {MARKER} {why}; nothing was written or deleted",
        hint=f"restore {MARKER} from version control (git checkout -- {display}), or delete it: trainspec then "
        "adopts files identical to what it would write and refuses to overwrite the others",
    )


def _position(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of ``needle`` in ``text`` (1, 1 when it is not there)."""
    at = text.find(needle)
    if at < 0:
        return 1, 1
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1
