"""Kubernetes CEL library functions that cel-python lacks, as celpy extension functions.

The API server adds libraries on top of standard CEL. cel-python implements the standard
language only, so rules using these would fail with "undeclared reference". Shimmed here:

* quantity: ``isQuantity(s)``, ``quantity(s)`` and the methods ``sign``, ``isInteger``,
  ``asInteger``, ``asApproximateFloat``, ``add``, ``sub``, ``isGreaterThan``, ``isLessThan``,
  ``compareTo`` (exact arithmetic on :class:`fractions.Fraction`);
* url (minimal): ``isURL(s)``, ``url(s)`` with ``getScheme``, ``getHost``, ``getHostname``,
  ``getPort``, ``getEscapedPath``, ``getQuery``;
* strings extension: ``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``,
  ``replace``, ``split``, ``substring``, ``trim``, ``join``;
* lists extension: ``isSorted``, ``sum``, ``max``, ``indexOf``/``lastIndexOf`` on lists
  (``min`` is built into celpy);
* regex: ``find``, ``findAll``.

Not shimmed (a rule using them is reported as TS502, never passed silently): ``ip``/``cidr``,
``sets.*``, ``format``, semver, optionals (``.?``), two-variable comprehensions.

Only celpy imports this module, lazily.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

import re2
from celpy import celtypes

from trainspec.dsl.quantity import QuantityError, is_quantity, parse_quantity
from trainspec.dsl.wellknown import INT64_MAX


class Quantity:
    """A CEL value of type ``kubernetes.Quantity``."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"quantity({float(self.value)!r})"


def _operand(other: Any) -> Fraction:
    if isinstance(other, Quantity):
        return other.value
    if isinstance(other, int) and not isinstance(other, bool):
        return Fraction(other)
    raise TypeError(f"expected a quantity or an int, got {type(other).__name__}")


def _compare(a: Quantity, b: Quantity) -> int:
    if not isinstance(a, Quantity) or not isinstance(b, Quantity):
        raise TypeError("compareTo needs two quantities")
    return (a.value > b.value) - (a.value < b.value)


def f_quantity(text: Any) -> Quantity:
    """``quantity(s)``: the package's one quantity parser, so the shim is as bounded as it is.

    Where the API server differs: it caps a binary value at 2^63-1 and keeps a decimal one of
    any size, while this reports both beyond 2^63-1 as an evaluation error (TS502).
    """
    try:
        return Quantity(parse_quantity(str(text)).value)
    except QuantityError as exc:
        raise ValueError(str(exc)) from exc


def f_as_integer(q: Quantity) -> celtypes.IntType:
    if q.value.denominator != 1 or not -INT64_MAX - 1 <= q.value.numerator <= INT64_MAX:
        raise ValueError(f"{q!r} cannot be represented as an int64")
    return celtypes.IntType(q.value.numerator)


class URL:
    """A CEL value of type ``kubernetes.URL`` (minimal)."""

    __slots__ = ("parts",)

    def __init__(self, text: str) -> None:
        self.parts = urlsplit(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and self.parts == other.parts

    def __hash__(self) -> int:
        return hash(self.parts)


def _is_url(text: Any) -> bool:
    # The API server uses Go's url.ParseRequestURI: an absolute URL or an absolute path.
    if not isinstance(text, str) or not text or any(c.isspace() for c in text):
        return False
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return bool(parts.scheme) or text.startswith("/")


def f_url(text: Any) -> URL:
    if not _is_url(text):
        raise ValueError(f"URL parse error: {text!r}")
    return URL(str(text))


def _url_query(u: URL) -> celtypes.MapType:
    parsed = parse_qs(u.parts.query, keep_blank_values=True)
    return celtypes.MapType(
        {
            celtypes.StringType(k): celtypes.ListType([celtypes.StringType(v) for v in vs])
            for k, vs in parsed.items()
        }
    )


# -- strings, lists, regex ---------------------------------------------------------------------


def f_index_of(target: Any, item: Any, start: Any = 0) -> celtypes.IntType:
    if isinstance(target, str):
        return celtypes.IntType(str(target).find(str(item), int(start)))
    for index, value in enumerate(target):
        if value == item:
            return celtypes.IntType(index)
    return celtypes.IntType(-1)


def f_last_index_of(target: Any, item: Any, *end: Any) -> celtypes.IntType:
    if isinstance(target, str):
        stop = int(end[0]) + len(str(item)) if end else len(target)
        return celtypes.IntType(str(target).rfind(str(item), 0, stop))
    for index in range(len(target) - 1, -1, -1):
        if target[index] == item:
            return celtypes.IntType(index)
    return celtypes.IntType(-1)


def f_replace(text: Any, old: Any, new: Any, count: Any = -1) -> celtypes.StringType:
    return celtypes.StringType(str(text).replace(str(old), str(new), int(count)))


def f_split(text: Any, sep: Any, limit: Any = -1) -> celtypes.ListType:
    limit = int(limit)
    if limit == 0:
        return celtypes.ListType()
    parts = str(text).split(str(sep), limit - 1) if limit > 0 else str(text).split(str(sep))
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def f_substring(text: Any, start: Any, *end: Any) -> celtypes.StringType:
    stop = int(end[0]) if end else len(text)
    if not 0 <= int(start) <= stop <= len(text):
        raise ValueError(f"substring index out of range: [{start}:{stop}] of {len(text)}")
    return celtypes.StringType(str(text)[int(start) : stop])


def f_join(items: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(str(sep).join(str(i) for i in items))


def f_is_sorted(items: Any) -> celtypes.BoolType:
    return celtypes.BoolType(all(items[i] <= items[i + 1] for i in range(len(items) - 1)))


def f_sum(items: Any) -> Any:
    total: Any = celtypes.IntType(0)
    for index, item in enumerate(items):
        total = item if index == 0 else total + item
    return total


def f_max(items: Any, *more: Any) -> Any:
    values = list(items) if not more else [items, *more]
    if not values:
        raise ValueError("max of an empty list")
    return max(values)


def f_find(text: Any, pattern: Any) -> celtypes.StringType:
    found = re2.search(str(pattern), str(text))
    return celtypes.StringType(found.group(0) if found else "")


def f_find_all(text: Any, pattern: Any, limit: Any = -1) -> celtypes.ListType:
    found = [celtypes.StringType(m.group(0)) for m in re2.finditer(str(pattern), str(text))]
    return celtypes.ListType(found if int(limit) < 0 else found[: int(limit)])


#: name -> implementation, passed to celpy's ``Environment.program(functions=...)``.
FUNCTIONS: dict[str, Any] = {
    "isQuantity": lambda s: celtypes.BoolType(is_quantity(str(s))),
    "quantity": f_quantity,
    "sign": lambda q: celtypes.IntType((q.value > 0) - (q.value < 0)),
    "isInteger": lambda q: celtypes.BoolType(q.value.denominator == 1),
    "asInteger": f_as_integer,
    "asApproximateFloat": lambda q: celtypes.DoubleType(float(q.value)),
    "add": lambda q, other: Quantity(q.value + _operand(other)),
    "sub": lambda q, other: Quantity(q.value - _operand(other)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_compare(a, b) > 0),
    "isLessThan": lambda a, b: celtypes.BoolType(_compare(a, b) < 0),
    "compareTo": lambda a, b: celtypes.IntType(_compare(a, b)),
    "isURL": lambda s: celtypes.BoolType(_is_url(s)),
    "url": f_url,
    "getScheme": lambda u: celtypes.StringType(u.parts.scheme),
    "getHost": lambda u: celtypes.StringType(u.parts.netloc.rpartition("@")[2]),
    "getHostname": lambda u: celtypes.StringType(u.parts.hostname or ""),
    "getPort": lambda u: celtypes.StringType(str(u.parts.port) if u.parts.port is not None else ""),
    "getEscapedPath": lambda u: celtypes.StringType(u.parts.path),
    "getQuery": _url_query,
    "charAt": lambda s, i: celtypes.StringType(str(s)[int(i)] if int(i) < len(s) else ""),
    "indexOf": f_index_of,
    "lastIndexOf": f_last_index_of,
    "lowerAscii": lambda s: celtypes.StringType("".join(c.lower() if c.isascii() else c for c in str(s))),
    "upperAscii": lambda s: celtypes.StringType("".join(c.upper() if c.isascii() else c for c in str(s))),
    "replace": f_replace,
    "split": f_split,
    "substring": f_substring,
    "trim": lambda s: celtypes.StringType(str(s).strip()),
    "join": f_join,
    "isSorted": f_is_sorted,
    "sum": f_sum,
    "max": f_max,
    "find": f_find,
    "findAll": f_find_all,
}
