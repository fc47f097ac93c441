"""The errors of the validation layer (:mod:`trainspec.dsl.framework.modeling`).

An error is a dict ``{type, loc, msg, input[, ctx]}``. ``type`` is one of :data:`ERROR_KINDS`:
every kind the layer can produce, each of which :mod:`trainspec.dsl.load.validation` maps to exactly
one diagnostic code (a test keeps the two in step).

:class:`TrainspecError` is the root of every exception the library raises to its callers
(``trainspec.TrainspecError``): ``except trainspec.TrainspecError`` catches them all.
"""

from __future__ import annotations

from typing import Any

#: Every error kind the layer produces (fieldchecks, types, models) and what it means.
ERROR_KINDS = {
    "unknown_field": "a key the model does not have (ctx: suggestion, when one is close)",
    "required": "a required field is missing",
    "model_type": "a nested model given something other than a mapping",
    "frozen_instance": "an attribute assigned on a frozen model",
    "string_type": "not a string",
    "int_type": "not a whole number",
    "float_type": "not a number",
    "float_parsing": "a string that is not a number",
    "bool_type": "not a boolean",
    "bool_parsing": "a string or number that is not a boolean",
    "list_type": "not a list",
    "dict_type": "not a mapping",
    "enum": "not one of an enum's values",
    "literal_error": "not the literal value",
    "greater_than_equal": "below ge",
    "less_than_equal": "above le",
    "string_too_short": "shorter than min_length",
    "string_too_long": "longer than max_length",
    "string_pattern_mismatch": "a string that does not match the field's pattern",
    "too_short": "fewer items than min_length",
    "too_long": "more items than max_length",
    "ts_value": "a rule over the value",
    "ts_range": "out of the range Kubernetes holds",
    "ts_quantity": "not a quantity",
    "ts_duration": "not a duration",
    "ts_name": "not a valid name",
    "ts_uri": "a URI this field does not take",
    "ts_credential": "a credential written into a value (a URI's user part)",
    "ts_checkpoint_forms": "checkpoint forms",
    "ts_checkpoint_auto": "size: auto without a model",
    "ts_params": "not a parameter count",
    "ts_label": "not a label key or value",
    "ts_env_name": "not an environment variable name",
    "ts_shard_mode": "data.mode: index with an assignment other than contiguous",
}


class TrainspecError(Exception):
    """The root of every exception trainspec raises to its callers.

    Each keeps its other bases too (a :class:`ValidationError` is still a ``ValueError``, a
    ``WaitTimeout`` a ``TimeoutError``), so callers that catch those keep working.
    """


class Invalid(ValueError, TrainspecError):
    """One failed check: ``type`` names the error (and so the diagnostic code), ``msg`` says it."""

    def __init__(self, type: str, msg: str, ctx: dict[str, Any] | None = None) -> None:
        super().__init__(msg)
        self.type, self.msg, self.ctx = type, msg, ctx

    def error(self, loc: tuple[Any, ...], value: Any) -> dict[str, Any]:
        return error_dict(self.type, loc, self.msg, value, self.ctx)

    def __reduce__(self) -> Any:
        return type(self), (self.type, self.msg, self.ctx)


def error_dict(
    kind: str, loc: tuple[Any, ...], msg: str, value: Any, ctx: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One entry of :meth:`ValidationError.errors`."""
    err = {"type": kind, "loc": loc, "msg": msg, "input": value}
    if ctx is not None:
        err["ctx"] = ctx
    return err


def short_repr(value: Any, limit: int = 100) -> str:
    """``repr(value)`` cut to ``limit`` characters; an int too long to print is described instead
    (printing one of more than 4300 digits raises, and takes quadratic time before that)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        return f"<an integer of {value.bit_length()} bits>"
    shown = repr(value)
    return shown if len(shown) <= limit else f"{shown[: limit // 2 - 2]}...{shown[-(limit // 2 - 2) :]}"


def suggest(name: object, candidates: list[str]) -> str | None:
    """The candidate closest to a misspelled ``name`` (the did-you-mean of YAML and Python), if any."""
    if not isinstance(name, str):
        return None
    import difflib  # only on the error path: validating a correct spec never needs it

    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return close[0] if close else None


class ValidationError(ValueError, TrainspecError):
    """Every problem found in one input: ``errors()`` lists them as ``{type, loc, msg, input[, ctx]}``.

    ``str(error)`` shows one line per problem: the field path, what is wrong and the value given.
    """

    def __init__(self, title: str, errors: list[dict[str, Any]]) -> None:
        self.title = title
        self._errors = errors
        lines = [f"{len(errors)} validation error{'s' if len(errors) != 1 else ''} for {title}"]
        for err in errors:
            where = ".".join(map(str, err["loc"]))
            lines.append(f"  {where + ': ' if where else ''}{err['msg']} (got {short_repr(err['input'])})")
        super().__init__("\n".join(lines))

    def __reduce__(self) -> Any:
        return type(self), (self.title, self._errors)

    def errors(self) -> list[dict[str, Any]]:
        """A copy of every problem, in the order found."""
        return [dict(err) for err in self._errors]

    def error_count(self) -> int:
        return len(self._errors)
