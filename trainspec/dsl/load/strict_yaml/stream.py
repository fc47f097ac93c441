"""A YAML stream into documents, and the ways in: text, bytes, or a file read by the one safe reader."""

from __future__ import annotations

import errno
import os
import stat

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.load.safe_read import FileTooLarge, NotRegularFile, read_file
from trainspec.dsl.load.strict_yaml.documents import SourceDoc
from trainspec.dsl.load.strict_yaml.limits import DEFAULT_LIMITS, LoadLimits, too_big
from trainspec.dsl.load.strict_yaml.scalars import NULL, TYPE_NAMES, loader_class, pyyaml
from trainspec.dsl.load.strict_yaml.syntax import (
    decode,
    empty_document_mark,
    forbidden_character,
    syntax_error,
    tab_indent,
    tab_lines,
)
from trainspec.dsl.load.strict_yaml.walk import build


def _parse(text: str, file: str, limits: LoadLimits, docs: list[SourceDoc], diags: list[Diagnostic]) -> None:
    """Compose each document of ``text`` and build the mappings; report the rest."""
    yaml = pyyaml()
    tabs = tab_lines(text) if "\t" in text else {}
    loader = loader_class()(text)
    index = 0
    floor = 0  # first line not part of an earlier document
    failed_at = -1
    try:
        while loader.check_node():
            root = loader.get_node()
            cls = root.__class__
            if cls is yaml.MappingNode:
                doc = build(root, text, file, index, limits, diags)
                if doc is not None:
                    docs.append(doc)
            elif cls is yaml.ScalarNode and root.tag == NULL and root.value == "" and not root.style:
                line, column = empty_document_mark(text, root, floor)
                diags.append(
                    Diagnostic(
                        codes.EMPTY_DOCUMENT,
                        "empty document (ignored)",
                        Severity.WARNING,
                        file,
                        line,
                        column,
                        "",
                        "remove the stray '---' or give the document content",
                    )
                )
            else:
                kind = "a list" if cls is yaml.SequenceNode else TYPE_NAMES.get(root.tag, "a string")
                m = root.start_mark
                diags.append(
                    Diagnostic(
                        codes.NOT_A_MAPPING,
                        f"a spec document must be a mapping, found {kind}",
                        Severity.ERROR,
                        file,
                        m.line + 1,
                        m.column + 1,
                        "",
                        "start the document with fields such as 'apiVersion:' and 'kind:'",
                    )
                )
            end = root.end_mark
            floor = end.line + (1 if end.column else 0)
            index += 1
    except yaml.YAMLError as e:
        diag = syntax_error(e, text, file)
        failed_at = (diag.line or 1) - 1
        is_tab = failed_at in tabs or "tab" in (getattr(e, "problem", None) or "")
        if is_tab:
            if failed_at not in tabs:
                diags.append(tab_indent(file, failed_at, diag.column or 1))
        else:
            diags.append(diag)
    except RecursionError:  # the pure-Python composer on very deep nesting
        diags.append(
            Diagnostic(
                codes.ALIAS_BOMB, "nesting too deep to load", Severity.ERROR, file, 1, 1, "", "flatten the document"
            )
        )
        failed_at = 0
    finally:
        loader.dispose()
    if failed_at >= 0:
        # Tabs before the failure were accepted by the parser (scalar text, flow context);
        # the rest of the file was never parsed, so each tab-indented line there is reported.
        diags.extend(tab_indent(file, n, c) for n, c in tabs.items() if n >= failed_at)
    if index == 0 and failed_at < 0:
        diags.append(
            Diagnostic(
                codes.EMPTY_DOCUMENT,
                "empty file (no YAML document)",
                Severity.WARNING,
                file,
                1,
                1,
                "",
                "add a spec, or remove the file from the inputs",
            )
        )


def _load(text: str, file: str, limits: LoadLimits) -> tuple[list[SourceDoc], list[Diagnostic]]:
    docs: list[SourceDoc] = []
    if text.startswith("\ufeff"):
        text = text[1:]
    bad = forbidden_character(text, file)
    if bad is not None:
        return docs, [bad]
    diags: list[Diagnostic] = []
    _parse(text, file, limits, docs, diags)
    if len(diags) > 1:
        # Content reached through several aliases is walked more than once; report it once.
        seen: set[tuple] = set()
        unique = []
        for d in diags:
            key = (d.code, d.line, d.column, d.message)
            if key not in seen:
                seen.add(key)
                unique.append(d)
        diags = unique
    if "\u2028" in text or "\x85" in text or "\u2029" in text:  # rare: YAML's lines are not an editor's
        from trainspec.dsl.load.strict_yaml.lines import as_editors_count

        diags = as_editors_count(text, docs, diags)
    return docs, diags


def load_text(
    data: bytes | str, file: str, limits: LoadLimits = DEFAULT_LIMITS
) -> tuple[list[SourceDoc], list[Diagnostic]]:
    """Load every document of one spec file given as bytes (UTF-8) or text.

    ``file`` is the name to show in diagnostics. Returns the mapping documents, in file order,
    and all diagnostics found (TS101-TS108, TS113). Never raises for bad input: a document with
    an error may still be returned (its data as far as it could be read), so callers must
    check the diagnostics before trusting the documents.
    """
    if isinstance(data, str):
        size = len(data)
        if size * 4 > limits.max_bytes >= size:  # only measure when the answer is not obvious
            size = len(data.encode("utf-8", "surrogatepass"))
        if size > limits.max_bytes:
            return [], [too_big(file, size, limits.max_bytes)]
        return _load(data, file, limits)
    if len(data) > limits.max_bytes:
        return [], [too_big(file, len(data), limits.max_bytes)]
    text, problem = decode(bytes(data), file)
    if problem is not None:
        return [], [problem]
    assert text is not None, "decode returns the text or the problem"
    return _load(text, file, limits)


def load_file(
    path: str | os.PathLike, display: str | None = None, limits: LoadLimits = DEFAULT_LIMITS
) -> tuple[list[SourceDoc], list[Diagnostic]]:
    """Read and load one spec file; ``display`` is the name used in diagnostics (default: ``path``).

    A file that cannot be read gives one TS100 (TS118 when it is a FIFO, socket or device, which
    is never read: it could block or never end; TS119 for a path too long); otherwise as
    :func:`load_text`.
    """
    file = display if display is not None else os.fsdecode(path)
    try:
        # The one safe reader (trainspec.dsl.load.safe_read): a FIFO is refused before it blocks (TS118).
        data = read_file(path, limits.max_bytes)
    except FileTooLarge as big:
        return [], [too_big(file, big.size, limits.max_bytes)]
    except NotRegularFile as odd:
        return [], [
            _unreadable(
                codes.NOT_A_REGULAR_FILE,
                file,
                f"it is {_special(odd.mode)}, not a regular file",
                "name a regular file (reading this could block or never end)",
            )
        ]
    except (OSError, ValueError) as e:  # ValueError: a NUL character in the path
        return [], [_read_error(e, file)]
    return load_text(data, file, limits)


def _read_error(e: OSError | ValueError, file: str) -> Diagnostic:
    """The diagnostic of a file the reader could not open or read."""
    if isinstance(e, OSError) and e.errno == errno.ENAMETOOLONG:
        return _unreadable(
            codes.PATH_TOO_LONG, file, "its path name is too long", "shorten the file or directory names"
        )
    if isinstance(e, OSError) and e.errno == errno.ELOOP:
        return _unreadable(
            codes.NOT_A_REGULAR_FILE, file, "symbolic link loop", "point the link at a real file, or remove it"
        )
    if isinstance(e, IsADirectoryError):
        reason = "it is a directory"
    elif isinstance(e, FileNotFoundError):
        reason = "no such file"
    elif isinstance(e, PermissionError):
        reason = "permission denied"
    else:
        reason = getattr(e, "strerror", None) or str(e)
    return _unreadable(codes.UNREADABLE_FILE, file, reason, "check the path and the file's permissions")


def _unreadable(code: Code, file: str, reason: str, hint: str) -> Diagnostic:
    return Diagnostic(code, f"cannot read the file: {reason}", Severity.ERROR, file, None, None, "", hint)


def _special(mode: int) -> str:
    """A non-regular file type in words (FIFO, socket, device)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"
