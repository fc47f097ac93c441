"""Finding spec files: command-line paths and directory walks, safe against odd things on disk.

Rules (README "Commands"):

* A path named on the command line is read whatever its extension; a directory is walked.
* A walk takes ``*.yaml``, ``*.yml`` and ``*.py`` (any letter case: ``job.YAML`` too), skips
  hidden entries, ``__pycache__``, the project file and what ``.trainspecignore`` lists, and
  takes a ``.py`` file only when it is a spec module (:func:`is_spec_module`).
* Nothing is opened before ``stat`` says it is a regular file: a FIFO would block the reader
  forever and a device never ends. In a walk such an entry, a symlink loop and a symlink to a
  directory (not followed: it could lead anywhere, even back up the tree) are skipped with a
  TS118 warning; on the command line a FIFO, socket, device or loop is a TS118 error. A name
  too long for the file system is TS119, an unreadable directory TS100.
* The same file reached through two names (a symlink, or a file also inside a walked
  directory) is loaded once.
* ``-`` is standard input (:func:`split_stdin` takes it out of the paths; the loader reads it
  once, YAML only: ``trainspec.dsl.load.spec_sources.load_stdin``); a file named ``-`` is ``./-``.
* A name holding a control character (newline, carriage return, tab, any other C0 or C1 code,
  DEL, a line separator, a bidirectional override or isolate) is refused before it is read:
  TS124, with the name shown escaped. It would forge or hide lines in every report that names
  it. In a walk this applies to the names the walk would take (spec files and directories).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.load.safe_read import peek_file

SPEC_SUFFIXES = (".yaml", ".yml", ".py")
#: What a walk takes for the commands that read Kubernetes manifests (``check --cluster``, ``migrate``).
YAML_SUFFIXES = (".yaml", ".yml")
#: The command-line path that means standard input (YAML specs or manifests piped in), as in
#: kubectl's ``-f -``; a file named ``-`` is ``./-``.
STDIN = "-"
#: How diagnostics name standard input: ``<stdin>:3:5``.
STDIN_NAME = "<stdin>"
IGNORE_FILE = ".trainspecignore"
#: The project file is found and loaded on its own (see ``dsl.spec.project``), not by directory walks.
PROJECT_FILE = "trainspec.yaml"
#: Bytes of a small control file (``.trainspecignore``) or a ``.py`` file read to classify it.
_PEEK_BYTES = 1 << 20

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


#: Bidirectional formatting characters (and line/paragraph separators), besides category Cc.
_BIDI = frozenset("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unsafe_char(char: str) -> bool:
    code = ord(char)
    # C0, DEL, C1; and undecodable bytes 0x80-0x9f (surrogate escapes), which a terminal may take as C1.
    return code < 0x20 or 0x7F <= code <= 0x9F or 0xDC80 <= code <= 0xDC9F or char in _BIDI


def escape_name(name: str) -> str:
    """``name`` with each control or bidi character written as an escape (``\\n``, ``\\x1b``, ``\\u202e``)."""
    out = []
    for char in name:
        code = ord(char)
        if not _unsafe_char(char):
            out.append(char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


def unsafe_name(path: str) -> Diagnostic | None:
    """TS124 when ``path`` holds a control or bidi character (see the module docstring), else None.

    NUL is left to the readers: no file can have it in its name (TS100).
    """
    if not _has_unsafe(path):
        return None
    return _unsafe(path)


def _has_unsafe(name: str) -> bool:
    """Whether ``name`` holds a control or bidi character (NUL aside)."""
    if name.isascii() and name.isprintable():  # nearly every name: no character to look at
        return False
    return any(_unsafe_char(char) for char in name if char != "\x00")


def _unsafe(path: str) -> Diagnostic:
    return _diag(
        codes.UNSAFE_FILE_NAME,
        escape_name(path),
        "file name contains a control or bidirectional-override character; not read",
        "rename the file or directory (its name is shown here with those characters escaped)",
    )


def file_type(mode: int) -> str:
    """What a non-regular, non-directory ``st_mode`` is, in words."""
    for test, what in _KINDS:
        if test(mode):
            return what
    return "not a regular file"


def is_spec_name(name: str, suffixes: tuple[str, ...] = SPEC_SUFFIXES) -> bool:
    """Whether a walk considers the file name (extension in any letter case)."""
    return name.lower().endswith(suffixes)


def split_stdin(paths: list[str]) -> tuple[list[str], bool, list[Diagnostic]]:
    """``paths`` without :data:`STDIN` (``-``), whether it was among them, and a TS100 for each repeat.

    Standard input can be read once: a second ``-`` would find it empty (nothing vanishes silently).
    """
    rest = [path for path in paths if path != STDIN]
    count = len(paths) - len(rest)
    if count <= 1:
        return rest, count == 1, []
    repeated = _diag(
        codes.UNREADABLE_FILE,
        STDIN_NAME,
        f"`-` (standard input) is named {count} times; it can be read only once",
        "give `-` once, and name files for the other inputs",
    )
    return rest, True, [repeated]


def discover(
    paths: list[str], suffixes: tuple[str, ...] = SPEC_SUFFIXES, *, file_links: bool = True
) -> tuple[list[str], list[Diagnostic]]:
    """Spec files under ``paths`` (files as given; directories recursively), sorted, de-duplicated.

    Each file is named as :func:`posix_path` writes it (``./specs//a.yaml`` is ``specs/a.yaml``).

    The one directory walker of every command: ``suffixes`` is what a walk takes (the spec
    files by default; :data:`YAML_SUFFIXES` for the commands that read manifests), every other
    rule of the module docstring holds for all. ``file_links=False`` also leaves out symbolic
    links to files in a walk (a TS118 warning each): a previous output tree is trainspec's own
    writing, so a link in it was put there by someone else and is not read.
    """
    found: list[str] = []
    problems: list[Diagnostic] = []
    for raw in paths:
        unsafe = unsafe_name(raw)
        if unsafe is not None:
            problems.append(unsafe)
            continue
        kind, problem = _probe(raw)
        if problem is not None:
            problems.append(problem)
        elif kind == "dir":
            found.extend(_walk(posix_path(raw), problems, suffixes, file_links))
        else:
            found.append(posix_path(raw))
    return _unique(found), problems


def posix_path(text: str) -> str:
    """``text`` as ``pathlib.PurePosixPath(text)`` writes it: no empty or ``.`` parts, no trailing
    slash, ``.`` for nothing; ``..`` kept (a link may be on the way). Strings, not ``Path``: every
    command finds its files here, and ``pathlib`` costs more to import than the walk of a few files."""
    lead = ""
    if text.startswith("/"):  # POSIX keeps exactly two leading slashes apart; three or more are one
        lead = "//" if text[:2] == "//" and text[:3] != "///" else "/"
    parts = [part for part in text.split("/") if part and part != "."]
    return lead + "/".join(parts) if parts or lead else "."


def climbs_after_a_name(text: str) -> bool:
    """Whether a ``..`` part of ``text`` follows a name (``a/..``; not a leading ``../..``): where
    such a path leads depends on whether the name is a link, so its text cannot be shortened."""
    named = False
    for part in text.split(os.sep):
        if part == os.pardir:
            if named:
                return True
        elif part and part != os.curdir:
            named = True
    return False


def display_name(path: str | os.PathLike[str]) -> str:
    """A stable display path: relative to the working directory when below it.

    A path that climbs out of a directory it named (``link/../spec.yaml``) is shown as given:
    the kernel resolves that ``..`` from where ``link`` really is, so shortening the text could
    name another file.
    """
    text = os.fspath(path)
    if ".." in text and climbs_after_a_name(text):
        return posix_path(text)
    if not os.path.isabs(text):
        # Below the working directory unless it climbs out: no need to ask where that is.
        normal = os.path.normpath(text)
        if normal != os.curdir and normal != os.pardir and not normal.startswith(os.pardir + os.sep):
            return normal if os.sep == "/" else posix_path(normal.replace(os.sep, "/"))
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed
        return posix_path(os.path.abspath(text) if os.path.isabs(text) else text)
    absolute = os.path.abspath(text)  # no symlink resolution: a syscall-free string operation
    if absolute == cwd or not absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return posix_path(text)
    return os.path.relpath(absolute, cwd)


def _child(directory: str, name: str) -> str:
    """``directory / name`` as a path object would write it."""
    if directory == ".":
        return name
    return directory + name if directory.endswith("/") else f"{directory}/{name}"


def _unique(found: list[str]) -> list[str]:
    """Sorted, each file once: by path, then by identity (device and inode) for aliases."""
    seen: set[tuple[int, int]] = set()
    out: list[str] = []
    for path in sorted(set(found)):
        try:
            st = os.stat(path)
        except OSError:
            out.append(path)  # the loader reports it
            continue
        identity = (st.st_dev, st.st_ino)
        if identity not in seen:
            seen.add(identity)
            out.append(path)
    return out


def _diag(code: Code, file: str, message: str, hint: str, severity: Severity = Severity.ERROR) -> Diagnostic:
    # Named as every other diagnostic names its file: relative to the working directory when below it.
    return Diagnostic(code=code, message=message, severity=severity, file=display_name(file), hint=hint)


def _too_long(file: str) -> Diagnostic:
    return _diag(
        codes.PATH_TOO_LONG,
        file,
        f"path name too long for the file system ({len(os.fsencode(file))} bytes)",
        "shorten the file or directory names (a name may have at most 255 bytes, a path about 4096)",
    )


def _loop(file: str, severity: Severity) -> Diagnostic:
    skipped = "; skipped" if severity is Severity.WARNING else ""
    return _diag(
        codes.NOT_A_REGULAR_FILE,
        file,
        f"symbolic link loop (the link leads back to itself){skipped}",
        "point the link at a real file, or remove it",
        severity,
    )


def _not_regular(file: str, mode: int, severity: Severity) -> Diagnostic:
    skipped = "skipped" if severity is Severity.WARNING else "not read"
    if severity is Severity.WARNING:
        hint = "specs are regular files; list the path in .trainspecignore to silence this"
    elif stat.S_ISFIFO(mode):  # `trainspec validate <(producer)`: a pipe is what `-` reads
        hint = "pipe the specs into standard input and give - as the path: producer | trainspec validate -"
    else:
        hint = "name a regular file (reading this could block or never end)"
    return _diag(codes.NOT_A_REGULAR_FILE, file, f"{file_type(mode)}, not a regular file; {skipped}", hint, severity)


def _probe(raw: str) -> tuple[str, Diagnostic | None]:
    """Classify a command-line path without opening it: ("dir" | "file", problem)."""
    try:
        st = os.stat(raw)
    except ValueError:  # an embedded NUL character
        return "", _diag(
            codes.UNREADABLE_FILE, raw.replace("\x00", "\\0"), "path contains a NUL character", "check the path"
        )
    except OSError as exc:
        return "", _stat_error(raw, exc, Severity.ERROR)
    if stat.S_ISDIR(st.st_mode):
        return "dir", None
    if stat.S_ISREG(st.st_mode):
        return "file", None
    return "", _not_regular(raw, st.st_mode, Severity.ERROR)


def _stat_error(file: str, exc: OSError, severity: Severity) -> Diagnostic:
    if exc.errno == errno.ENAMETOOLONG:
        return _too_long(file)
    if exc.errno == errno.ELOOP:
        return _loop(file, severity)
    if exc.errno == errno.ENOENT and os.path.islink(file):
        try:
            target = os.readlink(file)
        except OSError:
            target = "?"
        return _diag(
            codes.UNREADABLE_FILE,
            file,
            f"broken symbolic link: {target} does not exist",
            "point the link at an existing file, or remove it",
        )
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return _diag(codes.UNREADABLE_FILE, file, f"{file}: no such file or directory", "check the path")
    if exc.errno == errno.EACCES:
        return _diag(codes.UNREADABLE_FILE, file, f"{file}: permission denied", "check the permissions of the path")
    return _diag(codes.UNREADABLE_FILE, file, f"{file}: {exc.strerror or exc}", "check the path")


def _walk(root: str, problems: list[Diagnostic], suffixes: tuple[str, ...], file_links: bool = True) -> list[str]:
    """Spec files below ``root``, depth first in name order (see the module docstring)."""
    out: list[str] = []
    stack = [root]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            problems.append(_directory_error(here, exc))
            continue
        ignored = _ignore_patterns(here)
        subdirs: list[str] = []
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name == "__pycache__":
                continue
            path = _child(here, name)
            if _has_unsafe(name):  # refused before anything looks further
                if _taken(entry, name, ignored, suffixes):
                    problems.append(_unsafe(path))
                continue
            found = _entry(entry, path, ignored, problems, suffixes, file_links)
            if found == "dir":
                subdirs.append(path)
            elif found == "file":
                if name.lower().endswith(".py") and not is_spec_module(path):
                    continue
                out.append(path)
        stack.extend(reversed(subdirs))
    return out


def _taken(entry: os.DirEntry, name: str, ignored: list[str], suffixes: tuple[str, ...]) -> bool:
    """Whether a walk would descend into or read the entry (by its name and d_type alone)."""
    try:
        directory = entry.is_dir(follow_symlinks=False)
    except OSError:
        directory = False
    if directory:
        return not _matches(name + "/", ignored)
    return is_spec_name(name, suffixes) and not _matches(name, ignored)


def _entry(
    entry: os.DirEntry,
    path: str,
    ignored: list[str],
    problems: list[Diagnostic],
    suffixes: tuple[str, ...],
    file_links: bool = True,
) -> str:
    """ "dir" to descend, "file" to load, "" to skip (with a warning where one is due)."""
    name = entry.name
    try:
        if entry.is_dir(follow_symlinks=False):  # d_type: no stat, works beyond PATH_MAX
            return "" if _matches(name + "/", ignored) else "dir"
        link = entry.is_symlink()
    except OSError:
        link = False
    wanted = is_spec_name(name, suffixes) and name != PROJECT_FILE and not _matches(name, ignored)
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            problems.append(_too_long(path))
        elif wanted:
            problems.append(_stat_error(path, exc, Severity.WARNING if exc.errno == errno.ELOOP else Severity.ERROR))
        return ""
    if stat.S_ISDIR(st.st_mode):  # only a symlink gets here: a real directory was seen above
        if link and not _matches(name + "/", ignored) and not _matches(name, ignored):
            problems.append(
                _diag(
                    codes.NOT_A_REGULAR_FILE,
                    path,
                    f"symbolic link to a directory ({os.readlink(path)}): not followed",
                    "name the directory on the command line to include it, or list the link in .trainspecignore",
                    Severity.WARNING,
                )
            )
        return ""
    if not wanted:
        return ""
    if not stat.S_ISREG(st.st_mode):
        problems.append(_not_regular(path, st.st_mode, Severity.WARNING))
        return ""
    if link and not file_links:
        problems.append(
            _diag(
                codes.NOT_A_REGULAR_FILE,
                path,
                f"symbolic link to a file ({os.readlink(path)}): not followed here",
                "replace the link with the file it points to",
                Severity.WARNING,
            )
        )
        return ""
    return "file"


def _directory_error(path: str, exc: OSError) -> Diagnostic:
    if exc.errno == errno.ENAMETOOLONG:
        return _too_long(path)
    reason = "permission denied" if exc.errno == errno.EACCES else (exc.strerror or str(exc))
    return _diag(
        codes.UNREADABLE_FILE,
        path,
        f"cannot read the directory: {reason}",
        "fix the permissions, or list the directory in .trainspecignore",
    )


def _ignore_patterns(directory: str) -> list[str]:
    data = peek_file(_child(directory, IGNORE_FILE), _PEEK_BYTES)
    if data is None:
        return []
    text = data.decode("utf-8", errors="replace")
    patterns = (line.split(" #", 1)[0].strip() for line in text.splitlines())
    return [p for p in patterns if p and not p.startswith("#")]


def _matches(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(name.rstrip("/"), p.rstrip("/")) for p in patterns)


def is_spec_module(path: str | os.PathLike[str]) -> bool:
    """Whether a Python file found by a directory walk is a spec module.

    Running a module executes it, so a walk only picks files that import trainspec's API and
    build a ``TrainingJob`` or ``Runtime``; training scripts beside the specs are left alone.
    A file named on the command line is always loaded. The file is read with :mod:`ast`, so
    every import style counts (``import trainspec as ts`` ... ``ts.TrainingJob(...)``,
    ``from trainspec import TrainingJob as TJ``, ``from trainspec.dsl.spec.models import Runtime``).
    """
    data = peek_file(path, _PEEK_BYTES)
    if data is None:
        return True  # let the loader report it
    from trainspec.dsl.load.python.imports import builds_specs

    return builds_specs(data.decode("utf-8", errors="replace"))
