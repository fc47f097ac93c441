"""The one walk from a document's node tree to its plain data, with where every part of it is.

The walk constructs values, records marks, counts nodes against ``max_nodes`` (aliases are
walked again, so an alias bomb stops here) and finds what a spec must not contain: tags and
keys it does not allow, duplicate keys, nesting too deep, recursive aliases.
"""

from __future__ import annotations

import re
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Related, Severity, format_path
from trainspec.dsl.load.strict_yaml.documents import Mark, SourceDoc
from trainspec.dsl.load.strict_yaml.limits import LoadLimits
from trainspec.dsl.load.strict_yaml.scalars import (
    CONVERT,
    MAP,
    MERGE,
    SEQ,
    STR,
    TAG_FIRST,
    TIMESTAMP,
    TYPE_NAMES,
    VALUE,
    pyyaml,
    shown,
    yaml12_number,
)


class _Stop(Exception):
    """Abandons the current document (TS106)."""


class _Walk:
    """One document's walk: the marks and plain texts it records, its node budget, what it reports.

    ``values``, ``keys`` and ``plain`` are swapped for throw-away dicts while the value of a
    duplicate key is walked (checked for problems, recorded nowhere).
    """

    __slots__ = ("budget", "diags", "file", "keys", "limits", "plain", "root", "templated", "text", "values")

    def __init__(self, root: Any, text: str, file: str, limits: LoadLimits, diags: list[Diagnostic]) -> None:
        self.root, self.text, self.file, self.limits, self.diags = root, text, file, limits, diags
        self.values: dict[tuple, Mark] = {}
        self.keys: dict[tuple, Mark] = {}
        self.plain: dict[tuple, str] = {}
        self.budget = limits.max_nodes
        self.templated = False

    def report(
        self, code: Code, node: Any, path: tuple, message: str, hint: str | None, related: tuple[Related, ...] = ()
    ) -> None:
        m = node.start_mark
        self.diags.append(
            Diagnostic(
                code, message, Severity.ERROR, self.file, m.line + 1, m.column + 1, format_path(path), hint, related
            )
        )

    def tagged(self, node: Any) -> bool:
        """Whether the node's text starts with an explicit tag (``!!int 5``, ``&a !!str no``)."""
        return re.compile(TAG_FIRST).match(self.text, node.start_mark.index) is not None

    def scalar(self, node: Any, path: tuple) -> Any:
        """A scalar whose tag is not ``!!str``: converted, or kept as text with a diagnostic."""
        tag, value = node.tag, node.value
        convert = CONVERT.get(tag)
        if convert is None:
            if tag in (TIMESTAMP, MERGE, VALUE) and not self.tagged(node):
                return value  # an implicit timestamp, or a bare `<<`/`=` value: kept as text
            self.report(
                codes.DISALLOWED_TAG_OR_KEY,
                node,
                path,
                f"tag {shown(tag)!r} is not allowed in specs",
                "remove the tag; specs use plain YAML strings, numbers, booleans, lists and mappings",
            )
            return value
        try:
            result = convert(value)
        except (ValueError, KeyError):
            self.report(
                codes.DISALLOWED_TAG_OR_KEY,
                node,
                path,
                f"{value!r} cannot be read as {shown(tag)}",
                "remove the tag or fix the value",
            )
            return value
        if not node.style and not self.tagged(node):
            self.plain[path] = value  # an unquoted scalar YAML 1.1 turned into a non-string
        return result

    def key_of(self, knode: Any, path: tuple) -> str | None:
        """The string to use for a key that is not a plain string scalar; None to drop the entry."""
        nodes = pyyaml().nodes
        if knode.__class__ is not nodes.ScalarNode:
            kind = "mapping" if knode.__class__ is nodes.MappingNode else "sequence"
            self.report(
                codes.DISALLOWED_TAG_OR_KEY,
                knode,
                path,
                f"a {kind} cannot be a mapping key; spec keys are strings",
                "use a plain string as the key",
            )
            return None
        tag, raw = knode.tag, knode.value
        if tag == MERGE and not self.tagged(knode):
            self.report(
                codes.DISALLOWED_TAG_OR_KEY,
                knode,
                path,
                "merge keys ('<<') are not supported in specs",
                "write the fields out in full instead of merging an anchored mapping",
            )
            return None
        if tag in (TIMESTAMP, VALUE):
            return raw  # timestamps stay strings; '=' is just text
        read_as = TYPE_NAMES.get(tag)
        if read_as is not None:
            message, hint = f"key {raw!r} is read by YAML as {read_as}, not a string", f"quote the key: '{raw}'"
        else:
            message, hint = f"tag {shown(tag)!r} is not allowed on a key", "remove the tag"
        self.report(codes.DISALLOWED_TAG_OR_KEY, knode, (*path, raw), message, hint)
        return raw

    def too_deep(self, node: Any, path: tuple) -> None:
        """Report nesting past ``max_depth``: a recursive alias when the path runs through a node twice."""
        alias_path = _cycle_path(self.root, path, pyyaml().nodes)
        if alias_path is not None:
            self.report(
                codes.ALIAS_BOMB,
                node,
                alias_path,
                "recursive alias: an anchored node contains an alias to itself",
                "remove the alias; a spec is a tree",
            )
        else:
            self.report(
                codes.ALIAS_BOMB,
                node,
                path,
                f"nesting deeper than {self.limits.max_depth} levels; not loaded",
                "flatten the document",
            )

    def walk(self, node: Any, path: tuple, depth: int, nodes: Any) -> Any:
        """The plain value of ``node`` at ``path``; raises :class:`_Stop` past a limit."""
        self.budget -= 1
        if self.budget < 0:
            self.report(
                codes.ALIAS_BOMB,
                node,
                path,
                f"document expands to more than {self.limits.max_nodes} values (aliases included); not loaded",
                "a spec never needs this many values: remove the aliases (this looks like a 'billion laughs' document)",
            )
            raise _Stop
        cls = node.__class__
        tag = node.tag
        if cls is nodes.ScalarNode:
            if tag != STR:
                return self.scalar(node, path)
            value = node.value  # by far the most common case: no conversion
            # YAML 1.2 readers (editors, Go tools) take 1e3 or 0o17 for numbers; PyYAML does not.
            if not node.style and yaml12_number(value) and not self.tagged(node):  # `!!str 1e3` is unambiguous
                self.plain[path] = value
            if "{" in value and ("{{" in value or "{%" in value):
                self.templated = True
            return value
        if depth >= self.limits.max_depth:
            self.too_deep(node, path)
            raise _Stop
        if cls is nodes.MappingNode:
            return self.mapping(node, path, depth + 1, nodes)
        if tag != SEQ:
            self.report(
                codes.DISALLOWED_TAG_OR_KEY,
                node,
                path,
                f"tag {shown(tag)!r} is not allowed in specs",
                "remove the tag; it is read as a plain list",
            )
        items: list[Any] = []
        for i, item in enumerate(node.value):
            ip = (*path, i)
            im = item.start_mark
            self.values[ip] = Mark(im.line + 1, im.column + 1)
            items.append(self.walk(item, ip, depth + 1, nodes))
        return items

    def mapping(self, node: Any, path: tuple, depth: int, nodes: Any) -> dict[str, Any]:
        """The plain dict of a mapping node; the first of duplicate keys wins."""
        if node.tag != MAP:
            self.report(
                codes.DISALLOWED_TAG_OR_KEY,
                node,
                path,
                f"tag {shown(node.tag)!r} is not allowed in specs",
                "remove the tag; it is read as a plain mapping",
            )
        out: dict[str, Any] = {}
        scalar_node = nodes.ScalarNode
        for knode, vnode in node.value:
            if knode.__class__ is scalar_node and knode.tag == STR:
                key = knode.value
            else:
                key = self.key_of(knode, path)
                if key is None:
                    continue
            kp = (*path, key)
            if key in out:
                self.duplicate(knode, vnode, kp, depth, nodes)
                continue
            km = knode.start_mark
            self.keys[kp] = Mark(km.line + 1, km.column + 1)
            vm = vnode.start_mark
            self.values[kp] = Mark(vm.line + 1, vm.column + 1)
            out[key] = self.walk(vnode, kp, depth, nodes)
        return out

    def duplicate(self, knode: Any, vnode: Any, kp: tuple, depth: int, nodes: Any) -> None:
        """Report a duplicate key; look for problems inside its value, but record nothing of it."""
        first = self.keys[kp]
        self.report(
            codes.DUPLICATE_KEY,
            knode,
            kp,
            f"duplicate key {kp[-1]!r} (first defined at line {first.line})",
            "remove one of the two; the first value is used",
            (Related("first definition", self.file, first.line, first.column),),
        )
        saved = self.values, self.keys, self.plain
        self.values, self.keys, self.plain = {}, {}, {}
        try:
            self.walk(vnode, kp, depth, nodes)
        finally:
            self.values, self.keys, self.plain = saved


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


def build(root: Any, text: str, file: str, index: int, limits: LoadLimits, diags: list[Diagnostic]) -> SourceDoc | None:
    """Construct one document from its root mapping node; ``None`` if it must be dropped (a limit
    was hit: the problem is in ``diags``)."""
    walk = _Walk(root, text, file, limits, diags)
    sm = root.start_mark
    start = Mark(sm.line + 1, sm.column + 1)
    try:
        data = walk.walk(root, (), 0, pyyaml().nodes)
    except _Stop:
        return None
    except RecursionError:  # only reachable with a max_depth far above the default
        walk.report(codes.ALIAS_BOMB, root, (), "document nests too deeply to load", "flatten the document")
        return None
    walk.values[()] = start
    return SourceDoc(file, index, data, start, walk.values, walk.keys, walk.plain, walk.templated)
