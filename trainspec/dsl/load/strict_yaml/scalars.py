"""How a scalar resolves: PyYAML's YAML 1.1 ``SafeLoader`` results, timestamps kept as text.

Also PyYAML itself, imported on first use, and the tags the walk tells apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

T = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = T + "str", T + "int", T + "float", T + "bool", T + "null"
MAP, SEQ, TIMESTAMP, MERGE, VALUE = T + "map", T + "seq", T + "timestamp", T + "merge", T + "value"
#: How a non-string scalar tag is named in messages ("key 'yes' is read by YAML as a boolean").
TYPE_NAMES = {INT: "an integer", FLOAT: "a float", BOOL: "a boolean", NULL: "null"}

# A node that starts with a tag, possibly after its anchor (``!!int 5``, ``&a !!bool no``): a
# pattern compiled on first use (``re`` caches it), since most files have no node that asks.
TAG_FIRST = r"!|&\S+\s+!"

_yaml_module: Any = None


def pyyaml() -> Any:
    """The ``yaml`` module. PyYAML costs ~20 ms to import; importing it on first load keeps
    ``import trainspec`` cheap."""
    global _yaml_module
    if _yaml_module is None:
        import yaml

        _yaml_module = yaml
    return _yaml_module


_loader_class: Any = None
#: Plain scalars up to this many characters have their resolved tag remembered.
_MEMO_LENGTH = 64
#: Tags remembered at most (then forgotten all at once): keys and short values repeat across files.
_MEMO_SIZE = 1024


def loader_class() -> Any:
    """PyYAML's safe loader (libyaml's C composer when built) with a faster scalar resolver.

    The composer asks the resolver for the tag of every node, and PyYAML's answers a plain scalar
    by trying its YAML 1.1 patterns in Python each time. A plain scalar whose first character
    starts none of those patterns is a string (most values: names, images, paths); the others
    are mostly the same few texts in file after file (keys such as ``nodes``, numbers), so their
    tags are remembered (the tag of a plain scalar depends on its text alone). A safe loader has
    no path resolvers, so a quoted scalar is a string, and a mapping or sequence node a map or
    seq, as PyYAML's own resolver says.
    """
    global _loader_class
    if _loader_class is None:
        yaml = pyyaml()
        base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
        resolve = base.resolve
        scalar, mapping = yaml.ScalarNode, yaml.MappingNode
        tags: dict[str, str] = {}
        # The first characters some implicit resolver is registered for ("" for the empty scalar).
        starts = frozenset(key for key in base.yaml_implicit_resolvers if key)
        assert None not in base.yaml_implicit_resolvers, "a safe loader has no resolver for any character"

        class Loader(base):  # type: ignore[misc,valid-type]  # a class of PyYAML's, chosen at run time
            def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
                if kind is scalar:
                    if not implicit[0] or (value and value[0] not in starts):
                        return STR
                    tag = tags.get(value)
                    if tag is None:
                        tag = resolve(self, kind, value, implicit)
                        if len(value) <= _MEMO_LENGTH:
                            if len(tags) >= _MEMO_SIZE:
                                tags.clear()
                            tags[value] = tag
                    return tag
                return MAP if kind is mapping else SEQ

            def descend_resolver(self, current_node: Any, current_index: Any) -> None:
                return None  # no path resolvers

            def ascend_resolver(self) -> None:
                return None

        _loader_class = Loader
    return _loader_class


def shown(tag: str) -> str:
    """A tag as users write it: ``!!int``."""
    return tag.replace(T, "!!")


# -- construction (same results as PyYAML's SafeConstructor) ---------------------------------------


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


#: The constructor of each non-string scalar tag (it raises ValueError or KeyError on bad text).
CONVERT: dict[str, Callable[[str], Any]] = {INT: _to_int, FLOAT: _to_float, BOOL: _to_bool, NULL: _to_null}

# -- strings a YAML 1.2 reader would take for numbers -------------------------------------------------

_NUMERIC_START = frozenset("0123456789+-.")
#: What _YAML12_NUMBER can end with (its $ also matches before a final newline): "30m" or "8Gi"
#: are not candidates, so most specs never compile the pattern (0.2 ms of start-up).
_NUMERIC_END = frozenset("0123456789.abcdefABCDEF\n")
#: Plain scalars YAML 1.1 keeps as strings but YAML 1.2 core schema reads as numbers.
_YAML12_NUMBER = r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+)$"


def yaml12_number(value: str) -> bool:
    """Whether a string YAML 1.1 kept as text is a number to YAML 1.2 readers (editors, Go tools):
    ``1e3``, ``0o17``, ``08``."""
    return bool(value and value[0] in _NUMERIC_START and value[-1] in _NUMERIC_END and re.match(_YAML12_NUMBER, value))
