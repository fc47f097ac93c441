"""The strict YAML loader: spec text in, plain Python documents with source positions out.

PyYAML's C composer (libyaml, through ``yaml.CSafeLoader``) builds the node tree; this module
walks that tree once, in Python, and in the same pass constructs plain values, records where every
field is, and finds what a spec must not contain. Every problem becomes a
:class:`~trainspec.dsl.diagnostics.Diagnostic`; bad input never raises.

Decisions worth knowing:

* **Scalars resolve exactly as PyYAML's YAML 1.1 ``SafeLoader``** (the composer runs PyYAML's
  own resolver), with one exception: timestamps stay the original string. Consequences users
  meet: ``yes``/``no``/``on``/``off`` are booleans; ``017`` is octal 15; ``1:30`` is 90
  (base 60); ``0x1f`` is 31; ``1_000`` is 1000; ``0o17`` is a **string** (YAML 1.1 has no
  ``0o``); a float needs a dot and a *signed* exponent, so ``1e3`` and ``1.0e3`` are
  **strings** while ``1.0e+3`` is 1000.0; ``.inf`` and ``.nan`` are floats. Quoted scalars are
  always strings. :attr:`SourceDoc.plain` keeps the source text of every plain scalar that
  became a non-string, and of every plain string that YAML 1.2 readers take for a number
  (``1e3``, ``0o17``, ``08``), so later layers can explain ``queue: no`` or ``tag: 1e3`` (TS109).
* **Duplicate keys (TS105): the first value is kept**; the later one is still checked for
  problems but contributes no data or positions. Any choice is arbitrary once it is an error;
  keeping the first keeps positions and data in agreement and costs nothing extra.
* **Aliases are expanded**; the positions recorded for aliased content are those of the anchored
  definition (the composer shares one node between anchor and alias), except the key of the
  entry holding the alias, which is exact. Expansion counts towards ``max_nodes`` (TS106).
* **Not allowed (TS113):** keys that are not strings (``1:``, ``null:``, ``yes:``, ``? [a]``),
  merge keys ``<<``, and tags other than ``!!str !!int !!float !!bool !!null !!seq !!map`` and
  ``!``. Such an entry is kept under its source text when it is a scalar (so validation can go
  on), dropped when it is a collection or a merge.
* **Tabs (TS104)** are reported only where YAML itself rejects them: a file whose leading tabs
  sit where libyaml accepts them (inside block or quoted scalars, flow collections) parses as
  usual. When parsing fails, every line from the failure on with a tab in its indentation
  (outside block scalars) is reported, since none of it was parsed; a failure caused by a tab
  is reported as TS104 only, not also as the TS103 syntax error.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related, Severity, format_path
from trainspec.dsl.load.safe_read import FileTooLarge, NotRegularFile, read_file
from trainspec.dsl.record import Record, TupleRecord

__all__ = ["DEFAULT_MAX_BYTES", "LoadLimits", "Mark", "SourceDoc", "load_file", "load_text", "parse_size"]


class Mark(TupleRecord):
    """A position in a source file; ``line`` and ``column`` are 1-based (columns count characters).

    A named tuple, not a dataclass: the loader makes one per key and value, and tuples are
    several times cheaper to create than frozen dataclass instances.
    """

    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


class SourceDoc(Record, frozen=False):
    """One document of a spec file, as plain Python data plus where each part of it is.

    Paths are tuples of mapping keys (``str``) and sequence indices (``int``); the root is ``()``.
    ``values[path]`` is where the value at ``path`` starts (``values[()]`` is the document start),
    ``keys[path]`` where the key of a mapping entry starts. ``plain[path]`` is the source text of
    each unquoted scalar that YAML 1.1 read as a bool, int, float or null, and of each unquoted
    string that a YAML 1.2 reader would read as a number (``1e3``, ``0o17``); tell the two apart
    by the type of the value in ``data``.
    """

    file: str
    index: int
    data: dict[str, Any]
    start: Mark
    values: dict[tuple, Mark]
    keys: dict[tuple, Mark]
    plain: dict[tuple, str]
    #: Whether any string value contains ``{{`` or ``{%`` (a template to render).
    templated: bool = False

    def mark(self, path: tuple | list) -> Mark:
        """The best position for ``path``: its value, else its key, else its nearest ancestor's."""
        path = tuple(path)
        values, keys = self.values, self.keys
        while path:
            found = values.get(path) or keys.get(path)
            if found is not None:
                return found
            path = path[:-1]
        return self.start


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


_DEFAULT_LIMITS = LoadLimits()
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


_T = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = _T + "str", _T + "int", _T + "float", _T + "bool", _T + "null"
_MAP, _SEQ, _TIMESTAMP, _MERGE, _VALUE = _T + "map", _T + "seq", _T + "timestamp", _T + "merge", _T + "value"
_TYPE_NAMES = {_INT: "an integer", _FLOAT: "a float", _BOOL: "a boolean", _NULL: "null"}

# Characters YAML forbids anywhere in a stream (C0/C1 controls, surrogates, U+FFFE/U+FFFF).
# Spelled as the forbidden set: the complement class compiles ~8x slower (start-up time).
# Compiled on first use (re caches it): it takes 0.4 ms, so ASCII text (nearly every spec) is
# checked with the set's ASCII part, which compiles 8x faster. Below, _BREAK and _BLOCK_HEADER
# are compiled on first use too: only error messages and files with tabs need them.
_NON_PRINTABLE = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"
_NON_PRINTABLE_ASCII = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Line breaks as YAML (and libyaml's marks) count them.
_BREAK = "\r\n|[\r\n\x85\u2028\u2029]"
# A node that starts with a tag, possibly after its anchor (``!!int 5``, ``&a !!bool no``).
_TAG_FIRST = re.compile(r"!|&\S+\s+!")
# A line ending in a block scalar header (``key: |``, ``- >-``, ``run: |2 # comment``).
_BLOCK_HEADER = r"(?:^|[ \t])[|>][-+0-9]{0,2}[ \t]*(?:#.*)?$"

_yaml_module: Any = None


def _yaml() -> Any:
    # PyYAML costs ~20 ms to import; import it on first load so ``import trainspec`` stays cheap.
    global _yaml_module
    if _yaml_module is None:
        import yaml

        _yaml_module = yaml
    return _yaml_module


# -- scalar construction (same results as PyYAML's SafeConstructor) -------------------------------


def _to_int(text: str) -> int:
    s = text.replace("_", "")
    sign = 1
    if s[:1] in ("+", "-"):
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0
    if s.startswith("0b"):
        return sign * int(s[2:], 2)
    if s.startswith("0x"):
        return sign * int(s[2:], 16)
    if s.startswith("0"):
        return sign * int(s, 8)
    if ":" in s:  # base 60: 1:30 == 90
        total = 0
        for part in s.split(":"):
            total = total * 60 + int(part)
        return sign * total
    return sign * int(s)


def _to_float(text: str) -> float:
    s = text.replace("_", "").lower()
    sign = 1.0
    if s[:1] in ("+", "-"):
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == ".inf":
        return sign * float("inf")
    if s == ".nan":
        return float("nan")
    if ":" in s:
        # Summed smallest place first, as PyYAML does, so results agree to the last bit.
        total, base = 0.0, 1
        for part in reversed(s.split(":")):
            total += float(part) * base
            base *= 60
        return sign * total
    return sign * float(s)


_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


def _to_bool(text: str) -> bool:
    return _BOOLS[text.lower()]


def _to_null(text: str) -> None:
    return None


_NUMERIC_START = frozenset("0123456789+-.")
#: What _YAML12_NUMBER can end with (its $ also matches before a final newline): "30m" or "8Gi"
#: are not candidates, so most specs never compile the pattern (0.2 ms of start-up).
_NUMERIC_END = frozenset("0123456789.abcdefABCDEF\n")
#: Plain scalars YAML 1.1 keeps as strings but YAML 1.2 core schema reads as numbers.
_YAML12_NUMBER = r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+)$"

_CONVERT = {_INT: _to_int, _FLOAT: _to_float, _BOOL: _to_bool, _NULL: _to_null}


# -- positions --------------------------------------------------------------------------------------


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of character ``offset`` in ``text`` (error paths only)."""
    offset = max(0, min(offset, len(text)))
    line, start = 1, 0
    for brk in re.compile(_BREAK).finditer(text, 0, offset):
        line, start = line + 1, brk.end()
    return line, offset - start + 1


def _lines(text: str) -> list[str]:
    return re.split(_BREAK, text)


def _tab_lines(text: str) -> dict[int, int]:
    """0-based line -> 1-based column of the first tab in its indentation, outside block scalars."""
    found: dict[int, int] = {}
    block_indent = -1  # indentation of the line that opened the current block scalar, if any
    for number, line in enumerate(_lines(text)):
        body = line.lstrip(" \t")
        spaces = len(line) - len(line.lstrip(" "))
        if block_indent >= 0:
            if not body or spaces > block_indent:
                continue  # content of a block scalar: a tab here is text, not indentation
            block_indent = -1
        lead = line[: len(line) - len(body)]
        if "\t" in lead:
            found[number] = lead.index("\t") + 1
        elif body and re.search(_BLOCK_HEADER, body):
            block_indent = spaces
    return found


# -- the walk ---------------------------------------------------------------------------------------


class _Stop(Exception):
    """Abandons the current document (TS106)."""


def _cycle_path(root: Any, path: tuple, nodes: Any) -> tuple | None:
    """If ``path`` runs through the same node twice (a recursive alias), the path to the alias."""
    seen = {id(root)}
    node = root
    for depth, part in enumerate(path):
        if node.__class__ is nodes.MappingNode:
            node = next((v for k, v in node.value if k.__class__ is nodes.ScalarNode and k.value == part), None)
        elif node.__class__ is nodes.SequenceNode and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None
        if node is None:
            return None
        if id(node) in seen:
            return path[: depth + 1]
        seen.add(id(node))
    return None


def _walked(node: Any, path: tuple, depth: int) -> Any:
    """Stands in for a document's ``walk`` once the document is built (see the end of ``_build``)."""
    raise AssertionError("a document's walk was called after the document was built")


def _build(
    root: Any, text: str, file: str, index: int, limits: LoadLimits, diags: list[Diagnostic]
) -> SourceDoc | None:
    """Construct one document from its root node; ``None`` if it must be dropped."""
    nodes = _yaml().nodes
    ScalarNode, MappingNode = nodes.ScalarNode, nodes.MappingNode
    values: dict[tuple, Mark] = {}
    keys: dict[tuple, Mark] = {}
    plain: dict[tuple, str] = {}
    budget = limits.max_nodes
    templated = False
    max_depth = limits.max_depth
    tag_first = _TAG_FIRST.match

    def report(
        code: str, node: Any, path: tuple, message: str, hint: str | None, related: tuple[Related, ...] = ()
    ) -> None:
        m = node.start_mark
        diags.append(
            Diagnostic(code, message, Severity.ERROR, file, m.line + 1, m.column + 1, format_path(path), hint, related)
        )

    def scalar(node: Any, tag: str, value: str, path: tuple) -> Any:
        convert = _CONVERT.get(tag)
        if convert is None:
            if tag == _TIMESTAMP or ((tag in (_MERGE, _VALUE)) and not tag_first(text, node.start_mark.index)):
                return value  # implicit timestamp, or a bare `<<`/`=` value: kept as text
            report(
                codes.DISALLOWED_TAG_OR_KEY,
                node,
                path,
                f"tag {tag.replace(_T, '!!')!r} is not allowed in specs",
                "remove the tag; specs use plain YAML strings, numbers, booleans, lists and mappings",
            )
            return value
        try:
            result = convert(value)
        except (ValueError, KeyError):
            report(
                codes.DISALLOWED_TAG_OR_KEY,
                node,
                path,
                f"{value!r} cannot be read as {tag.replace(_T, '!!')}",
                "remove the tag or fix the value",
            )
            return value
        if not node.style and not tag_first(text, node.start_mark.index):
            plain[path] = value  # an unquoted scalar YAML 1.1 turned into a non-string
        return result

    def key_of(knode: Any, path: tuple) -> str | None:
        """The string to use for a key that is not a plain string scalar; None to drop the entry."""
        if knode.__class__ is not ScalarNode:
            kind = "mapping" if knode.__class__ is MappingNode else "sequence"
            report(
                codes.DISALLOWED_TAG_OR_KEY,
                knode,
                path,
                f"a {kind} cannot be a mapping key; spec keys are strings",
                "use a plain string as the key",
            )
            return None
        tag, raw = knode.tag, knode.value
        if tag == _MERGE and not tag_first(text, knode.start_mark.index):
            report(
                codes.DISALLOWED_TAG_OR_KEY,
                knode,
                path,
                "merge keys ('<<') are not supported in specs",
                "write the fields out in full instead of merging an anchored mapping",
            )
            return None
        if tag in (_TIMESTAMP, _VALUE):
            return raw  # timestamps stay strings; '=' is just text
        read_as = _TYPE_NAMES.get(tag)
        if read_as is not None:
            report(
                codes.DISALLOWED_TAG_OR_KEY,
                knode,
                (*path, raw),
                f"key {raw!r} is read by YAML as {read_as}, not a string",
                f"quote the key: '{raw}'",
            )
        else:
            report(
                codes.DISALLOWED_TAG_OR_KEY,
                knode,
                (*path, raw),
                f"tag {tag.replace(_T, '!!')!r} is not allowed on a key",
                "remove the tag",
            )
        return raw

    def walk(node: Any, path: tuple, depth: int) -> Any:
        nonlocal budget, values, keys, plain, templated
        budget -= 1
        if budget < 0:
            report(
                codes.ALIAS_BOMB,
                node,
                path,
                f"document expands to more than {limits.max_nodes} values (aliases included); not loaded",
                "a spec never needs this many values: remove the aliases (this looks like a 'billion laughs' document)",
            )
            raise _Stop
        cls = node.__class__
        tag = node.tag
        if cls is ScalarNode:
            if tag == _STR:  # by far the most common case: no conversion
                value = node.value
                # YAML 1.2 readers (editors, Go tools) take 1e3 or 0o17 for numbers; PyYAML does not.
                if (
                    value
                    and value[0] in _NUMERIC_START
                    and value[-1] in _NUMERIC_END
                    and not node.style
                    and re.match(_YAML12_NUMBER, value)
                    and not tag_first(text, node.start_mark.index)
                ):  # `!!str 1e3` is unambiguous
                    plain[path] = value
                if "{" in value and ("{{" in value or "{%" in value):
                    templated = True
                return value
            return scalar(node, tag, node.value, path)
        if depth >= max_depth:
            alias_path = _cycle_path(root, path, nodes)
            if alias_path is not None:
                report(
                    codes.ALIAS_BOMB,
                    node,
                    alias_path,
                    "recursive alias: an anchored node contains an alias to itself",
                    "remove the alias; a spec is a tree",
                )
            else:
                report(
                    codes.ALIAS_BOMB,
                    node,
                    path,
                    f"nesting deeper than {max_depth} levels; not loaded",
                    "flatten the document",
                )
            raise _Stop
        depth += 1
        if cls is MappingNode:
            if tag != _MAP:
                report(
                    codes.DISALLOWED_TAG_OR_KEY,
                    node,
                    path,
                    f"tag {tag.replace(_T, '!!')!r} is not allowed in specs",
                    "remove the tag; it is read as a plain mapping",
                )
            out: dict[str, Any] = {}
            for knode, vnode in node.value:
                if knode.__class__ is ScalarNode and knode.tag == _STR:
                    key = knode.value
                else:
                    key = key_of(knode, path)
                    if key is None:
                        continue
                kp = (*path, key)
                km = knode.start_mark
                if key in out:
                    first = keys[kp]
                    report(
                        codes.DUPLICATE_KEY,
                        knode,
                        kp,
                        f"duplicate key {key!r} (first defined at line {first.line})",
                        "remove one of the two; the first value is used",
                        (Related("first definition", file, first.line, first.column),),
                    )
                    # Still look for problems inside the ignored value, but record nothing of it.
                    saved = values, keys, plain
                    values, keys, plain = {}, {}, {}
                    try:
                        walk(vnode, kp, depth)
                    finally:
                        values, keys, plain = saved
                    continue
                keys[kp] = Mark(km.line + 1, km.column + 1)
                vm = vnode.start_mark
                values[kp] = Mark(vm.line + 1, vm.column + 1)
                out[key] = walk(vnode, kp, depth)
            return out
        if tag != _SEQ:
            report(
                codes.DISALLOWED_TAG_OR_KEY,
                node,
                path,
                f"tag {tag.replace(_T, '!!')!r} is not allowed in specs",
                "remove the tag; it is read as a plain list",
            )
        items: list[Any] = []
        for i, item in enumerate(node.value):
            ip = (*path, i)
            im = item.start_mark
            values[ip] = Mark(im.line + 1, im.column + 1)
            items.append(walk(item, ip, depth))
        return items

    sm = root.start_mark
    start = Mark(sm.line + 1, sm.column + 1)
    try:
        data = walk(root, (), 0)
    except _Stop:
        return None
    except RecursionError:  # only reachable with a max_depth far above the default
        report(codes.ALIAS_BOMB, root, (), "document nests too deeply to load", "flatten the document")
        return None
    finally:
        # ``walk`` refers to itself through its closure: a reference cycle that would keep the
        # whole node tree alive until the garbage collector runs. Breaking it lets reference
        # counting free each document at once, so validating many specs stays linear.
        walk = _walked
    values[()] = start
    return SourceDoc(file, index, data, start, values, keys, plain, templated)


# -- documents and errors ---------------------------------------------------------------------------


_SYNTAX_HINTS = (
    ("mapping values are not allowed", "a plain value cannot contain ': '; quote the value, or fix the indentation"),
    ("could not find expected ':'", "every key needs a ':' after it; check the indentation and quotes"),
    ("did not find expected key", "check the indentation of this line against the lines above it"),
    ("did not find expected '-' indicator", "list items must line up under each other"),
    ("found undefined alias", "define the anchor (&name) before using the alias (*name)"),
    ("found unexpected end of stream", "a quote or bracket is not closed"),
)


def _syntax(e: Any, text: str, file: str) -> Diagnostic:
    """A TS103 (or, for libyaml's depth cap, TS106) diagnostic from a PyYAML error."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        line, column = mark.line + 1, mark.column + 1
    else:  # ReaderError: a character position only
        line, column = _position(text, getattr(e, "position", 0) or 0)
    # libyaml can place a mark just past the end of the text; keep positions inside the file.
    lines = _lines(text)
    if line > len(lines):
        line, column = len(lines), len(lines[-1]) + 1
    column = min(column, len(lines[line - 1]) + 1)
    if "maximum nesting depth" in problem:
        return Diagnostic(
            codes.ALIAS_BOMB, "nesting too deep to load", Severity.ERROR, file, line, column, "", "flatten the document"
        )
    hint = next((h for p, h in _SYNTAX_HINTS if p in problem), None)
    context, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
    if context and context.startswith("found duplicate anchor"):
        # PyYAML puts this one the other way round: the problem is "second occurrence".
        where = f" (first defined at {cmark.line + 1}:{cmark.column + 1})" if cmark is not None else ""
        problem, hint = f"duplicate anchor{where}", "give each anchor (&name) its own name"
    if hint is None and context:
        hint = f"{context} started at {cmark.line + 1}:{cmark.column + 1}" if cmark is not None else context
    if hint is None:
        hint = "check the indentation and quoting near this position"
    return Diagnostic(codes.YAML_SYNTAX, f"YAML syntax error: {problem}", Severity.ERROR, file, line, column, "", hint)


def _tab_diag(file: str, line0: int, column: int) -> Diagnostic:
    return Diagnostic(
        codes.TAB_INDENT,
        "tab character in indentation",
        Severity.ERROR,
        file,
        line0 + 1,
        column,
        "",
        "indent with spaces; YAML does not allow tabs for indentation",
    )


def _empty_doc_mark(text: str, node: Any, floor: int) -> tuple[int, int]:
    """Where an empty document begins: its '---' line if there is one, else the composer's mark."""
    lines = _lines(text)
    line0 = min(node.start_mark.line, len(lines) - 1)
    for number in range(line0 - 1, floor - 1, -1):
        if lines[number].startswith("---"):
            return number + 1, 1
    return line0 + 1, min(node.start_mark.column, len(lines[line0])) + 1


def _parse(text: str, file: str, limits: LoadLimits, docs: list[SourceDoc], diags: list[Diagnostic]) -> None:
    yaml = _yaml()
    tabs = _tab_lines(text) if "\t" in text else {}
    loader_class = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    loader = loader_class(text)
    index = 0
    floor = 0  # first line not part of an earlier document
    failed_at = -1
    try:
        while loader.check_node():
            root = loader.get_node()
            cls = root.__class__
            if cls is yaml.MappingNode:
                doc = _build(root, text, file, index, limits, diags)
                if doc is not None:
                    docs.append(doc)
            elif cls is yaml.ScalarNode and root.tag == _NULL and root.value == "" and not root.style:
                line, column = _empty_doc_mark(text, root, floor)
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
                kind = "a list" if cls is yaml.SequenceNode else _TYPE_NAMES.get(root.tag, "a string")
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
        diag = _syntax(e, text, file)
        failed_at = (diag.line or 1) - 1
        is_tab = failed_at in tabs or "tab" in (getattr(e, "problem", None) or "")
        if is_tab:
            if failed_at not in tabs:
                diags.append(_tab_diag(file, failed_at, diag.column or 1))
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
        diags.extend(_tab_diag(file, n, c) for n, c in tabs.items() if n >= failed_at)
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


def _too_big(file: str, size: int, cap: int) -> Diagnostic:
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


def _decode(data: bytes, file: str) -> tuple[str | None, Diagnostic | None]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a UTF-8 byte-order mark is allowed and dropped
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        before = data[: e.start].decode("utf-8")  # valid: the error is the first bad byte
        line, column = _position(before, len(before))
        hint = "re-save the file as UTF-8"
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            hint = "the file looks like UTF-16: re-save it as UTF-8"
        message = f"file is not valid UTF-8: byte 0x{data[e.start]:02x} ({e.reason})"
        return None, Diagnostic(codes.NOT_UTF8, message, Severity.ERROR, file, line, column, "", hint)


def _load(text: str, file: str, limits: LoadLimits) -> tuple[list[SourceDoc], list[Diagnostic]]:
    docs: list[SourceDoc] = []
    diags: list[Diagnostic] = []
    if text.startswith("\ufeff"):
        text = text[1:]
    bad = (_NON_PRINTABLE_ASCII if text.isascii() else re.compile(_NON_PRINTABLE)).search(text)
    if bad is not None:
        line, column = _position(text, bad.start())
        char = ord(bad.group())
        if 0xD800 <= char <= 0xDFFF:
            diags.append(
                Diagnostic(
                    codes.NOT_UTF8,
                    f"text contains a lone surrogate U+{char:04X}, not valid UTF-8",
                    Severity.ERROR,
                    file,
                    line,
                    column,
                    "",
                    "re-save the file as UTF-8",
                )
            )
        else:
            diags.append(
                Diagnostic(
                    codes.YAML_SYNTAX,
                    f"YAML syntax error: character U+{char:04X} is not allowed in YAML",
                    Severity.ERROR,
                    file,
                    line,
                    column,
                    "",
                    "remove the control character (is this a binary file?)",
                )
            )
        return docs, diags
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
    return docs, diags


def load_text(
    data: bytes | str, file: str, limits: LoadLimits = _DEFAULT_LIMITS
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
            return [], [_too_big(file, size, limits.max_bytes)]
        return _load(data, file, limits)
    if len(data) > limits.max_bytes:
        return [], [_too_big(file, len(data), limits.max_bytes)]
    text, problem = _decode(bytes(data), file)
    if problem is not None:
        return [], [problem]
    assert text is not None, "_decode returns the text or the problem"
    return _load(text, file, limits)


def load_file(
    path: str | os.PathLike, display: str | None = None, limits: LoadLimits = _DEFAULT_LIMITS
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
        return [], [_too_big(file, big.size, limits.max_bytes)]
    except NotRegularFile as odd:
        return [], [
            Diagnostic(
                codes.NOT_A_REGULAR_FILE,
                f"cannot read the file: it is {_special(odd.mode)}, not a regular file",
                Severity.ERROR,
                file,
                None,
                None,
                "",
                "name a regular file (reading this could block or never end)",
            )
        ]
    except (OSError, ValueError) as e:  # ValueError: a NUL character in the path
        if isinstance(e, IsADirectoryError):
            reason = "it is a directory"
        elif isinstance(e, FileNotFoundError):
            reason = "no such file"
        elif isinstance(e, PermissionError):
            reason = "permission denied"
        elif isinstance(e, OSError) and e.errno == errno.ENAMETOOLONG:
            return [], [
                Diagnostic(
                    codes.PATH_TOO_LONG,
                    "cannot read the file: its path name is too long",
                    Severity.ERROR,
                    file,
                    None,
                    None,
                    "",
                    "shorten the file or directory names",
                )
            ]
        elif isinstance(e, OSError) and e.errno == errno.ELOOP:
            return [], [
                Diagnostic(
                    codes.NOT_A_REGULAR_FILE,
                    "cannot read the file: symbolic link loop",
                    Severity.ERROR,
                    file,
                    None,
                    None,
                    "",
                    "point the link at a real file, or remove it",
                )
            ]
        else:
            reason = getattr(e, "strerror", None) or str(e)
        return [], [
            Diagnostic(
                codes.UNREADABLE_FILE,
                f"cannot read the file: {reason}",
                Severity.ERROR,
                file,
                None,
                None,
                "",
                "check the path and the file's permissions",
            )
        ]
    return load_text(data, file, limits)


def _special(mode: int) -> str:
    """A non-regular file type in words (FIFO, socket, device)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"
