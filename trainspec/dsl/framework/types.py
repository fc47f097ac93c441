"""Value types that carry the spec's invariants: quantities, durations, names, parameter counts, URIs.

Each type parses once, keeps a canonical form, and fails with an :class:`~trainspec.dsl.framework.modeling.Invalid`
whose ``type`` names the diagnostic it becomes (see :mod:`trainspec.dsl.load.validation`). The models
use them through the protocol of :mod:`trainspec.dsl.framework.modeling`: ``__validate__(raw)`` parses a
field value, ``__json_schema__()`` describes it, and ``__json__()`` (value classes) dumps it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Annotated, Any, ClassVar, Literal

from trainspec.dsl.framework.measures import MAX_PARAMETERS, Duration, ParamCount, RangeError, fail
from trainspec.dsl.framework.modeling import STRICT, Invalid
from trainspec.dsl.framework.quantity import MAX_QUANTITY, QUANTITY_PATTERN, Quantity, QuantityError
from trainspec.dsl.kube_facts import (
    DNS1035_LABEL_PATTERN,
    DNS1123_LABEL_MAX,
    DNS1123_LABEL_PATTERN,
    DNS1123_SUBDOMAIN_MAX,
    DNS1123_SUBDOMAIN_PATTERN,
    ENV_NAME_MAX,
    ENV_NAME_PATTERN,
    IMAGE_MAX,
    IMAGE_NAME_MAX,
    LABEL_KEY_MAX,
    LABEL_VALUE_MAX,
    LABEL_VALUE_PATTERN,
    MAX_CPU_MILLI,
    PATH_MAX,
    image_repository,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_env_name,
    is_label_value,
    is_qualified_name,
)
from trainspec.dsl.record import Record

__all__ = [
    "AbsolutePath",
    "AutoOrQuantity",
    "Count",
    "CpuQuantity",
    "DataSourceUri",
    "Duration",
    "DurationInput",
    "EnvName",
    "Image",
    "LabelKey",
    "LabelValue",
    "MAX_PARAMETERS",
    "Name",
    "NamespaceName",
    "ObjectName",
    "ObjectStoreUri",
    "ParamCount",
    "ParamCountInput",
    "QUANTITY_PATTERN",
    "Quantity",
    "QuantityInput",
    "RangeError",
    "ResourceQuantity",
    "StrictBool",
    "UriPolicy",
    "VolumeSize",
    "fail",
    "is_qualified_key",
]

# -- Kubernetes quantities (parsed and formatted by :mod:`trainspec.dsl.framework.quantity`) -------------

#: A quantity that is never negative: the API server rejects negative resource amounts.
_NONNEGATIVE_PATTERN = QUANTITY_PATTERN.replace("[+-]?", "\\+?", 1)


def _quantity(raw: Any) -> Quantity:
    """``Quantity.parse(raw)``; a bad text is TS204, an amount beyond int64 TS203."""
    try:
        return Quantity.parse(raw)
    except QuantityError as exc:
        raise fail("ts_range" if exc.reason == "range" else "ts_quantity", str(exc)) from None


def _float_below(limit: Fraction | int) -> float:
    """The largest float not above ``limit`` (``float(2**63 - 1)`` rounds up to 2**63)."""
    value = float(limit)
    return math.nextafter(value, 0.0) if value > limit else value


class _BoundedQuantity:
    """``Annotated`` marker of a quantity field: ``positive`` (> 0) or else >= 0; ``milli``: read in
    milli-units (CPU), so bounded by int64 milli-units."""

    __slots__ = ("what", "positive", "milli")

    def __init__(self, what: str, *, positive: bool = False, milli: bool = False) -> None:
        self.what, self.positive, self.milli = what, positive, milli

    def __validate__(self, raw: Any) -> Quantity:
        quantity = _quantity(raw)
        if quantity.value < 0 or (self.positive and quantity.value == 0):
            raise fail(
                "ts_range", f"{self.what} must be {'greater than' if self.positive else 'at least'} 0 (got {quantity})"
            )
        if self.milli and quantity.value * 1000 > MAX_CPU_MILLI:
            raise fail(
                "ts_range",
                f"{self.what} {quantity} is out of range: Kubernetes reads CPU in milli-cores "
                f"as an int64, so at most {MAX_CPU_MILLI}m",
            )
        return quantity

    def alternatives(self) -> list[dict[str, Any]]:
        """The JSON Schema forms a value takes: an integer, a number or a quantity string."""
        limit = Fraction(MAX_CPU_MILLI, 1000) if self.milli else MAX_QUANTITY
        low = "exclusiveMinimum" if self.positive else "minimum"
        return [
            {"type": "integer", low: 0, "maximum": int(limit)},
            {"type": "number", low: 0, "maximum": _float_below(limit)},
            {"type": "string", "pattern": _NONNEGATIVE_PATTERN},
        ]

    def __json_schema__(self) -> dict[str, Any]:
        example = "96 or 500m" if self.milli else "64Gi or 1600Gi"
        return {"anyOf": self.alternatives(), "description": f"A Kubernetes quantity such as {example}."}


# -- Names, labels, env names ------------------------------------------------------------------

# The name rules are checked without regular expressions (the ``is_*`` checks of kube_facts);
# other patterns are matched as text (``re.fullmatch(PATTERN, raw)``): ``re`` compiles one on its
# first use and caches it, so a run compiles only the patterns its specs need.


def _fail(error_type: str, message: str, hint: str | None) -> Invalid:
    """:func:`fail` with the hint of this one value (else the diagnostic code's general hint)."""
    exc = fail(error_type, message)
    if hint is not None and exc.ctx is not None:
        exc.ctx["hint"] = hint
    return exc


class _NameRule:
    """``Annotated`` marker of a name field: a string of at most ``max_len`` characters that ``check``
    accepts (``check`` accepts what ``pattern``, the JSON schema's, matches whole)."""

    __slots__ = ("error_type", "check", "what", "pattern", "max_len", "example", "hint")

    def __init__(
        self,
        error_type: str,
        check: Callable[[str], bool],
        what: str,
        pattern: str,
        max_len: int,
        example: str,
        hint: str | None = None,
    ) -> None:
        self.error_type, self.check, self.what = error_type, check, what
        self.pattern, self.max_len, self.example, self.hint = pattern, max_len, example, hint

    def __validate__(self, raw: Any) -> str:
        if not isinstance(raw, str):
            raise fail("string_type", "Input should be a valid string")
        if len(raw) > self.max_len:
            raise _fail(
                self.error_type,
                f"{raw!r} is {len(raw)} characters long; {self.what} allows at most {self.max_len}",
                self.hint,
            )
        if not self.check(raw):
            raise _fail(self.error_type, f"{raw!r} is not a valid {self.what} (example: {self.example})", self.hint)
        return raw

    def __json_schema__(self) -> dict[str, Any]:
        return {"type": "string", "pattern": self.pattern, "maxLength": self.max_len}


class _PlainStr(Record, eq=False):
    """Attach a validator function and a JSON schema to an annotation (``Annotated[str, _PlainStr(...)]``)."""

    validate: Any
    schema: dict[str, Any]

    def __validate__(self, raw: Any) -> Any:
        return self.validate(raw)

    def __json_schema__(self) -> dict[str, Any]:
        return dict(self.schema)


#: An RFC 1035 label: lower-case letters, digits and '-', starting with a letter, <= 63 chars.
Name = Annotated[
    str,
    _NameRule("ts_name", is_dns1035_label, "RFC 1035 name", DNS1035_LABEL_PATTERN, DNS1123_LABEL_MAX, "llama-sft"),
]
#: A namespace name (RFC 1123 label).
NamespaceName = Annotated[
    str,
    _NameRule("ts_name", is_dns1123_label, "namespace name", DNS1123_LABEL_PATTERN, DNS1123_LABEL_MAX, "team-nlp"),
]
#: A DNS-1123 subdomain, as used for Secret, PVC, LocalQueue and StorageClass names.
ObjectName = Annotated[
    str,
    _NameRule(
        "ts_name",
        is_dns1123_subdomain,
        "Kubernetes object name",
        DNS1123_SUBDOMAIN_PATTERN,
        DNS1123_SUBDOMAIN_MAX,
        "team-nlp",
    ),
]
#: An environment variable name (C identifier).
EnvName = Annotated[
    str,
    _NameRule("ts_env_name", is_env_name, "environment variable name", ENV_NAME_PATTERN, ENV_NAME_MAX, "HF_HOME"),
]


def _shown(raw: str, limit: int = 80) -> str:
    """``repr(raw)``, cut in the middle when long (a 254-character name need not be printed whole)."""
    return repr(raw) if len(raw) <= limit else f"{raw[: limit // 2]!r}...{raw[-limit // 4 :]!r}"


def is_qualified_key(key: str) -> bool:
    """A label/annotation key: optional DNS-1123 subdomain prefix and '/', then a name <= 63."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > DNS1123_SUBDOMAIN_MAX or not is_dns1123_subdomain(prefix)):
        return False
    return 0 < len(name) <= DNS1123_LABEL_MAX and is_qualified_name(name)


def _label_key(raw: Any) -> str:
    if not isinstance(raw, str) or not is_qualified_key(raw):
        raise fail("ts_label", f"{raw!r} is not a valid label or annotation key (example: example.com/team)")
    return raw


def _label_value(raw: Any) -> str:
    if not isinstance(raw, str):
        raise fail("string_type", "Input should be a valid string")
    if len(raw) > LABEL_VALUE_MAX or not is_label_value(raw):
        raise fail(
            "ts_label",
            f"{raw!r} is not a valid label value (<= {LABEL_VALUE_MAX} characters: letters, digits, '-', '_', '.')",
        )
    return raw


LabelKey = Annotated[str, _PlainStr(_label_key, {"type": "string", "maxLength": LABEL_KEY_MAX})]
LabelValue = Annotated[
    str, _PlainStr(_label_value, {"type": "string", "maxLength": LABEL_VALUE_MAX, "pattern": LABEL_VALUE_PATTERN})
]


# -- URIs --------------------------------------------------------------------------------------

_URI = r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.+)$"


class UriPolicy(Record):
    """Which URI schemes a field accepts, and whether an absolute path is allowed instead."""

    schemes: tuple[str, ...]
    allow_path: bool
    error: ClassVar[str] = "ts_uri"

    def __validate__(self, raw: Any) -> str:
        if not isinstance(raw, str):
            raise fail("string_type", "Input should be a valid string")
        allowed = ", ".join(f"{s}://" for s in self.schemes) + (", or an absolute path" if self.allow_path else "")
        m = re.fullmatch(_URI, raw)
        if m:
            scheme = m["scheme"].lower()
            if scheme not in self.schemes:
                raise fail(self.error, f"scheme {scheme}:// is not allowed here (allowed: {allowed})")
            if scheme == "pvc":
                claim = m["rest"].partition("/")[0]
                if len(claim) > DNS1123_SUBDOMAIN_MAX or not is_dns1123_subdomain(claim):
                    raise fail(
                        self.error,
                        f"{_shown(raw)}: expected pvc://<claim-name>/<path>, the claim's name a Kubernetes "
                        f"object name (lower-case, at most {DNS1123_SUBDOMAIN_MAX} characters)",
                    )
            return raw
        if self.allow_path and raw.startswith("/"):
            return raw
        raise fail(self.error, f"{raw!r} is not a URI this field accepts (allowed: {allowed})")

    def __json_schema__(self) -> dict[str, Any]:
        alternatives = "|".join(self.schemes)
        pattern = f"^(({alternatives})://.+" + ("|/.*" if self.allow_path else "") + ")$"
        return {"type": "string", "pattern": pattern}


#: Where a dataset can come from.
DataSourceUri = Annotated[str, UriPolicy(("s3", "gs", "hf", "pvc"), allow_path=True)]
#: Where checkpoints can go when they live in object storage.
ObjectStoreUri = Annotated[str, UriPolicy(("s3", "gs", "az", "abfs"), allow_path=False)]


def _absolute_path(raw: Any) -> str:
    if not isinstance(raw, str):
        raise fail("string_type", "Input should be a valid string")
    if not raw.startswith("/") or "\x00" in raw:
        raise fail("ts_value", f"{_shown(raw)} must be an absolute path such as /checkpoints")
    if len(raw.encode()) > PATH_MAX:
        raise fail("ts_value", f"the path is {len(raw.encode())} bytes long; a mount path is at most {PATH_MAX}")
    return raw.rstrip("/") or "/"


#: An absolute path in a pod (a mount path): at most PATH_MAX bytes.
AbsolutePath = Annotated[str, _PlainStr(_absolute_path, {"type": "string", "pattern": "^/", "maxLength": PATH_MAX})]


_HEX = frozenset("0123456789abcdef")
_IMAGE_HINT = (
    "write an image reference: [registry[:port]/]repository[:tag][@sha256:digest], the repository in lower case"
)


def _image(raw: Any) -> str:
    if not isinstance(raw, str):
        raise fail("string_type", "Input should be a valid string")
    if len(raw) > IMAGE_MAX:
        raise fail("ts_value", f"the image reference is {len(raw)} characters long; at most {IMAGE_MAX}")
    name = image_repository(raw)
    if name is None or (len(name) == 64 and _HEX.issuperset(name)):  # an image id is not a repository
        raise _fail(
            "ts_value",
            f"{_shown(raw)} is not a container image reference (example: nvcr.io/nvidia/pytorch:25.01-py3); "
            "the kubelet would refuse it (InvalidImageName)",
            _IMAGE_HINT,
        )
    if len(name) > IMAGE_NAME_MAX:
        raise _fail(
            "ts_value",
            f"the repository name of the image is {len(name)} characters long; at most {IMAGE_NAME_MAX}",
            _IMAGE_HINT,
        )
    return raw


Image = Annotated[
    str, _PlainStr(_image, {"type": "string", "minLength": 1, "maxLength": IMAGE_MAX, "pattern": r"^\S+$"})
]


#: A whole number given as a YAML integer (not a string, not a boolean, not 8.0).
Count = Annotated[int, STRICT]
#: true or false, nothing else (plain ``bool`` fields also take yes/no, 1/0 and their strings).
StrictBool = Annotated[bool, STRICT]


#: Resources of a pod (memory, ephemeral storage, GPUs and other devices): 0 <= amount <= 2^63-1.
ResourceQuantity = Annotated[Quantity, _BoundedQuantity("a resource amount")]
#: CPU cores: 0 <= cores and milli-cores <= 2^63-1 (CPU is read in milli-units).
CpuQuantity = Annotated[Quantity, _BoundedQuantity("cpu", milli=True)]
#: The size of a volume or of a device's memory: 0 < size <= 2^63-1 (the API server rejects 0 storage).
_SIZE = _BoundedQuantity("a size", positive=True)
VolumeSize = Annotated[Quantity, _SIZE]


def _auto_or_quantity(raw: Any) -> Literal["auto"] | Quantity:
    if raw == "auto":
        return "auto"
    try:
        return _SIZE.__validate__(raw)
    except Invalid as exc:
        if exc.type != "ts_quantity":
            raise
        raise fail("ts_quantity", f"{exc.msg}; or use auto to size from checkpoint.model") from None


#: ``auto`` or a quantity (checkpoint size).
AutoOrQuantity = Annotated[
    Literal["auto"] | Quantity,
    _PlainStr(_auto_or_quantity, {"anyOf": [{"const": "auto"}, *_SIZE.alternatives()]}),
]

#: What a quantity field takes in Python (the typed signatures of the constructors): a
#: :class:`Quantity`, or what ``Quantity.parse`` reads (``8``, ``0.5``, ``"64Gi"``, ``"500m"``).
QuantityInput = Quantity | int | float | str
#: What a duration field takes in Python: a :class:`Duration` or its text (``"72h"``).
DurationInput = Duration | str
#: What a parameter count takes in Python: a :class:`ParamCount`, its text (``"70B"``) or a count.
ParamCountInput = ParamCount | str | int
