"""Value types that carry the spec's invariants: quantities, durations, names, parameter counts, URIs.

Each type parses once, keeps a canonical form, and fails with an :class:`~trainspec.dsl.modeling.Invalid`
whose ``type`` names the diagnostic it becomes (see :mod:`trainspec.dsl.validation`). The models
use them through the protocol of :mod:`trainspec.dsl.modeling`: ``__validate__(raw)`` parses a
field value, ``__json_schema__()`` describes it, and ``__json__()`` (value classes) dumps it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated, Any, ClassVar, Literal, Union

from trainspec.dsl.modeling import STRICT, Invalid
from trainspec.dsl.quantity import MAX_QUANTITY, QUANTITY_PATTERN, Quantity, QuantityError
from trainspec.dsl.wellknown import (
    DNS1035_LABEL_PATTERN, DNS1123_LABEL_MAX, DNS1123_LABEL_PATTERN, DNS1123_SUBDOMAIN_MAX,
    DNS1123_SUBDOMAIN_PATTERN, ENV_NAME_MAX, ENV_NAME_PATTERN, INT32_MAX, LABEL_KEY_MAX, LABEL_VALUE_MAX,
    LABEL_VALUE_PATTERN, MAX_CPU_MILLI, QUALIFIED_NAME_PATTERN,
)

__all__ = [
    "AbsolutePath", "AutoOrQuantity", "Count", "CpuQuantity", "DataSourceUri", "Duration", "EnvName", "Image",
    "LabelKey", "LabelValue", "MAX_PARAMETERS", "Name", "NamespaceName", "ObjectName", "ObjectStoreUri",
    "ParamCount", "QUANTITY_PATTERN", "Quantity", "RangeError", "ResourceQuantity", "StrictBool", "UriPolicy",
    "VolumeSize", "fail", "is_qualified_key",
]

# -- Kubernetes quantities (parsed and formatted by :mod:`trainspec.dsl.quantity`) -------------

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


def _bounded_quantity(what: str, *, positive: bool = False, milli: bool = False) -> Any:
    """A quantity field type: ``positive`` (> 0) or else >= 0; ``milli``: read in milli-units (CPU)."""

    def validate(raw: Any) -> Quantity:
        quantity = _quantity(raw)
        if quantity.value < 0 or (positive and quantity.value == 0):
            raise fail("ts_range", f"{what} must be {'greater than' if positive else 'at least'} 0 (got {quantity})")
        if milli and quantity.value * 1000 > MAX_CPU_MILLI:
            raise fail("ts_range", f"{what} {quantity} is out of range: Kubernetes reads CPU in milli-cores as an "
                                   f"int64, so at most {MAX_CPU_MILLI}m")
        return quantity

    limit = Fraction(MAX_CPU_MILLI, 1000) if milli else MAX_QUANTITY
    schema = {
        "anyOf": [
            {"type": "integer", ("exclusiveMinimum" if positive else "minimum"): 0, "maximum": int(limit)},
            {"type": "number", ("exclusiveMinimum" if positive else "minimum"): 0, "maximum": _float_below(limit)},
            {"type": "string", "pattern": _NONNEGATIVE_PATTERN},
        ],
        "description": f"A Kubernetes quantity such as {'96 or 500m' if milli else '64Gi or 1600Gi'}.",
    }
    return Annotated[Quantity, _PlainStr(validate, schema)]


def fail(error_type: str, message: str) -> Invalid:
    """A validation error whose ``type`` selects the diagnostic code and whose text is ``message``."""
    return Invalid(error_type, message, {"reason": message})


def _parse(parse: Any, raw: Any, error_type: str) -> Any:
    """``parse(raw)``, its ValueError turned into the validation error ``error_type``.

    A :class:`RangeError` (a well-formed value too large to be useful) is ``ts_range`` (TS203).
    """
    try:
        return parse(raw)
    except RangeError as exc:
        raise fail("ts_range", str(exc)) from None
    except ValueError as exc:
        raise fail(error_type, str(exc)) from None


class RangeError(ValueError):
    """A value of the right form whose magnitude is out of range (TS203, not the form's code)."""


# -- Durations ---------------------------------------------------------------------------------

_DURATION_RE = re.compile(r"^(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?$")
DURATION_PATTERN = r"^(\d+d)?(\d+h)?(\d+m)?(\d+s)?$"
#: The longest duration: trainspec writes durations into int32 seconds fields, Kueue's
#: max-exec-time-seconds label (parsed as int32, silently ignored beyond) and coscheduling's
#: scheduleTimeoutSeconds; activeDeadlineSeconds (int64) takes it too.
MAX_DURATION_SECONDS = INT32_MAX
_MAX_DURATION_DIGITS = len(str(MAX_DURATION_SECONDS))


@dataclass(frozen=True, slots=True)
class Duration:
    """A positive duration written as ``72h``, ``90m``, ``1h30m``, ``2d`` or ``45s``."""

    seconds: int

    @classmethod
    def parse(cls, raw: Any) -> Duration:
        if isinstance(raw, Duration):
            return raw
        if isinstance(raw, bool) or not isinstance(raw, str):
            raise ValueError(
                f"expected a duration string like 72h or 90m, got {raw!r}"
                + (" (a bare number has no unit)" if isinstance(raw, (int, float)) else "")
            )
        m = _DURATION_RE.match(raw.strip())
        if not raw.strip() or not m:
            raise ValueError(f"{raw!r} is not a duration (examples: 72h, 90m, 1h30m, 2d)")
        groups = {k: v.lstrip("0") or "0" for k, v in m.groupdict(default="0").items()}
        # Count digits before converting: a megabyte of digits is out of range, not a big integer.
        if any(len(v) > _MAX_DURATION_DIGITS for v in groups.values()):
            raise RangeError(_too_long(raw))
        parts = {k: int(v) for k, v in groups.items()}
        seconds = parts["d"] * 86400 + parts["h"] * 3600 + parts["m"] * 60 + parts["s"]
        if seconds <= 0:
            raise ValueError("a duration must be longer than zero")
        if seconds > MAX_DURATION_SECONDS:
            raise RangeError(_too_long(raw))
        return cls(seconds)

    def __str__(self) -> str:
        rest = self.seconds
        out = ""
        for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
            count, rest = divmod(rest, size)
            if count:
                out += f"{count}{unit}"
        return out

    @property
    def hours(self) -> Fraction:
        return Fraction(self.seconds, 3600)

    @classmethod
    def __validate__(cls, raw: Any) -> Duration:
        return _parse(cls.parse, raw, "ts_duration")

    def __json__(self) -> str:
        return str(self)

    @staticmethod
    def __json_schema__() -> dict[str, Any]:
        return {"type": "string", "pattern": DURATION_PATTERN, "description": "A duration such as 72h, 90m or 1h30m."}


def _too_long(raw: str) -> str:
    shown = raw if len(raw) <= 40 else f"{raw[:40]}... ({len(raw)} characters)"
    return (f"{shown!r} is out of range: a duration is at most {MAX_DURATION_SECONDS} seconds (about 68 years), "
            "the int32 that Kueue's max-exec-time-seconds label and the seconds fields it goes to hold")


# -- Parameter counts --------------------------------------------------------------------------

_PARAMS_RE = re.compile(r"^(?P<num>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[KkMBbTt]?)$")
_PARAM_UNITS = {"": 1, "K": 10**3, "k": 10**3, "M": 10**6, "B": 10**9, "b": 10**9, "T": 10**12, "t": 10**12}
PARAMS_PATTERN = r"^[0-9]+(\.[0-9]+)?\s*[KkMBbTt]?$"
#: The largest parameter count (100T). With at most 4 bytes of weights and 64 bytes of optimizer
#: state per parameter, keep <= 1000 and 20% headroom, an auto-sized checkpoint volume stays
#: below 2^63-1 bytes, the most a quantity holds.
MAX_PARAMETERS = 10**14
_PARAM_DIGITS = len(str(MAX_PARAMETERS))


@dataclass(frozen=True, slots=True)
class ParamCount:
    """A model's parameter count: ``70B``, ``405B``, ``7.5B``, ``350M`` or a plain integer."""

    count: int
    text: str

    @classmethod
    def parse(cls, raw: Any) -> ParamCount:
        if isinstance(raw, ParamCount):
            return raw
        if isinstance(raw, bool):
            raise ValueError("a boolean is not a parameter count")
        if isinstance(raw, int):
            if raw <= 0:
                raise ValueError("a parameter count must be positive")
            if raw > MAX_PARAMETERS:
                raise RangeError(f"a parameter count is at most {MAX_PARAMETERS} (100T)")
            return cls(raw, str(raw))
        if not isinstance(raw, str):
            raise ValueError(f"expected a count like 70B or 350M, got {raw!r}")
        m = _PARAMS_RE.match(raw.strip())
        if not m:
            raise ValueError(f"{raw!r} is not a parameter count (examples: 70B, 405B, 7.5B, 350M)")
        whole, _, decimals = m["num"].partition(".")
        if len(whole.lstrip("0")) > _PARAM_DIGITS:  # counted before converting: linear in the text
            raise RangeError(f"a parameter count is at most {MAX_PARAMETERS} (100T)")
        unit = _PARAM_UNITS[m["unit"]]
        # Decimals finer than the unit cannot change the whole count (it is rounded down).
        decimals = decimals[: len(str(unit)) - 1]
        count = int(Fraction(int(whole + decimals), 10 ** len(decimals)) * unit)
        if count > MAX_PARAMETERS:
            raise RangeError(f"a parameter count is at most {MAX_PARAMETERS} (100T)")
        if count <= 0:
            raise ValueError("a parameter count must be positive")
        return cls(count, raw.strip())

    def __str__(self) -> str:
        return self.text

    @classmethod
    def __validate__(cls, raw: Any) -> ParamCount:
        return _parse(cls.parse, raw, "ts_params")

    def __json__(self) -> str:
        return str(self)

    @staticmethod
    def __json_schema__() -> dict[str, Any]:
        return {
            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": PARAMS_PATTERN}],
            "description": "Parameter count such as 70B, 405B, 7.5B or 350M.",
        }


# -- Names, labels, env names ------------------------------------------------------------------

_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_PATTERN)
_LABEL_VALUE = re.compile(LABEL_VALUE_PATTERN)
_DNS1035 = re.compile(DNS1035_LABEL_PATTERN)
_DNS1123_LABEL = re.compile(DNS1123_LABEL_PATTERN)
_DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_PATTERN)
_ENV_NAME = re.compile(ENV_NAME_PATTERN)


def _string_validator(
    error_type: str, check: Any, what: str, pattern: str, max_len: int, example: str
) -> Any:
    def validate(raw: Any) -> str:
        if not isinstance(raw, str):
            raise fail("string_type", "Input should be a valid string")
        if len(raw) > max_len:
            raise fail(error_type, f"{raw!r} is {len(raw)} characters long; {what} allows at most {max_len}")
        if not check(raw):
            raise fail(error_type, f"{raw!r} is not a valid {what} (example: {example})")
        return raw

    schema = {"type": "string", "pattern": pattern, "maxLength": max_len}
    return Annotated[
        str,
        _PlainStr(validate, schema),
    ]


@dataclass(frozen=True, eq=False)
class _PlainStr:
    """Attach a validator function and a JSON schema to an annotation (``Annotated[str, _PlainStr(...)]``)."""

    validate: Any
    schema: dict

    def __validate__(self, raw: Any) -> Any:
        return self.validate(raw)

    def __json_schema__(self) -> dict[str, Any]:
        return dict(self.schema)


#: An RFC 1035 label: lower-case letters, digits and '-', starting with a letter, <= 63 chars.
Name = _string_validator(
    "ts_name", _DNS1035.match, "RFC 1035 name", DNS1035_LABEL_PATTERN, DNS1123_LABEL_MAX, "llama-sft"
)
#: A namespace name (RFC 1123 label).
NamespaceName = _string_validator(
    "ts_name", _DNS1123_LABEL.match, "namespace name", DNS1123_LABEL_PATTERN, DNS1123_LABEL_MAX, "team-nlp"
)
#: A DNS-1123 subdomain, as used for Secret, PVC, LocalQueue and StorageClass names.
ObjectName = _string_validator(
    "ts_name", _DNS1123_SUBDOMAIN.match, "Kubernetes object name", DNS1123_SUBDOMAIN_PATTERN, DNS1123_SUBDOMAIN_MAX,
    "team-nlp",
)
#: An environment variable name (C identifier).
EnvName = _string_validator(
    "ts_env_name", _ENV_NAME.match, "environment variable name", ENV_NAME_PATTERN, ENV_NAME_MAX, "WANDB_PROJECT"
)


def is_qualified_key(key: str) -> bool:
    """A label/annotation key: optional DNS-1123 subdomain prefix and '/', then a name <= 63."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > DNS1123_SUBDOMAIN_MAX or not _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= DNS1123_LABEL_MAX and bool(_QUALIFIED_NAME.match(name))


def _label_key(raw: Any) -> str:
    if not isinstance(raw, str) or not is_qualified_key(raw):
        raise fail("ts_label", f"{raw!r} is not a valid label or annotation key (example: example.com/team)")
    return raw


def _label_value(raw: Any) -> str:
    if not isinstance(raw, str):
        raise fail("string_type", "Input should be a valid string")
    if len(raw) > LABEL_VALUE_MAX or not _LABEL_VALUE.match(raw):
        raise fail("ts_label", f"{raw!r} is not a valid label value "
                               f"(<= {LABEL_VALUE_MAX} characters: letters, digits, '-', '_', '.')")
    return raw


LabelKey = Annotated[str, _PlainStr(_label_key, {"type": "string", "maxLength": LABEL_KEY_MAX})]
LabelValue = Annotated[
    str, _PlainStr(_label_value, {"type": "string", "maxLength": LABEL_VALUE_MAX, "pattern": LABEL_VALUE_PATTERN})
]


# -- URIs --------------------------------------------------------------------------------------

_URI_RE = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.+)$")


@dataclass(frozen=True, slots=True)
class UriPolicy:
    """Which URI schemes a field accepts, and whether an absolute path is allowed instead."""

    schemes: tuple[str, ...]
    allow_path: bool
    error: ClassVar[str] = "ts_uri"

    def __validate__(self, raw: Any) -> str:
        if not isinstance(raw, str):
            raise fail("string_type", "Input should be a valid string")
        allowed = ", ".join(f"{s}://" for s in self.schemes) + (", or an absolute path" if self.allow_path else "")
        m = _URI_RE.match(raw)
        if m:
            scheme = m["scheme"].lower()
            if scheme not in self.schemes:
                raise fail(self.error, f"scheme {scheme}:// is not allowed here (allowed: {allowed})")
            if scheme == "pvc" and not re.match(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/.*)?$", m["rest"]):
                raise fail(self.error, f"{raw!r}: expected pvc://<claim-name>/<path>")
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
        raise fail("ts_value", f"{raw!r} must be an absolute path such as /checkpoints")
    return raw.rstrip("/") or "/"


AbsolutePath = Annotated[str, _PlainStr(_absolute_path, {"type": "string", "pattern": "^/"})]


_WHITESPACE = re.compile(r"\s")  # the characters str.isspace() accepts


def _image(raw: Any) -> str:
    if not isinstance(raw, str):
        raise fail("string_type", "Input should be a valid string")
    if not raw or len(raw) > 500 or _WHITESPACE.search(raw):
        raise fail("ts_value", f"{raw!r} is not a container image reference (example: nvcr.io/nvidia/pytorch:25.01-py3)")
    return raw


Image = Annotated[str, _PlainStr(_image, {"type": "string", "minLength": 1, "maxLength": 500, "pattern": r"^\S+$"})]


#: A whole number given as a YAML integer (not a string, not a boolean, not 8.0).
Count = Annotated[int, STRICT]
#: true or false, nothing else (plain ``bool`` fields also take yes/no, 1/0 and their strings).
StrictBool = Annotated[bool, STRICT]


#: Resources of a pod (memory, ephemeral storage, GPUs and other devices): 0 <= amount <= 2^63-1.
ResourceQuantity = _bounded_quantity("a resource amount")
#: CPU cores: 0 <= cores and milli-cores <= 2^63-1 (CPU is read in milli-units).
CpuQuantity = _bounded_quantity("cpu", milli=True)
#: The size of a volume or of a device's memory: 0 < size <= 2^63-1 (the API server rejects 0 storage).
VolumeSize = _bounded_quantity("a size", positive=True)
_validate_size = VolumeSize.__metadata__[0].validate


def _auto_or_quantity(raw: Any) -> Union[Literal["auto"], Quantity]:
    if raw == "auto":
        return "auto"
    try:
        return _validate_size(raw)
    except Invalid as exc:
        if exc.type != "ts_quantity":
            raise
        raise fail("ts_quantity", f"{exc.msg}; or use auto to size from checkpoint.model") from None


#: ``auto`` or a quantity (checkpoint size).
AutoOrQuantity = Annotated[
    Union[Literal["auto"], Quantity],
    _PlainStr(
        _auto_or_quantity,
        {"anyOf": [{"const": "auto"}, *VolumeSize.__metadata__[0].schema["anyOf"]]},
    ),
]
