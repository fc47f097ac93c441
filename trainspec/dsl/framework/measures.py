"""Value types of counts over time and size: :class:`Duration` (``72h``) and :class:`ParamCount` (``70B``).

Each parses once, keeps a canonical form, and fails with an :class:`~trainspec.dsl.errors.Invalid`
whose ``type`` names the diagnostic (``ts_duration``, ``ts_params``; ``ts_range`` beyond the
bounds). :mod:`trainspec.dsl.framework.types` re-exports them beside the other value types.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from trainspec.dsl.errors import Invalid, TrainspecError
from trainspec.dsl.kube_facts import INT32_MAX
from trainspec.dsl.record import Record

__all__ = [
    "DURATION_PATTERN",
    "Duration",
    "MAX_DURATION_SECONDS",
    "MAX_PARAMETERS",
    "PARAMS_PATTERN",
    "ParamCount",
    "RangeError",
    "fail",
]


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


class RangeError(ValueError, TrainspecError):
    """A value of the right form whose magnitude is out of range (TS203, not the form's code)."""


# -- Durations ---------------------------------------------------------------------------------

_DURATION_RE = re.compile(r"^(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?$")
DURATION_PATTERN = r"^(\d+d)?(\d+h)?(\d+m)?(\d+s)?$"
#: The longest duration: trainspec writes durations into int32 seconds fields, Kueue's
#: max-exec-time-seconds label (parsed as int32, silently ignored beyond) and coscheduling's
#: scheduleTimeoutSeconds; activeDeadlineSeconds (int64) takes it too.
MAX_DURATION_SECONDS = INT32_MAX
_MAX_DURATION_DIGITS = len(str(MAX_DURATION_SECONDS))


class Duration(Record):
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
        duration: Duration = _parse(cls.parse, raw, "ts_duration")
        return duration

    def __json__(self) -> str:
        return str(self)

    @staticmethod
    def __json_schema__() -> dict[str, Any]:
        return {"type": "string", "pattern": DURATION_PATTERN, "description": "A duration such as 72h, 90m or 1h30m."}


def _too_long(raw: str) -> str:
    shown = raw if len(raw) <= 40 else f"{raw[:40]}... ({len(raw)} characters)"
    return (
        f"{shown!r} is out of range: a duration is at most {MAX_DURATION_SECONDS} seconds (about 68 years), "
        "the int32 that Kueue's max-exec-time-seconds label and the seconds fields it goes to hold"
    )


# -- Parameter counts --------------------------------------------------------------------------

# Compiled on first use (re caches it): start-up does not pay for a pattern few specs need.
_PARAMS_RE = r"^(?P<num>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[KkMBbTt]?)$"
_PARAM_UNITS = {"": 1, "K": 10**3, "k": 10**3, "M": 10**6, "B": 10**9, "b": 10**9, "T": 10**12, "t": 10**12}
PARAMS_PATTERN = r"^[0-9]+(\.[0-9]+)?\s*[KkMBbTt]?$"
#: The largest parameter count (100T). With at most 4 bytes of weights and 64 bytes of optimizer
#: state per parameter, keep <= 1000 and 20% headroom, an auto-sized checkpoint volume stays
#: below 2^63-1 bytes, the most a quantity holds.
MAX_PARAMETERS = 10**14
_PARAM_DIGITS = len(str(MAX_PARAMETERS))


class ParamCount(Record):
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
        m = re.match(_PARAMS_RE, raw.strip())
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
        count: ParamCount = _parse(cls.parse, raw, "ts_params")
        return count

    def __json__(self) -> str:
        return str(self)

    @staticmethod
    def __json_schema__() -> dict[str, Any]:
        return {
            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": PARAMS_PATTERN}],
            "description": "Parameter count such as 70B, 405B, 7.5B or 350M.",
        }
