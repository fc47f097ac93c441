"""Where a Python spec module was when its child process ended, and clearing up what it left.

The child's trace channel (:mod:`trainspec.dsl.load.python.protocol`) holds :mod:`faulthandler` dumps
(written at the time limit and on a crash) and ``trainspec-exit`` records (``os._exit``,
``os.kill``). They only locate a diagnostic: whatever they say, the diagnostic is the same.

:func:`sweep` kills what a child leaves behind: its process group (and session) and, on Linux,
every process below it (the child is a subreaper, so a daemon's orphans stay below it) or whose
environment still carries the child's run token (a fork that called ``setsid`` and was orphaned
when the child ended).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from trainspec.dsl.load.python.protocol import EXIT_RECORD, TOKEN_VARIABLE

#: faulthandler writes at most this many characters of a file name, then "...".
_FAULTHANDLER_NAME_MAX = 500
#: Rounds of finding and killing (a process may fork while the previous round kills it).
_SWEEP_ROUNDS = 50


def timed_out_at(trace: str, filename: str) -> int | None:
    """The spec line the module was running when its time ran out (faulthandler's dump)."""
    return _dump_line(trace, filename)


def ended_at(trace: str, filename: str, pid: int) -> int | None:
    """The spec line where the module ended its process: a crash dump, else the last exit record of ``pid``."""
    if "Fatal Python error" in trace:
        return _dump_line(trace, filename)
    line = None
    for text in trace.splitlines():
        parts = text.split()
        if len(parts) == 4 and parts[0] == EXIT_RECORD and parts[1] == str(pid) and parts[3].isdigit():
            line = int(parts[3]) or line
    return line


def _dump_line(trace: str, filename: str) -> int | None:
    """The innermost line of ``filename`` in the dump: of the crashing thread, else the main (listed last)."""
    prefix = f'File "{_as_faulthandler_writes(filename)}", line '
    blocks: list[tuple[bool, list[int]]] = []
    for text in trace.splitlines():
        stripped = text.strip()
        if stripped.startswith(("Current thread 0x", "Thread 0x")):
            blocks.append((stripped.startswith("Current"), []))
        elif blocks and stripped.startswith(prefix):
            digits = stripped[len(prefix) :].split(" ", 1)[0]
            if digits.isdigit():
                blocks[-1][1].append(int(digits))
    found = [lines for _, lines in blocks if lines]
    current = [lines for is_current, lines in blocks if is_current and lines]
    chosen = (current or found)[-1] if found else None
    return chosen[0] if chosen else None  # frames are listed most recent first


def _as_faulthandler_writes(text: str) -> str:
    """``text`` as faulthandler prints it: printable ASCII as is, anything else escaped, cut at 500."""
    out = []
    for char in text[:_FAULTHANDLER_NAME_MAX]:
        code = ord(char)
        if 32 <= code <= 126:
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out) + ("..." if len(text) > _FAULTHANDLER_NAME_MAX else "")


def sweep(root: int, token: str) -> int:
    """Kill the child ``root`` with its process group, its descendants and every process carrying
    ``token``; how many processes besides ``root`` were found alive."""
    found: set[int] = set()
    if not os.path.isdir("/proc/self"):  # no process table to read: the group is what can be reached
        alive = _group_alive(root)
        _kill_group(root)
        return int(alive)
    for round_ in range(_SWEEP_ROUNDS):
        victims = _members(root, token)
        _kill_group(root)
        if not victims:
            break
        found.update(victims)
        for pid in victims:
            with contextlib.suppress(OSError):  # gone already
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.001 * (round_ + 1))  # let the killed become zombies before looking again
    return len(found - {root})


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(OSError):  # no process left in it
        os.killpg(pgid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    return True


def _members(root: int, token: str) -> list[int]:
    """Live processes (not zombies) that ``root`` left: itself, its group and session, its descendants
    (the child is a subreaper: orphans of the module stay below it), and any holding the token."""
    me = os.getpid()
    table: dict[int, tuple[int, int, int]] = {}  # pid -> (parent, group, session)
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 4 and fields[0] not in (b"Z", b"X"):
            table[int(name)] = (int(fields[1]), int(fields[2]), int(fields[3]))
    found = {pid for pid, (_, group, session) in table.items() if pid == root or root in (group, session)}
    found |= _descendants(root, table)
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    for pid in table.keys() - found:
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:  # another user's process, or ended meanwhile
            continue
        if marker in environ.split(b"\0"):
            found.add(pid)
    return sorted(found)


def _descendants(root: int, table: dict[int, tuple[int, int, int]]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found
