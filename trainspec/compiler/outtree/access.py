"""Permissions: what replacing the output directory needs, checked before writing or named when it fails.

trainspec replaces the output directory as a whole (:mod:`.swap`): it reads every entry it keeps,
carries it into a new generation beside the directory, swaps the two, and removes the previous
generation. So each entry must be readable, and each directory of the previous generation must
be emptied: a read-only directory of the user's is made writable first (it is being deleted; the
new tree has its copy, with the mode it had), which only its owner may do.

* :func:`unremovable`: directories of another user's that are not writable for this one, found
  before anything is written (the previous generation could not be removed once swapped out).
* :func:`remove_generation`: removes a generation, opening up read-only directories.
* :func:`failure`: an ``OSError`` as a diagnostic naming the path that failed and what to do; the
  parent directory is blamed only when it is what failed.
"""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainspec.compiler.outtree.tree_plan import Entry
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic

_DENIED = (errno.EACCES, errno.EPERM)


def unremovable(root: Path, old: Mapping[str, Entry]) -> list[tuple[str, int]]:
    """``(path, owner uid)`` of each directory of the tree (``""``: the tree itself) that holds
    entries, is not this user's and is not writable for them."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None or not old:
        return []
    me = geteuid()
    found = []
    for rel in sorted({posixpath.dirname(rel) for rel in old}):
        entry = old.get(rel) if rel else None
        uid = entry.uid if entry is not None else os.lstat(root).st_uid
        if uid != me and not os.access(root / rel if rel else root, os.W_OK | os.X_OK):
            found.append((rel, uid))
    return found


def unremovable_diagnostic(output: str, rel: str, uid: int) -> Diagnostic:
    """TS407 for a directory :func:`unremovable` found."""
    shown = _shown(output, rel)
    return Diagnostic(
        code=codes.OUTPUT_UNWRITABLE,
        file=shown,
        message=f"{shown} is not writable for you and belongs to another user (uid {uid}): trainspec replaces "
        f"{output} as a whole and could not remove the previous copy of what it holds; nothing was written",
        hint=f"have its owner make it writable for you, or move it out of {output}"
        if rel
        else "have its owner make it writable for you, or compile into a directory of your own",
    )


def failure(output: str, root: Path, exc: OSError) -> Diagnostic:
    """TS407 for an ``OSError`` while planning or writing the tree at ``root`` (shown as ``output``)."""
    reason = exc.strerror or str(exc)
    shown = _inside(output, root, exc.filename)
    if shown is not None:
        return Diagnostic(
            code=codes.OUTPUT_UNWRITABLE,
            file=shown,
            message=f"{output} cannot be written: {shown}: {reason}",
            hint=_way_out(output, shown) if exc.errno in _DENIED else "the previous tree was left as it was",
        )
    parent = root.parent
    where = os.fsdecode(exc.filename) if exc.filename is not None else str(parent)
    # The parent is blamed when it is what failed (it, or a generation beside the tree), or when
    # it is not writable: never for a path inside the tree, nor for a full disk.
    blame = exc.errno in _DENIED and (_is_sibling(where, root) or not os.access(parent, os.W_OK | os.X_OK))
    return Diagnostic(
        code=codes.OUTPUT_UNWRITABLE,
        file=output,
        message=f"{output} cannot be written: {where}: {reason}",
        hint="trainspec builds the new tree beside the directory and swaps it in, so it needs write access to the "
        "directory's parent; the previous tree was left as it was"
        if blame
        else "the previous tree was left as it was",
    )


def _way_out(output: str, shown: str) -> str:
    what = (
        f"{output} must be readable and writable for you (or yours); change its permissions or compile into "
        "another directory"
        if shown == output
        else f"{shown} must be readable for you (a directory: writable too, or yours); change its permissions or "
        f"move it out of {output}"
    )
    return (
        f"trainspec rebuilds {output} beside it with every entry it did not write, then removes the old copy: "
        f"{what}; the previous tree was left as it was"
    )


def _shown(output: str, rel: str) -> str:
    return str(Path(output) / rel) if rel else output


def _is_sibling(path: str, root: Path) -> bool:
    """Is ``path`` the parent, or a generation beside the tree (not inside one)?"""
    absolute = os.path.abspath(path)
    return absolute == str(root.parent) or os.path.dirname(absolute) == str(root.parent)


def _inside(output: str, root: Path, filename: Any) -> str | None:
    """How ``filename`` is shown when it is in the tree, or in a generation beside it (the same
    entry's copy): ``deploy/frozen/keep.txt``. None for anything else."""
    if filename is None:
        return None
    path = os.path.abspath(os.fsdecode(filename))
    base = str(root)
    if path == base:
        return output
    if path.startswith(base + os.sep):
        return _shown(output, os.path.relpath(path, base).replace(os.sep, "/"))
    rel = os.path.relpath(path, root.parent).replace(os.sep, "/")
    first, _, rest = rel.partition("/")
    if rest and first.startswith(f".{root.name[:200]}.trainspec-"):
        return _shown(output, rest)
    return None


def remove_generation(path: Path) -> None:
    """Remove a generation of trainspec's (the previous tree once swapped out, a build, a leftover).

    A directory that cannot be emptied as it is (the user made it read-only) is made writable, and
    the removal tried again. Raises ``OSError`` naming the full path of the first entry that
    still cannot be removed (a directory of another user's).
    """
    try:
        _rmtree(path)
    except PermissionError:
        _open_up(path)
        _rmtree(path)


def failed_at(exc: OSError, base: Path) -> str:
    """``path: reason`` of a failed removal, the path relative to ``base`` (the output's parent)."""
    where = os.fsdecode(exc.filename) if exc.filename is not None else ""
    if where and os.path.isabs(where):
        where = os.path.relpath(where, base)
    return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)


def _rmtree(path: Path) -> None:
    errors: list[OSError] = []

    def note(function: Any, name: str, error: Any) -> None:
        exc = error[1] if isinstance(error, tuple) else error
        if not errors:  # the first is the cause; the rest are the directories it left non-empty
            errors.append(OSError(getattr(exc, "errno", None), getattr(exc, "strerror", None) or str(exc), name))

    # onexc (3.12+) and onerror (before) both get the failing entry's full path; the error raised
    # by default names only the entry (``keep.txt``), which tells the user nothing.
    handler: dict[str, Any] = {"onexc" if sys.version_info >= (3, 12) else "onerror": note}
    shutil.rmtree(path, **handler)
    if errors:
        raise errors[0]


def _open_up(top: Path) -> None:
    """Give each directory below ``top`` (the generation being removed) its owner's rwx bits."""
    pending = [os.fspath(top)]
    while pending:
        path = pending.pop()
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode):
                continue
            if st.st_mode & 0o700 != 0o700:
                # By path (a directory without the read bit cannot be opened to fchmod it). A symlink
                # swapped in after the lstat could only get owner bits added to a directory this user
                # owns: chmod refuses anyone else's.
                os.chmod(path, stat.S_IMODE(st.st_mode) | 0o700)
            with os.scandir(path) as entries:
                pending.extend(item.path for item in entries if item.is_dir(follow_symlinks=False))
        except OSError:
            continue  # not the user's to change: the removal names it
