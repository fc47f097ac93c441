"""Replace an output directory as a whole, so no failure ever leaves a half-written tree.

How (one *generation* at a time, all in the directory's parent, on the same filesystem):

1. Build ``.<dir>.trainspec-build-<hex>`` beside the output directory: every file the compile
   produced (new bytes, mode ``0666 & ~umask``, each with its seal), and every other entry the user keeps
   in the directory carried over (hard links, so the very same files; a copy where a link is
   refused; symlinks recreated, never followed), directories with their old modes.
2. Make it durable once: ``syncfs`` of that filesystem (per-file ``fsync`` only where there is
   no ``syncfs``), instead of one ``fsync`` per file.
3. Swap: ``renameat2(RENAME_EXCHANGE)`` exchanges the two directories atomically (Linux). Where
   that is not available: rename the old tree to ``.<dir>.trainspec-old-<hex>``, rename the new
   one in, and rename the old one back if that fails. Then ``fsync`` the parent directory.
4. Remove the old generation. Its directories are the old tree's, with the user's modes: a
   read-only one is made writable first (it is being deleted; the new tree has its own copy, with
   the mode it had). Files are never chmod-ed: they are hard links to the new tree's.

A crash (SIGKILL, power loss) at any step leaves the old tree in place, or (after the atomic
exchange) the whole new tree, plus a sibling left over. The next run, holding the same lock,
calls :func:`recover` first: when the output directory is missing and an ``old`` generation
exists (a crash between the two renames), that generation is renamed back; every other leftover
is removed; one that cannot be (a directory of another user's) is named in a warning, and blocks
nothing. Nothing outside the output directory and these siblings is ever written or deleted.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trainspec.compiler.outtree.access import failed_at, remove_generation
from trainspec.compiler.outtree.tree_plan import Entry, TreePlan
from trainspec.dsl.errors import TrainspecError

BUILD, OLD = "build", "old"
#: What a note of :func:`recover` says of a generation it cannot remove.
STUCK = "cannot be removed"
#: How long a compile waits for another one writing beside the same directory.
LOCK_WAIT_SECONDS = 10.0
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, getattr(errno, "ENOTSUP", -1), getattr(errno, "EOPNOTSUPP", -1)}
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class Busy(TrainspecError):
    """Another trainspec compile holds the lock of this output directory's parent."""


class Unrecoverable(TrainspecError):
    """The output directory is missing and more than one old generation is left: which one is it?"""


def _stem(root: Path) -> str:
    return root.name[:200]  # leaves room for the suffix within NAME_MAX (255)


def sibling(root: Path, state: str) -> Path:
    """A fresh sibling name for a generation in ``state`` (build or old)."""
    return root.parent / f".{_stem(root)}.trainspec-{state}-{secrets.token_hex(4)}"


def leftovers(root: Path) -> list[tuple[Path, str]]:
    """Generations of ``root`` left beside it (path, state): real directories named as trainspec names them."""
    pattern = re.compile(rf"\.{re.escape(_stem(root))}\.trainspec-({BUILD}|{OLD})-[0-9a-f]{{8}}")
    found = []
    try:
        entries = list(os.scandir(root.parent))
    except FileNotFoundError:
        return []
    for item in sorted(entries, key=lambda e: e.name):
        match = pattern.fullmatch(item.name)
        if match and item.is_dir(follow_symlinks=False):
            found.append((Path(item.path), match.group(1)))
    return found


@contextlib.contextmanager
def locked(parent: Path) -> Iterator[int | None]:
    """Hold an exclusive lock on ``parent`` (flock of the directory itself: no lock file to leave).

    Yields the directory's descriptor (None where directories cannot be opened). Raises
    :class:`Busy` after :data:`LOCK_WAIT_SECONDS`, so a second compile never hangs.
    """
    try:
        fd = os.open(parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (PermissionError, IsADirectoryError):  # platforms that cannot open a directory
        yield None
        return
    try:
        try:
            import fcntl
        except ImportError:  # no flock on this platform: run unlocked
            pass
        else:
            _flock(fcntl, fd, parent)
        yield fd
    finally:
        os.close(fd)


def _flock(fcntl: Any, fd: int, parent: Path) -> None:
    # Compiles into sibling directories share the lock, and each holds it only while writing:
    # wait a bounded time for the other one, never forever.
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise Busy(str(parent)) from None
            time.sleep(0.05)


def recover(root: Path) -> list[str]:
    """Undo what an interrupted compile left (see the module docstring); what was done, for the user."""
    found = leftovers(root)
    notes: list[str] = []
    if not os.path.lexists(root):
        olds = [path for path, state in found if state == OLD]
        if len(olds) > 1:
            raise Unrecoverable(", ".join(p.name for p in olds))
        if olds:
            os.rename(olds[0], root)
            notes.append(f"restored the previous output from {olds[0].name}, left by an interrupted compile")
            found = [(p, s) for p, s in found if p != olds[0]]
    for path, _ in found:
        try:
            remove_generation(path)
        except OSError as exc:
            # Not in the way of this compile: say what is stuck and how to remove it, and go on.
            notes.append(
                f"{path.name}, left by an interrupted compile, {STUCK} ({failed_at(exc, path.parent)}): "
                "remove it by hand, as the owner of that path"
            )
        else:
            notes.append(f"removed {path.name}, left by an interrupted compile")
    return notes


def replace_tree(root: Path, plan: TreePlan, parent_fd: int | None = None) -> list[str]:
    """Put ``plan``'s tree at ``root`` atomically; returns warnings (an old generation not removed)."""
    root_entry = _root_entry(root)
    gen = sibling(root, BUILD)
    os.mkdir(gen, 0o777)
    try:
        written = _populate(root, gen, plan, root_entry)
        _sync(gen, written)
        previous = _swap(root, gen)
    except BaseException:
        _discard(gen)
        raise
    # The new tree is in place: from here on a failure is a warning, never a failed compile.
    if parent_fd is not None:
        with contextlib.suppress(Exception):  # some filesystems cannot fsync a directory
            os.fsync(parent_fd)
    if previous is None:
        return []
    try:
        remove_generation(previous)
    except Exception as exc:
        why = failed_at(exc, root.parent) if isinstance(exc, OSError) else str(exc)
        note = f"could not remove the previous generation {previous.name} ({why}); the next compile tries again"
        return [note + ", or remove it by hand"]
    return []


def _root_entry(root: Path) -> Entry | None:
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return None
    return Entry("dir", st.st_mode & 0o7777, 0, st.st_uid, st.st_gid)


def _populate(root: Path, gen: Path, plan: TreePlan, root_entry: Entry | None) -> list[Path]:
    """Fill the new generation; returns what was created (for the fsync fallback)."""
    written: list[Path] = [gen]
    for rel in plan.dirs:
        os.mkdir(gen / rel, 0o777)
        written.append(gen / rel)
    # extend() appends as the generator yields: a failing _carry() still leaves `written` exact.
    written.extend(gen / rel for rel in plan.carry if _carry(root / rel, gen / rel, plan.old[rel]))
    for rel, data in plan.files.items():
        _write(gen / rel, data)
        written.append(gen / rel)
    # Modes last, deepest first: a read-only directory of the user's must be filled before.
    for rel in reversed(plan.dirs):
        if rel in plan.old:
            _restore_owner_and_mode(gen / rel, plan.old[rel])
    if root_entry is not None:
        _restore_owner_and_mode(gen, root_entry)
    return written


def _carry(src: Path, dst: Path, entry: Entry) -> bool:
    """Carry one entry of the old tree over; True when new data was written (a copy)."""
    if entry.kind == "link":
        os.symlink(os.readlink(src), dst)
        return False
    try:
        os.link(src, dst, follow_symlinks=False)
        return False
    except OSError:  # hard links refused (filesystem, protected_hardlinks, link count): copy
        pass
    st = os.lstat(src)
    fd_in = os.open(src, os.O_RDONLY | _NOFOLLOW)
    try:
        fd_out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        try:
            while chunk := os.read(fd_in, 1 << 20):
                _write_all(fd_out, chunk)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)
    os.chmod(dst, entry.mode)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
    return True


def _write(path: Path, data: bytes) -> None:
    # 0o666: the kernel applies the umask (and default ACLs), as for any file a tool creates.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _restore_owner_and_mode(path: Path, entry: Entry) -> None:
    geteuid = getattr(os, "geteuid", None)
    if geteuid is not None and (entry.uid != geteuid() or entry.gid != os.getegid()):
        with contextlib.suppress(OSError):  # only root (or a group member) may; the mode matters more
            os.chown(path, entry.uid, entry.gid, follow_symlinks=False)
    os.chmod(path, entry.mode)


def _sync(gen: Path, written: list[Path]) -> None:
    """Make the new generation durable before it is swapped in: one syncfs, else fsync each."""
    fd = os.open(gen, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        if _syncfs(fd):
            return
    finally:
        os.close(fd)
    for path in written:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _swap(root: Path, gen: Path) -> Path | None:
    """Put ``gen`` at ``root``; returns where the previous tree now is (None: there was none)."""
    if not os.path.lexists(root):
        os.rename(gen, root)
        return None
    if _exchange(gen, root):
        return gen
    old = sibling(root, OLD)
    os.rename(root, old)
    try:
        os.rename(gen, root)
    except BaseException:
        os.rename(old, root)  # if this fails too, the next run's recover() renames it back
        raise
    return old


def _discard(path: Path) -> None:
    with contextlib.suppress(OSError):  # whatever is left, the next run's recover() removes
        remove_generation(path)


_LIBC: list[Any] = []


def _libc() -> Any:
    if not _LIBC:
        try:
            import ctypes

            _LIBC.append(ctypes.CDLL(None, use_errno=True))
        except (OSError, TypeError, ImportError):
            _LIBC.append(None)
    return _LIBC[0]


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two directories (Linux renameat2); False where that is not supported."""
    libc = _libc()
    function = getattr(libc, "renameat2", None) if libc is not None else None
    if function is None:
        return False
    import ctypes

    if function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(b))


def _syncfs(fd: int) -> bool:
    """Flush the filesystem holding ``fd`` (Linux syncfs); False where that is not available."""
    libc = _libc()
    function = getattr(libc, "syncfs", None) if libc is not None else None
    if function is None:
        return False
    import ctypes

    if function(fd) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code))
