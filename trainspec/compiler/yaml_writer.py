"""A YAML writer for the plain objects the compiler emits, byte-identical to PyYAML's block style.

``yaml.dump`` through libyaml's emitter still builds a node per value in Python and resolves every
scalar's implicit tag by regex; for the compiler's objects that was about half of ``compile``. This
writer walks the objects once and writes the text itself, for exactly the documents the emitter
would write the same way whichever emitter PyYAML uses (libyaml's or its pure-Python one):

* ``dict`` with ``str`` keys (insertion order), ``list``, ``str``, ``int``, ``bool``, ``None`` and
  ``float``; mappings in block style, a sequence under a key not indented (``key:\\n- a``), empty
  ones in flow style (``{}``, ``[]``);
* a string as the emitter chooses: plain when that reads back as the same string, single-quoted
  when :func:`ambiguous` says so or plain is not allowed (an indicator, ``": "``, ``" #"``, a space
  at either end), a literal block (``|``, ``|-``, ``|2-``) when it holds a line break.

Everything else makes :func:`render` return ``None`` and the caller dumps that object with PyYAML:
a character the emitter escapes or writes raw only in some modes (controls, tabs, bidi controls,
line separators, characters outside the BMP), a block scalar that keeps trailing blank lines, a
space right before a line break, keys that are not short single-line strings, strings long enough
to be folded, any other type and any subclass (the safe representer writes tuples, sets and dates
its own way, and refuses the rest), and a container met twice (PyYAML writes an anchor and an
alias). The output of an object this writer accepts therefore holds no character ``emit`` would
re-dump in ASCII. Plain scalars are checked with PyYAML's default resolver, the one the compiler's
dumper uses.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Any

from yaml.resolver import Resolver

__all__ = ["AMBIGUOUS", "Writer", "ambiguous", "render"]

# Strings any YAML reader (1.1 or 1.2, PyYAML or Go) could take for a number, boolean or null.
# PyYAML quotes only what *it* would misread; kubectl's parser also reads 3e-4 as a float, and
# takes the base prefixes in either case (0X1F, 0B1, 0O7: Go's strconv). The compiler's dumper
# requests single quotes for these; the writer does the same. See :func:`ambiguous` for ``_``.
AMBIGUOUS = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?0(?:[bB][01_]+|[oO]?[0-7_]+|[xX][0-9a-fA-F_]+)|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
    r"|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|~|null|Null|NULL|)$"
)

#: First characters after which Go's YAML reader (kubectl, Argo CD, Flux) drops every ``_``
#: before it tries the text as a number: ``-_1``, ``1e_5`` and ``0_x1F`` are numbers to it.
_GO_NUMBER_START = frozenset("+-0123456789")


def ambiguous(value: str) -> bool:
    """Whether some YAML reader would take the plain scalar ``value`` for something else than
    this string: :data:`AMBIGUOUS`, with the ``_`` Go's reader deletes from a would-be number."""
    if AMBIGUOUS.match(value):
        return True
    return "_" in value and value[:1] in _GO_NUMBER_START and AMBIGUOUS.match(value.replace("_", "")) is not None


# Characters both emitters write as they are with allow_unicode: printable ASCII and the printable
# BMP, less the BOM and what emit's ASCII re-dump guards against (bidi controls, line and paragraph
# separators). No space and no colon: the patterns below place those. libyaml escapes characters
# beyond the BMP, PyYAML's own emitter does not: they are left to the dumper.
_ASCII_TEXT = "!-9;-~"
_TEXT = _ASCII_TEXT + "\u00a0-\u061b\u061d-\u200d\u2010-\u2027\u202f-\u2065\u206a-\ud7ff\ue000-\ufefe\uff00-\ufffd"


class _Shapes:
    """The three scalar shapes over one set of text characters.

    ``plain``: a single-line scalar both emitters would write plain in block context (their
    analyze_scalar): no indicator first, no "- ", "? ", ": " first, no document marker, no ": "
    or " #" inside, no space at either end. Whether it also reads back as a string is the
    resolver's question. ``quotable``: a single-line scalar either emitter writes single-quoted
    unchanged but for doubled quotes. ``block``: a multi-line string written as a literal block
    (no space right before a break and none at the end: the emitters then switch to double quotes).
    """

    __slots__ = ("block", "plain", "quotable")

    def __init__(self, text: str) -> None:
        self.plain = re.compile(
            rf"(?![ #,\[\]{{}}&*!|>'\"%@`]|[-?:](?: |\Z)|---|\.\.\.)(?:[{text}]|:(?! |\Z)| (?!#|\Z))+"
        )
        self.quotable = re.compile(rf"[{text}: ]*")
        self.block = re.compile(rf"(?:[{text}:\n]| (?!\n|\Z))*")


# For ASCII text (nearly every value) the character class is one small bitmap, compiled here in a
# fraction of a millisecond; the BMP-wide class takes about 3 ms a pattern to compile, paid by the
# first run that writes a non-ASCII string. Both agree on every ASCII string.
_ASCII = _Shapes(_ASCII_TEXT)


@cache
def _unicode() -> _Shapes:
    return _Shapes(_TEXT)


def _shapes(value: str) -> _Shapes:
    return _ASCII if value.isascii() else _unicode()


# Beyond this length a plain or quoted scalar could reach the emit width (1 << 16 columns) and
# be folded; the indentation is bounded by the recursion limit well below the rest.
_LONGEST = 1 << 14
# Keys longer than this are not simple keys to one of the emitters ("? key" form): libyaml takes
# up to 128 bytes, PyYAML's emitter fewer than 128 characters including the 5 of "!!str".
_LONGEST_KEY = 120

_STR = Resolver.DEFAULT_SCALAR_TAG
_FLOAT = "tag:yaml.org,2002:float"
_IMPLICIT: dict[Any, list[tuple[str, re.Pattern[str]]]] = Resolver.yaml_implicit_resolvers

# Rendered scalars by string (names, images and field values repeat across objects), per writer.
# Bounded in entries and in the length of what is kept (a long string is checked in one regex pass
# anyway), so a long run's memory does not grow with the number of distinct strings it wrote.
_CACHE_SIZE = 1 << 12
_CACHED_LENGTH = 256
# Indentation strings.
_DEEP = 64
_PADS = tuple(" " * n for n in range(_DEEP))


class _Unsupported(Exception):
    """The object holds something this writer leaves to the dumper."""


class Writer:
    """Writes documents as PyYAML's dumper would; keeps the scalars it rendered for the next ones.

    One writer serves one run (a stream, a tree, a streamed compile's batches): its caches live
    as long as it does and never exceed :data:`_CACHE_SIZE` entries each.
    """

    __slots__ = ("_keys", "_values")

    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self._keys: dict[str, str] = {}

    def render(self, obj: Any) -> str | None:
        """``obj`` (a dict) as PyYAML's block-style document text, or None where the dumper must write it.

        The text is what the compiler's dumper writes with ``sort_keys=False``, ``allow_unicode=True``
        and a width of ``1 << 16``.
        """
        if type(obj) is not dict:
            return None
        if not obj:
            return "{}\n"
        out: list[str] = []
        seen: list[Any] = []
        try:
            self._mapping(obj, 0, "", out, seen)
        except (_Unsupported, RecursionError):
            return None  # RecursionError: nested deeper than the interpreter allows, or a cycle
        # A container met twice is written by the representer as an alias of the first (&id001, *id001).
        # ``seen`` holds every container to the end, so no id is reused during the walk.
        if len(set(map(id, seen))) != len(seen):
            return None
        return "".join(out)

    def _mapping(self, node: dict[Any, Any], indent: int, lead: str, out: list[str], seen: list[Any]) -> None:
        """Write a non-empty mapping whose keys are at column ``indent``; ``lead`` starts its first line."""
        seen.append(node)
        pad = _PADS[indent] if indent < _DEEP else " " * indent
        keys, values = self._keys, self._values
        for key, value in node.items():
            text = keys.get(key) if type(key) is str else None
            if text is None:
                text = _remember(keys, key, _key(key))
            kind = type(value)
            if kind is str:
                scalar = values.get(value)
                if scalar is None:
                    scalar = self._value(value)
                if scalar:
                    out.append(f"{lead}{text} {scalar}\n")
                else:
                    out.append(f"{lead}{text} {_block(value, indent + 2)}")
            elif kind is dict:
                if value:
                    out.append(f"{lead}{text}\n")
                    self._mapping(value, indent + 2, pad + "  ", out, seen)
                else:
                    seen.append(value)
                    out.append(f"{lead}{text} {{}}\n")
            elif kind is list:
                if value:
                    out.append(f"{lead}{text}\n")
                    self._sequence(value, indent, pad, out, seen)  # under a key, a sequence is not indented
                else:
                    seen.append(value)
                    out.append(f"{lead}{text} []\n")
            else:
                out.append(f"{lead}{text} {_other(value)}\n")
            lead = pad

    def _sequence(self, node: list[Any], indent: int, lead: str, out: list[str], seen: list[Any]) -> None:
        """Write a non-empty sequence whose dashes are at column ``indent``; ``lead`` starts its first line."""
        seen.append(node)
        pad = _PADS[indent] if indent < _DEEP else " " * indent
        inner = indent + 2
        values = self._values
        for item in node:
            prefix = f"{lead}- "
            kind = type(item)
            if kind is str:
                scalar = values.get(item)
                if scalar is None:
                    scalar = self._value(item)
                if scalar:
                    out.append(f"{prefix}{scalar}\n")
                else:
                    out.append(f"{prefix}{_block(item, inner)}")
            elif kind is dict:
                if item:
                    self._mapping(item, inner, prefix, out, seen)  # the first key shares the dash's line
                else:
                    seen.append(item)
                    out.append(f"{prefix}{{}}\n")
            elif kind is list:
                if item:
                    self._sequence(item, inner, prefix, out, seen)
                else:
                    seen.append(item)
                    out.append(f"{prefix}[]\n")
            else:
                out.append(f"{prefix}{_other(item)}\n")
            lead = pad

    def _value(self, value: str) -> str:
        """A string value's text, or "" for a literal block (its text depends on the indentation)."""
        text = _value(value)
        return _remember(self._values, value, text) if len(value) <= _CACHED_LENGTH else text


def render(obj: Any) -> str | None:
    """:meth:`Writer.render` with a writer of its own (one document; a run keeps one writer)."""
    return Writer().render(obj)


def _remember(cache: dict[str, str], key: str, text: str) -> str:
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[key] = text
    return text


def _key(key: Any) -> str:
    """A mapping key with its colon: a short single-line string, plain or single-quoted."""
    if type(key) is not str or not key or len(key.encode("utf-8")) > _LONGEST_KEY or "\n" in key:
        raise _Unsupported  # the dumper's own; empty keys are complex keys to PyYAML's emitter
    return _inline(key) + ":"


def _value(value: str) -> str:
    """A string value's text, or "" for a literal block (its text depends on the indentation)."""
    if "\n" in value:
        if not _shapes(value).block.fullmatch(value) or value.endswith("\n\n") or value == "\n":
            raise _Unsupported  # double-quoted, or keep-chomping "|+" (which may end the stream with "...")
        return ""
    return _inline(value)


def _inline(value: str) -> str:
    """A single-line string as the dumper writes it: single-quoted when ambiguous, else plain if allowed."""
    if len(value) > _LONGEST:
        raise _Unsupported
    if ambiguous(value):
        return f"'{value}'"  # digits, letters, dots, signs, colons, underscores, tildes: nothing to double
    shapes = _shapes(value)
    if shapes.plain.fullmatch(value) and _resolve(value) == _STR:
        return value
    if shapes.quotable.fullmatch(value):
        return "'" + value.replace("'", "''") + "'"
    raise _Unsupported


def _block(value: str, indent: int) -> str:
    """A literal block scalar (header line and content) for a string the writer accepted."""
    head = "|2" if value[0] in " \n" else "|"  # content that starts with a space or break needs its indent
    if value.endswith("\n"):
        value = value[:-1]  # clip: the one final break is the block's own
    else:
        head += "-"
    pad = " " * indent
    lines = "\n".join([f"{pad}{line}" if line else "" for line in value.split("\n")])
    return f"{head}\n{lines}\n"


def _other(value: Any) -> str:
    """An int, bool, None or float as the safe representer writes it."""
    kind = type(value)
    if kind is int:
        return str(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is float:
        return _float(value)
    raise _Unsupported


def _float(value: float) -> str:
    """SafeRepresenter.represent_float's text; anything that would not read back as a float is the dumper's."""
    if math.isnan(value):
        text = ".nan"
    elif math.isinf(value):
        text = ".inf" if value > 0 else "-.inf"
    else:
        text = repr(value).lower()
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)  # 1e+17 is no YAML float; 1.0e+17 is
    if _resolve(text) != _FLOAT:
        raise _Unsupported  # the emitter would add a tag
    return text


def _resolve(value: str) -> str:
    """The tag PyYAML's resolver gives ``value`` as a plain scalar (Resolver.resolve, implicit)."""
    for tag, pattern in _IMPLICIT.get(value[:1], ()):
        if pattern.match(value):
            return tag
    return _STR
