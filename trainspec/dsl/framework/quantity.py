"""Kubernetes resource quantities (``96``, ``500m``, ``1600Gi``, ``1e3``): the one parser and formatter.

Everything in trainspec that reads or writes a quantity goes through this module: spec fields,
the CEL ``quantity()`` library of the manifest checker, and the Kueue pre-flight.

The grammar is the one of ``k8s.io/apimachinery/pkg/api/resource``::

    quantity ::= [+-] number [suffix]
    number   ::= digits | digits "." [digits] | "." digits
    suffix   ::= Ki | Mi | Gi | Ti | Pi | Ei | n | u | m | k | M | G | T | P | E | (e|E) [+-] digits

What the API server's ``ParseQuantity`` does with it (read from upstream, summarised here):

* the number of digits is not limited: up to 18 significant digits (at a scale of nano or
  coarser) take an int64 fast path, anything longer becomes an arbitrary-precision ``inf.Dec``;
* the exponent of the ``e`` form is read as an int64 (a longer one is a syntax error) and then
  truncated to int32 without a check, so ``1e4294967296`` silently becomes ``1``; the scale of
  the ``inf.Dec`` is an int32 as well;
* a non-zero value finer than one nano is rounded up, away from zero: ``0.1n`` is ``1n``,
  ``-0.1n`` is ``-1n``;
* a binary-suffixed value is silently capped at 2^63-1 (``9Ei`` becomes 9223372036854775807),
  a decimal one is kept exactly at any size: ``1e5000`` is stored, ``1e3000000`` makes the server
  build an integer of three million digits;
* whoever reads the quantity afterwards (kubelet, scheduler, Kueue's ``ResourceValue``) converts
  it to an int64 (``Value()``, or ``MilliValue()`` for CPU) and silently overflows beyond that.

trainspec keeps the grammar and the nano rounding, holds values exactly (``Fraction``), and
replaces the caps and overflows by a bound: a quantity is at most 2^63-1 base units in
magnitude (:data:`MAX_QUANTITY`), anything larger is out of range. The magnitude is read off
the lengths of the digit runs before any number is built, so parsing is linear in the length of
the text whatever it holds (a megabyte of digits is rejected without making a big integer).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Literal

from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.kube_facts import INT32_MAX, INT64_MAX
from trainspec.dsl.record import Record

#: The largest magnitude of a quantity, in base units (bytes, cores, devices).
MAX_QUANTITY = INT64_MAX

#: A regular expression (for JSON Schema ``pattern``) accepting exactly the grammar above.
QUANTITY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"

# No nested repetition: a failed match backtracks each digit run once, so matching is linear.
_GRAMMAR = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")
#: Binary suffix -> power of two.
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
#: Decimal suffix -> power of ten.
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_NANO = 10**9
#: Decimal digits of MAX_QUANTITY: a value with more integer digits is out of range for sure.
_MAX_DIGITS = len(str(MAX_QUANTITY))
#: An exponent with more digits than this cannot fit an int32 (the API server's scale).
_MAX_EXPONENT_DIGITS = 10
#: Longest piece of the input quoted back in a message.
_SHOWN = 40


class QuantityError(ValueError, TrainspecError):
    """A value that is not a Kubernetes quantity (``reason`` "syntax") or is too large ("range")."""

    def __init__(self, message: str, reason: Literal["syntax", "range"] = "syntax") -> None:
        super().__init__(message)
        self.reason = reason


def shown(text: str) -> str:
    """``text`` quoted for a message, shortened when long (a diagnostic never repeats a megabyte)."""
    if len(text) <= _SHOWN:
        return repr(text)
    return f"{text[:_SHOWN]!r}... ({len(text)} characters)"


def _out_of_range(text: str, *, quoted: bool = True) -> QuantityError:
    return QuantityError(
        f"{shown(text) if quoted else text} is out of range: a quantity is at most 2^63-1 ({MAX_QUANTITY}) "
        "base units, the int64 every Kubernetes component reads it as",
        "range",
    )


def parse_quantity(text: str) -> Quantity:
    """Parse the text of a quantity as the API server does (see the module docstring).

    Raises :class:`QuantityError`: ``reason`` "syntax" when the text does not follow the
    grammar, "range" when its magnitude exceeds :data:`MAX_QUANTITY`.
    """
    if not isinstance(text, str):
        raise QuantityError(f"a quantity must be a string, not {type(text).__name__}")
    match = _GRAMMAR.fullmatch(text)
    if match is None or not (match[2] or match[3]):
        raise QuantityError(f"{shown(text)} is not a Kubernetes quantity (examples: 96, 500m, 1600Gi)")
    sign, whole, fraction, suffix = match[1], match[2].lstrip("0"), match[3] or "", match[4] or ""
    binary = suffix in _BINARY
    power2 = _BINARY.get(suffix, 0)
    power10 = _DECIMAL.get(suffix, 0)
    if suffix and not binary and suffix not in _DECIMAL:  # e-form; "E" alone is exa, found above
        power10 = _exponent(text, suffix[1:])
    digits = whole + fraction
    significant = digits.lstrip("0")
    if not significant:
        return Quantity(Fraction(0), binary)
    # The value is 0.<significant> x 10^order x 2^power2, with a non-zero first digit.
    order = len(whole) - (len(digits) - len(significant)) + power10
    if order > _MAX_DIGITS + 1:  # at least 10^(order-1) >= 10^20 > MAX_QUANTITY
        raise _out_of_range(text)
    nano = _nano_units(significant, order, power2)
    if nano > MAX_QUANTITY * _NANO:
        raise _out_of_range(text)
    return Quantity(Fraction(-nano if sign == "-" else nano, _NANO), binary)


def _exponent(text: str, raw: str) -> int:
    """The exponent of an e-form quantity; its digits are counted before any are converted."""
    body = raw.lstrip("+-").lstrip("0")
    if len(body) > _MAX_EXPONENT_DIGITS or (body and int(body) > INT32_MAX):
        # The API server would truncate it to int32 and so silently read another number.
        raise QuantityError(
            f"{shown(text)} is out of range: the exponent must fit an int32 "
            f"(at most {INT32_MAX} either way), as it does in the API server",
            "range",
        )
    value = int(body) if body else 0
    return -value if raw.startswith("-") else value


def _nano_units(significant: str, order: int, power2: int) -> int:
    """ceil(0.<significant> x 10^order x 2^power2 x 10^9): the magnitude in nano-units, rounded up.

    Only the first ``order + 9 + power2`` digits can change the result beyond "rounds up", so
    the rest is read as a single "something non-zero follows" bit (``sticky``).
    """
    keep = order + 9 + power2
    if keep <= 0:  # below 10^order x 2^power2 <= 10^-9: any non-zero amount rounds up to 1n
        return 1
    head = int(significant[:keep].ljust(keep, "0"))
    sticky = len(significant.rstrip("0")) > keep
    # value x 10^9 = (head + fraction) x 10^(order - keep + 9) x 2^power2 = (head + fraction) / 5^power2
    whole, rest = divmod(head, 5**power2)
    return whole + (1 if rest or sticky else 0)


def is_quantity(text: object) -> bool:
    """True when ``text`` is a string that parses as a quantity (in range)."""
    if not isinstance(text, str):
        return False
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def format_quantity(value: Fraction, binary: bool = False) -> str:
    """The canonical text of an amount (exact, or rounded up away from zero to the next nano).

    Binary amounts keep a binary suffix where one divides them (``1.5Gi`` -> ``1536Mi``);
    everything else takes the largest decimal suffix that leaves an integer (``0.5`` -> ``500m``,
    ``2000`` -> ``2k``). This is the Kubernetes canonical form except that the ``e`` form is
    written with SI suffixes (``1e3`` -> ``1k``), which parses back to the same amount.
    """
    if value == 0:
        return "0"
    if binary and value.denominator == 1 and abs(value) >= 1024:
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            unit = 1 << _BINARY[suffix]
            if value.numerator % unit == 0:
                return f"{value.numerator // unit}{suffix}"
        return str(value.numerator)  # as Kubernetes: 2000 stays 2000, never 2k, once binary
    scaled = value * _NANO
    if scaled.denominator != 1:  # finer than nano: Kubernetes rounds up, away from zero
        magnitude = -(-abs(scaled.numerator) // scaled.denominator)
        scaled = Fraction(magnitude if value > 0 else -magnitude)
    nano = scaled.numerator
    for suffix in ("E", "P", "T", "G", "M", "k", "", "m", "u"):
        unit = 10 ** (_DECIMAL[suffix] + 9)
        if nano % unit == 0:
            return f"{nano // unit}{suffix}"
    return f"{nano}n"


class Quantity(Record):
    """A Kubernetes resource quantity (``96``, ``1600Gi``, ``500m``), exact and canonical.

    ``value`` is the exact amount in base units (bytes, cores). ``str()`` gives the canonical
    form (:func:`format_quantity`); ``binary`` remembers a binary suffix, as Kubernetes does.
    """

    value: Fraction
    binary: bool = False

    @classmethod
    def parse(cls, raw: Any) -> Quantity:
        """A quantity from a spec value: a quantity string, an int or a finite float.

        Raises :class:`QuantityError` (a ValueError) for anything else or an amount out of range.
        """
        if isinstance(raw, Quantity):
            return raw
        if isinstance(raw, bool):
            raise QuantityError("a boolean is not a quantity")
        if isinstance(raw, int):
            if abs(raw) > MAX_QUANTITY:  # compares without printing: fine for any size
                text = str(raw) if raw.bit_length() < 4096 else f"an integer of {raw.bit_length()} bits"
                raise _out_of_range(text if len(text) <= 60 else f"an integer of {len(text)} digits", quoted=False)
            return cls(Fraction(raw))
        if isinstance(raw, float):
            if raw != raw or raw in (float("inf"), float("-inf")):
                raise QuantityError("not a finite number")
            return parse_quantity(repr(raw))
        if not isinstance(raw, str):
            raise QuantityError(f"expected a number or a string like 1600Gi, got {type(raw).__name__}")
        return parse_quantity(raw.strip())

    def __str__(self) -> str:
        return format_quantity(self.value, self.binary)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def to_k8s(self) -> int | str:
        """The form to emit: a plain integer where the canonical form is one, else the string."""
        text = str(self)
        return int(text) if text.lstrip("-").isdigit() else text

    @property
    def is_integer(self) -> bool:
        return self.value.denominator == 1

    def __json__(self) -> int | str:
        """How spec dumps (``model_dump``) write it: as emitted."""
        return self.to_k8s()

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value


def quantity_value(raw: Any) -> Fraction:
    """The exact amount of a quantity field of any Kubernetes object (``32``, ``"3Ti"``, ``0.5``).

    Surrounding blanks are ignored, as the API server's JSON decoder ignores them. Raises
    :class:`QuantityError` (a ValueError).
    """
    return Quantity.parse(raw).value
