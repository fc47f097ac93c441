"""Kubernetes resource quantities (``500m``, ``20Gi``, ``1e3``), parsed exactly.

Used by the CEL ``quantity()`` shim and by the hand-written PersistentVolumeClaim schema.
Values are kept as :class:`fractions.Fraction` so that ``1Gi`` vs ``1073741824`` and
``0.5`` vs ``500m`` compare exactly, as they do in the API server.
"""

from __future__ import annotations

import re
from fractions import Fraction

# The quantity grammar of k8s.io/apimachinery: a signed decimal number followed by an
# optional binary suffix (Ki..Ei), decimal suffix (n, u, m, k, M..E) or decimal exponent.
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

#: A regular expression (for JSON Schema ``pattern``) accepting exactly what parse() accepts.
QUANTITY_PATTERN = _QUANTITY.pattern


class QuantityError(ValueError):
    """The text is not a valid Kubernetes quantity."""


def parse_quantity(text: str) -> Fraction:
    """Parse a quantity string into its exact value; raise :class:`QuantityError`."""
    if not isinstance(text, str):
        raise QuantityError(f"quantity must be a string, not {type(text).__name__}")
    match = _QUANTITY.match(text)
    if match is None:
        raise QuantityError(f"invalid quantity {text!r}")
    value = Fraction(match.group("num"))
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix in _DECIMAL:
        return value * Fraction(10) ** _DECIMAL[suffix]
    if suffix:
        # Exponents beyond what the API server accepts would only make huge integers here.
        exponent = int(suffix[1:])
        if abs(exponent) > 100:
            raise QuantityError(f"quantity exponent out of range in {text!r}")
        return value * Fraction(10) ** exponent
    return value


def is_quantity(text: object) -> bool:
    """True when ``text`` is a string that parses as a quantity."""
    try:
        parse_quantity(text)  # type: ignore[arg-type]
    except QuantityError:
        return False
    return True
