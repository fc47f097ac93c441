"""Validator functions for the field types of :mod:`trainspec.dsl.framework.modeling`.

A validator is ``check(value, loc, errors) -> value``: it returns the validated value, or appends
error dicts to ``errors`` and returns ``REJECTED``. Scalar checks are plain functions
``value -> value`` that raise :class:`~trainspec.dsl.framework.modeling.Invalid`; ``_collect`` adapts them.
The error types and messages are the ones :mod:`trainspec.dsl.load.validation` turns into diagnostics.
"""

from __future__ import annotations

import enum
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from trainspec.dsl.errors import Invalid, error_dict
from trainspec.dsl.framework.fields import REJECTED, STRICT, Errors, FieldInfo, Loc, Validator


def validator_for(
    annotation: Any, info: FieldInfo | None = None, strict: bool = False, optional: bool = False
) -> Validator:
    """The validator of one annotation; ``info`` carries the field's constraints (leaf types only)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        plain = next((m for m in annotation.__metadata__ if hasattr(m, "__validate__")), None)
        if plain is not None:
            return _collect(_constrained(plain.__validate__, info), optional)
        inner = validator_for(args[0], info, strict or STRICT in annotation.__metadata__, optional)
        rules = [m for m in annotation.__metadata__ if hasattr(m, "__after__")]
        return _after(inner, rules) if rules else inner
    if origin is typing.Union or origin is types.UnionType:
        rest = [a for a in args if a is not type(None)]
        nullable = len(rest) < len(args)
        if len(rest) == 2 and sum(_is_model(a) for a in rest) == 1:
            return _scalar_or_model(rest, info, strict, nullable or optional)
        if len(rest) != 1 or len(args) != 2:
            raise TypeError(f"unsupported union {annotation!r}: use Optional[X], X | Model or a value type")
        return validator_for(rest[0], info, strict, optional=True)
    if origin is list:
        return _none_or(_list(validator_for(args[0]), info), optional)
    if origin is dict:
        return _none_or(_dict(validator_for(args[0]), validator_for(args[1]), info), optional)
    if origin is typing.Literal:
        return _collect(_constrained(_literal(args), info), optional)
    if isinstance(annotation, type):
        if _is_model(annotation):
            _unconstrained(info, annotation.__name__)
            return _none_or(validator_of_model(annotation), optional)
        if issubclass(annotation, enum.Enum):
            return _collect(_constrained(_enum(annotation), info), optional)
        if hasattr(annotation, "__validate__"):
            return _collect(_constrained(annotation.__validate__, info), optional)
        scalar = _SCALARS.get((annotation, strict))
        if scalar is not None:
            return _collect(_constrained(scalar, info), optional)
    raise TypeError(f"unsupported field type {annotation!r}")


def _is_model(annotation: Any) -> bool:
    # A model class (trainspec.dsl.framework.modeling.Model) is known by the constructor its validator
    # calls, not by issubclass: the models build their validators with this module, so it
    # cannot import them.
    return isinstance(annotation, type) and callable(getattr(annotation, "_from_mapping", None))


def _scalar_or_model(alternatives: list[Any], info: FieldInfo | None, strict: bool, optional: bool) -> Validator:
    """``X | Model`` (``nodes: 8`` or ``nodes: {min: 4, max: 8}``): a mapping or an instance is the
    model (its errors keep their nested locations), anything else the scalar with the field's bounds."""
    model = next(a for a in alternatives if _is_model(a))
    scalar = validator_for(next(a for a in alternatives if a is not model), info, strict, optional)
    structured = validator_of_model(model)

    def run(value: Any, loc: Loc, errors: Errors) -> Any:
        if isinstance(value, (Mapping, model)):
            return structured(value, loc, errors)
        return scalar(value, loc, errors)

    return run


def _collect(check: Callable[[Any], Any], optional: bool) -> Validator:
    """A validator from a scalar check; with ``optional``, None passes."""

    def run(value: Any, loc: Loc, errors: Errors) -> Any:
        if value is None and optional:
            return None
        try:
            return check(value)
        except Invalid as exc:
            errors.append(exc.error(loc, value))
            return REJECTED

    return run


class After:
    """``Annotated`` rule over a whole valid value (a mapping), run once its entries are valid:
    ``check(value)`` yields ``(sub-location, Invalid)`` for each problem, located at the entry it
    names (``(key,)``) or at the whole value (``()``). :func:`validator_for` runs it after the
    value's own validator (``Annotated[dict[K, V], After(check)]``)."""

    __slots__ = ("check",)

    def __init__(self, check: Callable[[Any], Iterator[tuple[tuple[Any, ...], Invalid]]]) -> None:
        self.check = check

    def __after__(self, value: Any) -> Iterator[tuple[tuple[Any, ...], Invalid]]:
        return self.check(value)


def _after(inner: Validator, rules: list[Any]) -> Validator:
    """``inner``, then rules over the whole valid value (``Annotated[dict[K, V], rule]``): a rule's
    ``__after__(value)`` yields ``(sub-location, Invalid)`` pairs, so a rule over a key and its
    value together (an extended resource takes whole amounts) points at that entry, and a rule
    over the whole mapping (the annotations' total size) at the mapping."""

    def run(value: Any, loc: Loc, errors: Errors) -> Any:
        valid = inner(value, loc, errors)
        if valid is REJECTED or valid is None:
            return valid
        start = len(errors)
        for rule in rules:
            for sub, exc in rule.__after__(valid):
                given = valid[sub[0]] if sub and isinstance(valid, Mapping) and sub[0] in valid else value
                errors.append(exc.error((*loc, *sub), given))
        return valid if len(errors) == start else REJECTED

    return run


def _none_or(validator: Validator, optional: bool) -> Validator:
    if not optional:
        return validator
    return lambda value, loc, errors: None if value is None else validator(value, loc, errors)


def _unconstrained(info: FieldInfo | None, what: str) -> None:
    if info is not None and (info.ge, info.le, info.min_length, info.max_length, info.pattern) != (None,) * 5:
        raise TypeError(f"field {info.name!r}: a {what} takes no ge, le, min_length, max_length or pattern")


def _constrained(check: Any, info: FieldInfo | None) -> Any:
    """``check``, then the field's constraints: ge and le (numbers), min_length, max_length, pattern (str)."""
    if check not in (_str, _int, _float, _float_strict):
        _unconstrained(info, "value of this type")
        return check
    if info is None or (info.ge, info.le, info.min_length, info.max_length, info.pattern) == (None,) * 5:
        return check
    ge, le, lo, hi, pattern = info.ge, info.le, info.min_length, info.max_length, info.pattern
    as_float = check in (_float, _float_strict)
    regex = None
    if pattern is not None:
        # As in JSON Schema, a final "$" is the end of the text (Python's also matches before a final newline).
        regex = re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern)

    def constrained(value: Any) -> Any:
        value = check(value)
        if le is not None and not value <= le:
            raise Invalid(
                "less_than_equal", f"Input should be less than or equal to {le}", {"le": float(le) if as_float else le}
            )
        if ge is not None and not value >= ge:
            raise Invalid(
                "greater_than_equal",
                f"Input should be greater than or equal to {ge}",
                {"ge": float(ge) if as_float else ge},
            )
        if lo is not None and len(value) < lo:
            raise Invalid(
                "string_too_short", f"String should have at least {lo} character{'s' * (lo != 1)}", {"min_length": lo}
            )
        if hi is not None and len(value) > hi:
            raise Invalid(
                "string_too_long", f"String should have at most {hi} character{'s' * (hi != 1)}", {"max_length": hi}
            )
        if regex is not None and not regex.search(value):
            raise Invalid("string_pattern_mismatch", f"String should match pattern '{pattern}'", {"pattern": pattern})
        return value

    return constrained


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise Invalid("string_type", "Input should be a valid string")


def _int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise Invalid("int_type", "Input should be a valid integer")


def _float_strict(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise Invalid("float_type", "Input should be a valid number")


def _float(value: Any) -> float:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise Invalid(
                "float_parsing", "Input should be a valid number, unable to parse string as a number"
            ) from None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            pass
    raise Invalid("float_type", "Input should be a valid number")


#: The words a lax bool field takes (any case).
_BOOL_WORDS = {
    **dict.fromkeys(("0", "off", "f", "false", "n", "no"), False),
    **dict.fromkeys(("1", "on", "t", "true", "y", "yes"), True),
}


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = _BOOL_WORDS.get(value.lower())
        if word is not None:
            return word
    elif isinstance(value, int):
        if value in (0, 1):
            return value == 1
    elif isinstance(value, float) and value in (0.0, 1.0):
        return value == 1.0
    else:
        raise Invalid("bool_type", "Input should be a valid boolean")
    raise Invalid("bool_parsing", "Input should be a valid boolean, unable to interpret input")


def _bool_strict(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise Invalid("bool_type", "Input should be a valid boolean")


_SCALARS = {
    (str, False): _str,
    (str, True): _str,
    (int, False): _int,
    (int, True): _int,
    (float, False): _float,
    (float, True): _float_strict,
    (bool, False): _bool,
    (bool, True): _bool_strict,
}


def _expected(values: Iterable[Any]) -> str:
    shown = [repr(v) for v in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def _literal(allowed: tuple[Any, ...]) -> Callable[[Any], Any]:
    expected = _expected(allowed)

    def check(value: Any) -> Any:
        for option in allowed:
            if value == option and type(value) is type(option):
                return option
        raise Invalid("literal_error", f"Input should be {expected}", {"expected": expected})

    return check


def _enum(cls: type[enum.Enum]) -> Callable[[Any], Any]:
    by_value = {member.value: member for member in cls}
    expected = _expected(by_value)

    def check(value: Any) -> Any:
        if isinstance(value, cls):
            return value
        try:
            return by_value[value]
        except (KeyError, TypeError):
            raise Invalid(
                "enum", f"Input should be {expected}", {"expected": expected, "choices": [str(v) for v in by_value]}
            ) from None

    return check


def _sized(kind: str, info: FieldInfo | None) -> Callable[[int, Loc, Errors, Any], bool]:
    """The min_length/max_length check of a list or dict field (errors ``too_short`` / ``too_long``)."""
    lo, hi = (info.min_length, info.max_length) if info is not None else (None, None)
    if info is not None and (info.ge, info.le, info.pattern) != (None, None, None):
        raise TypeError(f"field {info.name!r}: only min_length and max_length apply to a {kind.lower()}")

    def ok(size: int, loc: Loc, errors: Errors, value: Any) -> bool:
        if lo is not None and size < lo:
            error, bound, key = "too_short", lo, "min_length"
        elif hi is not None and size > hi:
            error, bound, key = "too_long", hi, "max_length"
        else:
            return True
        limit = "at least" if error == "too_short" else "at most"
        message = f"{kind} should have {limit} {bound} item{'s' * (bound != 1)} after validation, not {size}"
        errors.append(error_dict(error, loc, message, value, {"field_type": kind, key: bound, "actual_length": size}))
        return False

    return ok


def _list(item: Validator, info: FieldInfo | None) -> Validator:
    sized = _sized("List", info)

    def check(value: Any, loc: Loc, errors: Errors) -> Any:
        if (
            type(value) is not list
            and not isinstance(value, (tuple, set, frozenset))
            and (isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable))
        ):
            errors.append(error_dict("list_type", loc, "Input should be a valid list", value))
            return REJECTED
        start = len(errors)
        out = [item(element, (*loc, index), errors) for index, element in enumerate(value)]
        return out if len(errors) == start and sized(len(out), loc, errors, value) else REJECTED

    return check


def _dict(key: Validator, item: Validator, info: FieldInfo | None) -> Validator:
    sized = _sized("Dictionary", info)

    def check(value: Any, loc: Loc, errors: Errors) -> Any:
        if type(value) is not dict and not isinstance(value, Mapping):
            errors.append(error_dict("dict_type", loc, "Input should be a valid dictionary", value))
            return REJECTED
        start = len(errors)
        out = {}
        for raw_key, raw_value in value.items():
            valid_key = key(raw_key, (*loc, raw_key, "[key]"), errors)
            out[valid_key] = item(raw_value, (*loc, raw_key), errors)
        return out if len(errors) == start and sized(len(out), loc, errors, value) else REJECTED

    return check


def validator_of_model(cls: type[Any]) -> Validator:
    """Takes an instance of the model class ``cls`` as it is and validates a mapping into one
    (with ``cls._from_mapping``)."""
    message = f"Input should be a valid dictionary or instance of {cls.__name__}"

    def check(value: Any, loc: Loc, errors: Errors) -> Any:
        if type(value) is dict:
            return cls._from_mapping(value, loc, errors)
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls._from_mapping(value, loc, errors)
        errors.append(error_dict("model_type", loc, message, value, {"class_name": cls.__name__}))
        return REJECTED

    return check
