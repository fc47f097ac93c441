"""Plan a new output tree: compare what a compile produces with what the directory holds.

Reading only: the plan says which files are added, changed, removed (managed files no longer
produced) or unchanged, what is in the way, what was edited by hand since trainspec wrote it,
which PersistentVolumeClaims would disappear, and which of the directory's other entries (files
the user keeps there) the new generation must carry over. Symbolic links are never followed, so
nothing outside the output directory is ever read as part of it.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from trainspec.compiler.outtree.claims import Claim, claims_in, header_sources
from trainspec.compiler.outtree.marker import LARGEST_FILE, MARKER, Marker, entry_problem, ownership, sha256
from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.load.safe_read import FileTooLarge, read_file

#: An output directory holds a few hundred files; far more means ``-o`` names something else.
MAX_ENTRIES = 100_000


class TreeTooLarge(TrainspecError):
    """The directory holds more than :data:`MAX_ENTRIES` entries."""


@dataclass(frozen=True)
class Entry:
    """One entry of the old tree, as ``lstat`` saw it."""

    kind: str  # "file", "dir", "link" or "other" (fifo, socket, device)
    mode: int  # permission bits (st_mode & 0o7777)
    size: int
    uid: int
    gid: int


@dataclass(frozen=True)
class LostClaim:
    """A PersistentVolumeClaim of the old tree that the new tree no longer has."""

    file: str  # the old output file, relative to the output directory
    claim: Claim
    sources: str | None  # the specs its header names (relative to the output directory)
    still_produced: bool  # the file stays, without the claim


@dataclass
class TreePlan:
    """What replacing the tree with a compile's files would do. See :func:`plan_tree`."""

    files: Mapping[str, bytes]
    marker: bytes
    old: dict[str, Entry]
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    #: (path, why): something trainspec did not write is where it would write.
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    #: (path, still produced): a managed file whose bytes are not the ones trainspec wrote.
    hand_edited: list[tuple[str, bool]] = field(default_factory=list)
    lost_claims: list[LostClaim] = field(default_factory=list)
    #: Claims that leave the tree but stay on the cluster (their keep annotations; checkpoint.protect).
    kept_claims: list[LostClaim] = field(default_factory=list)
    #: Entries of the old tree (not directories) that the new tree keeps as they are.
    carry: list[str] = field(default_factory=list)
    #: Directories of the new tree, parents first.
    dirs: list[str] = field(default_factory=list)
    #: Unchanged files whose permission bits are not ``0666 & ~umask``.
    mode_fixes: list[str] = field(default_factory=list)
    #: False while an older trainspec's central marker is still there (the new tree drops it).
    marker_current: bool = False

    @property
    def stale(self) -> bool:
        """The tree's content differs from the compile's (what ``--check`` fails on)."""
        return bool(self.added or self.changed or self.removed)

    @property
    def noop(self) -> bool:
        """Nothing to write at all: same files, same modes, same marker."""
        return not self.stale and not self.mode_fixes and self.marker_current


def scan(root: Path) -> dict[str, Entry]:
    """Every entry below ``root`` (posix relative path -> entry); symlinks are listed, not followed."""
    out: dict[str, Entry] = {}
    pending = [("", str(root))]
    while pending:
        rel, path = pending.pop()
        with os.scandir(path) as entries:
            for item in entries:
                st = item.stat(follow_symlinks=False)
                sub = f"{rel}/{item.name}" if rel else item.name
                kind = (
                    "dir"
                    if stat.S_ISDIR(st.st_mode)
                    else "file"
                    if stat.S_ISREG(st.st_mode)
                    else "link"
                    if stat.S_ISLNK(st.st_mode)
                    else "other"
                )
                out[sub] = Entry(kind, stat.S_IMODE(st.st_mode), st.st_size, st.st_uid, st.st_gid)
                if len(out) > MAX_ENTRIES:
                    raise TreeTooLarge(str(root))
                if kind == "dir":
                    pending.append((sub, item.path))
    return out


class EncodedFiles(Mapping[str, bytes]):
    """``files`` (relative path -> text) as bytes, sorted by path, encoded when read.

    A compile's files may be read back from a spill file one at a time
    (trainspec.compiler.output_sinks): encoding them all up front would hold the tree in memory.
    """

    def __init__(self, files: Mapping[str, str]) -> None:
        self._files = files
        self._order = sorted(files)

    def __getitem__(self, rel: str) -> bytes:
        return self._files[rel].encode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, rel: object) -> bool:
        return rel in self._files


def plan_tree(
    root: Path, files: Mapping[str, str], marker: Marker | None, *, expected_mode: int | None = None
) -> TreePlan:
    """The plan for replacing ``root``'s trainspec files with ``files`` (relative path -> text).

    Which files trainspec wrote is read from each file's seal (:func:`.marker.ownership`);
    ``marker`` is an older trainspec's validated central marker, if the tree still has one (its
    files count as trainspec's too). ``expected_mode`` is the permission bits new files get
    (None: unknown, modes are not compared).
    """
    for rel in files:
        why = entry_problem(rel)
        if why is not None:  # a compiler defect, never user input: refuse rather than write it
            raise ValueError(f"refusing to write {rel!r}: {why}")
    new = EncodedFiles(files)
    old = scan(root) if root.is_dir() and not root.is_symlink() else {}
    plan = TreePlan(files=new, marker=b"", old=old)
    legacy = dict(marker.sha256) if marker is not None else {}
    previous: dict[str, bytes] = {}
    for rel, data in new.items():
        blocker = _blocker(old, rel)
        if blocker is not None:
            plan.conflicts.append((rel, f"{blocker} is in the way and is not a directory"))
            continue
        entry = old.get(rel)
        if entry is None:
            plan.added.append(rel)
            continue
        if entry.kind != "file":
            plan.conflicts.append((rel, f"a {_KIND_NAMES[entry.kind]} is in the way"))
            continue
        largest = max(LARGEST_FILE, len(data))
        current = _read_owned(root / rel, entry, largest)
        if current is None:
            plan.conflicts.append((rel, f"a file larger than {largest} bytes is in the way (not one trainspec wrote)"))
            continue
        if current == data:
            plan.unchanged.append(rel)
            if expected_mode is not None and entry.mode != expected_mode:
                plan.mode_fixes.append(rel)
            continue
        state = _state(rel, current, legacy)
        if state is None:
            plan.conflicts.append((rel, "file exists and was not written by trainspec"))
            continue
        plan.changed.append(rel)
        previous[rel] = current
        if state == "edited":
            plan.hand_edited.append((rel, True))
    for rel, entry in sorted(old.items()):
        if rel in new or entry.kind != "file" or _blocker(old, rel) is not None:
            continue  # produced, not a file, or below something of the user's
        if rel not in legacy and (entry_problem(rel) is not None or entry.size < len(_MIN_SEALED)):
            continue  # not a name trainspec writes: the user's
        owned = _read_owned(root / rel, entry, LARGEST_FILE)
        state = _state(rel, owned, legacy) if owned is not None else None
        if owned is None or state is None:
            continue  # the user's file at a name trainspec could write: kept
        plan.removed.append(rel)
        previous[rel] = owned
        if state == "edited":
            plan.hand_edited.append((rel, False))
    _find_lost_claims(plan, previous)
    _plan_layout(plan)
    # The old central marker goes with the first compile that finds it.
    plan.marker_current = MARKER not in old
    return plan


def _read_owned(path: Path, entry: Entry, largest: int) -> bytes | None:
    """The bytes of a file of the old tree, or None when it is larger than ``largest``: then it is
    not a file trainspec wrote, and reading it whole could take the machine's memory."""
    if entry.size > largest:
        return None
    try:
        return read_file(path, largest, follow_symlinks=False)
    except FileTooLarge:  # grown since the scan
        return None


# The shortest file trainspec writes: its header and its seal.
_MIN_SEALED = b"# Generated by trainspec from x. \n# trainspec-sha256: " + b"0" * 64 + b"\n"


def _state(rel: str, current: bytes, legacy: Mapping[str, str]) -> str | None:
    """``sealed``, ``edited`` or None (not trainspec's) for the file ``rel`` holding ``current``."""
    if rel in legacy:  # written by an older trainspec, before files were sealed
        return "sealed" if sha256(current) == legacy[rel] else "edited"
    return ownership(current)


_KIND_NAMES = {"dir": "directory", "link": "symbolic link", "other": "special file", "file": "file"}


def _blocker(old: Mapping[str, Entry], rel: str) -> str | None:
    """The first ancestor of ``rel`` in the old tree that is not a directory."""
    parts = rel.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        entry = old.get("/".join(parts[:depth]))
        if entry is not None and entry.kind != "dir":
            return "/".join(parts[:depth])
    return None


def _find_lost_claims(plan: TreePlan, previous: Mapping[str, bytes]) -> None:
    if not previous:  # a new tree loses nothing: do not parse every new file for claims (45% of the run)
        return
    # Tree-wide: a claim still emitted by any new file is not lost (Argo CD keeps it).
    kept = {claim.key for data in plan.files.values() for claim in claims_in(data.decode("utf-8"))}
    for rel, data in sorted(previous.items()):
        text = data.decode("utf-8", errors="replace")
        for claim in claims_in(text):
            if claim.key in kept:
                continue
            lost = LostClaim(rel, claim, header_sources(text), rel in plan.files)
            # A protected claim stays on the cluster when it leaves the tree: reported, not refused.
            (plan.kept_claims if claim.protected else plan.lost_claims).append(lost)


def _plan_layout(plan: TreePlan) -> None:
    """What the new generation carries over from the old tree, and its directories."""
    replaced = {*plan.files, *plan.removed, MARKER}
    for rel, entry in sorted(plan.old.items()):
        if entry.kind == "dir" or rel in replaced:
            continue
        if entry.kind == "other":
            plan.conflicts.append((rel, "a special file (fifo, socket or device) cannot be carried over"))
        plan.carry.append(rel)
    parents = {posixpath.dirname(rel) for rel in plan.old}
    empty = [rel for rel, entry in plan.old.items() if entry.kind == "dir" and rel not in parents]
    dirs: set[str] = set(empty)  # the user's empty directories are kept
    for rel in [*plan.carry, *plan.files, *empty]:
        parent = posixpath.dirname(rel)
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    # Parents before children. A directory that pruning empties is not recreated (as before).
    plan.dirs = sorted(dirs, key=lambda d: (d.count("/"), d))
