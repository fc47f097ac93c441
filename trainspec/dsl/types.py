"""Value types that carry the spec's invariants: quantities, durations, names, parameter counts, URIs.

Each type parses once, keeps a canonical form, and fails with an :class:`~trainspec.dsl.modeling.Invalid`
whose ``type`` names the diagnostic it becomes (see :mod:`trainspec.dsl.validation`). The models
use them through the protocol of :mod:`trainspec.dsl.modeling`: ``__validate__(raw)`` parses a
field value, ``__json_schema__()`` describes it, and ``__json__()`` (value classes) dumps it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Annotated, Any, ClassVar, Literal, Union

from trainspec.dsl.modeling import STRICT, Invalid

# -- Kubernetes quantities ---------------------------------------------------------------------

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -3, "u": -2, "m": -1, "": 0, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_QUANTITY_RE = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
QUANTITY_PATTERN = (
    r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A Kubernetes resource quantity (``96``, ``1600Gi``, ``500m``), exact and canonical.

    ``value`` is the exact amount in base units (bytes, cores). ``str()`` gives the canonical
    form: binary suffixes stay binary (``1.5Gi`` -> ``1536Mi``), decimal ones use the largest
    SI suffix that keeps an integer (``0.5`` -> ``500m``, ``2000`` -> ``2k``).
    """

    value: Fraction
    binary: bool = False

    @classmethod
    def parse(cls, raw: Any) -> Quantity:
        if isinstance(raw, Quantity):
            return raw
        if isinstance(raw, bool):
            raise ValueError("a boolean is not a quantity")
        if isinstance(raw, int):
            return cls(Fraction(raw))
        if isinstance(raw, float):
            if raw != raw or raw in (float("inf"), float("-inf")):
                raise ValueError("not a finite number")
            return cls(Fraction(Decimal(repr(raw))))
        if not isinstance(raw, str):
            raise ValueError(f"expected a number or a string like 1600Gi, got {type(raw).__name__}")
        m = _QUANTITY_RE.match(raw.strip())
        if not m:
            raise ValueError(f"{raw!r} is not a Kubernetes quantity (examples: 96, 500m, 1600Gi)")
        try:
            num = Fraction(Decimal(m["num"]))
        except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
            raise ValueError(f"{raw!r} is not a number") from exc
        suffix = m["suffix"] or ""
        if suffix in _BINARY:
            return cls(num * 1024 ** _BINARY[suffix], binary=True)
        if suffix in _DECIMAL:  # before the exponent form: a lone "E" is exa, not e-notation
            return cls(num * Fraction(1000) ** _DECIMAL[suffix])
        return cls(num * Fraction(10) ** int(suffix[1:]))

    def __str__(self) -> str:
        v = self.value
        if v == 0:
            return "0"
        if self.binary and v.denominator == 1:
            for suffix, power in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
                unit = 1024**power
                if v % unit == 0:
                    return f"{v // unit}{suffix}"
            return str(v.numerator)
        for suffix, power in sorted(_DECIMAL.items(), key=lambda kv: -kv[1]):
            scaled = v / Fraction(1000) ** power
            if scaled.denominator == 1:
                return f"{scaled.numerator}{suffix}"
        # Finer than nano: Kubernetes rounds up to the smallest unit.
        scaled = -((-v * 10**9) // 1)
        return f"{scaled}n"

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def to_k8s(self) -> int | str:
        """The form to emit: a plain integer where the canonical form is one, else the string."""
        text = str(self)
        return int(text) if text.lstrip("-").isdigit() else text

    @property
    def is_integer(self) -> bool:
        return self.value.denominator == 1

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value

    @classmethod
    def __validate__(cls, raw: Any) -> Quantity:
        return _parse(cls.parse, raw, "ts_quantity")

    def __json__(self) -> int | str:
        return self.to_k8s()

    @staticmethod
    def __json_schema__() -> dict[str, Any]:
        return {
            "anyOf": [{"type": "integer"}, {"type": "number"}, {"type": "string", "pattern": QUANTITY_PATTERN}],
            "description": "A Kubernetes quantity such as 96, 500m or 1600Gi.",
        }


def fail(error_type: str, message: str) -> Invalid:
    """A validation error whose ``type`` selects the diagnostic code and whose text is ``message``."""
    return Invalid(error_type, message, {"reason": message})


def _parse(parse: Any, raw: Any, error_type: str) -> Any:
    """``parse(raw)``, its ValueError turned into the validation error ``error_type``."""
    try:
        return parse(raw)
    except ValueError as exc:
        raise fail(error_type, str(exc)) from None


# -- Durations ---------------------------------------------------------------------------------

_DURATION_RE = re.compile(r"^(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?$")
DURATION_PATTERN = r"^(\d+d)?(\d+h)?(\d+m)?(\d+s)?$"


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
        parts = {k: int(v) for k, v in m.groupdict(default="0").items()}
        seconds = parts["d"] * 86400 + parts["h"] * 3600 + parts["m"] * 60 + parts["s"]
        if seconds <= 0:
            raise ValueError("a duration must be longer than zero")
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


# -- Parameter counts --------------------------------------------------------------------------

_PARAMS_RE = re.compile(r"^(?P<num>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[KkMBbTt]?)$")
_PARAM_UNITS = {"": 1, "K": 10**3, "k": 10**3, "M": 10**6, "B": 10**9, "b": 10**9, "T": 10**12, "t": 10**12}
PARAMS_PATTERN = r"^[0-9]+(\.[0-9]+)?\s*[KkMBbTt]?$"


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
            return cls(raw, str(raw))
        if not isinstance(raw, str):
            raise ValueError(f"expected a count like 70B or 350M, got {raw!r}")
        m = _PARAMS_RE.match(raw.strip())
        if not m:
            raise ValueError(f"{raw!r} is not a parameter count (examples: 70B, 405B, 7.5B, 350M)")
        count = int(Fraction(Decimal(m["num"])) * _PARAM_UNITS[m["unit"]])
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

DNS1035_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
DNS1123_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS1123_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_DNS1035 = re.compile(DNS1035_PATTERN)
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
Name = _string_validator("ts_name", _DNS1035.match, "RFC 1035 name", DNS1035_PATTERN, 63, "llama-sft")
#: A namespace name (RFC 1123 label).
NamespaceName = _string_validator(
    "ts_name", _DNS1123_LABEL.match, "namespace name", DNS1123_LABEL_PATTERN, 63, "team-nlp"
)
#: A DNS-1123 subdomain, as used for Secret, PVC, LocalQueue and StorageClass names.
ObjectName = _string_validator(
    "ts_name", _DNS1123_SUBDOMAIN.match, "Kubernetes object name", DNS1123_SUBDOMAIN_PATTERN, 253, "team-nlp"
)
#: An environment variable name (C identifier).
EnvName = _string_validator("ts_env_name", _ENV_NAME.match, "environment variable name", ENV_NAME_PATTERN, 256, "WANDB_PROJECT")


def is_qualified_key(key: str) -> bool:
    """A label/annotation key: optional DNS-1123 subdomain prefix and '/', then a name <= 63."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def _label_key(raw: Any) -> str:
    if not isinstance(raw, str) or not is_qualified_key(raw):
        raise fail("ts_label", f"{raw!r} is not a valid label or annotation key (example: example.com/team)")
    return raw


def _label_value(raw: Any) -> str:
    if not isinstance(raw, str):
        raise fail("string_type", "Input should be a valid string")
    if len(raw) > 63 or not _LABEL_VALUE.match(raw):
        raise fail("ts_label", f"{raw!r} is not a valid label value (<= 63 characters: letters, digits, '-', '_', '.')")
    return raw


LabelKey = Annotated[str, _PlainStr(_label_key, {"type": "string", "maxLength": 317})]
LabelValue = Annotated[
    str, _PlainStr(_label_value, {"type": "string", "maxLength": 63, "pattern": _LABEL_VALUE.pattern})
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


def _auto_or_quantity(raw: Any) -> Union[Literal["auto"], Quantity]:
    if raw == "auto":
        return "auto"
    try:
        return Quantity.parse(raw)
    except ValueError as exc:
        raise fail("ts_quantity", f"{exc}; or use auto to size from checkpoint.model") from None


#: ``auto`` or a quantity (checkpoint size).
AutoOrQuantity = Annotated[
    Union[Literal["auto"], Quantity],
    _PlainStr(
        _auto_or_quantity,
        {"anyOf": [{"const": "auto"}, {"type": "integer"}, {"type": "string", "pattern": QUANTITY_PATTERN}]},
    ),
]
