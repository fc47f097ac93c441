"""Per-environment values (``{{ values.registry }}`` inside string scalars): the template language's sandbox.

Templates are rendered after parsing, value by value, so they never change the YAML structure
and every diagnostic keeps its exact line and column. The Jinja2 environment is sandboxed and
strict: an undefined name is an error, not an empty string. Jinja2 is imported only when a
document actually contains a template.

A template is a small expression language here, not a program, and its work is bounded by
construction (issue 10): loops, calls, ``{% set %}``, macros, includes and most filters are
refused before anything runs (TS310; a few string methods such as ``split`` and ``strip`` may
be called), so the work is proportional to the template's length;
the operators and filters that can build something large (``*``, ``**``, ``+``, ``~``,
``replace``, ``join``) check the size of the result *before* building it, and each rendered
value and each document are capped (:data:`MAX_RENDERED_VALUE`, :data:`MAX_RENDERED_DOCUMENT`;
TS309). Every exception raised while rendering is a TS307 at the value, never a crash. A null,
a mapping or a list where text is produced (``registry: null`` in a values file, rendered as
``None/...``) is TS311, reported where a template uses it (a values file may keep keys that
some environments leave empty).

This module holds the limits, the errors and the sandboxed Jinja2 environment with its
size-checked operators and filters. :mod:`trainspec.dsl.load.template_compile` checks and
compiles one template; :mod:`trainspec.dsl.load.template_render` renders the templates of a
loaded document and reports what fails.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.errors import TrainspecError

#: Characters one templated value may render to.
MAX_RENDERED_VALUE = 64 * 1024
#: Characters all templated values of one document may render to together.
MAX_RENDERED_DOCUMENT = 1 << 20
#: Bits an integer built by an operator may have (``10 ** 10 ** 10`` would take minutes).
MAX_INT_BITS = 4096
#: Longest piece of a template quoted back in a message.
_SHOWN = 60

_MARKERS = ("{{", "{%", "{#")
#: Internal filter the ``~`` operator is rewritten to, so that it checks sizes too.
_CONCAT = "_trainspec_concat"
#: Jinja2's own filters that are safe as they are (their result is no larger than their input).
_PLAIN_FILTERS = ("default", "d", "length", "count", "first", "last", "abs", "round")
#: Jinja2 filters that are safe but would turn a null into the text "None" or "none".
_TEXT_FILTERS = ("lower", "upper", "title", "capitalize", "trim")
#: String methods a template may call: each result is no larger than the string itself.
_STR_METHODS = frozenset(
    {
        "split",
        "rsplit",
        "strip",
        "lstrip",
        "rstrip",
        "lower",
        "upper",
        "title",
        "capitalize",
        "startswith",
        "endswith",
        "removeprefix",
        "removesuffix",
    }
)
_ALLOWED_HINT = (
    "templates may use {{ values.<name> }}, ~, arithmetic, comparisons, if/else, the string methods "
    "split, strip, lower, upper, startswith, endswith, removeprefix, removesuffix, and the filters "
    "default, lower, upper, title, capitalize, trim, replace, join, string, int, float, length, "
    "first, last, abs, round"
)


class TemplateProblem(TrainspecError):
    """A located refusal while rendering: ``code`` (TS309/TS310/TS307), message and hint."""

    def __init__(self, code: Code, message: str, hint: str) -> None:
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


class _Unusable(Exception):
    """A null, mapping or list reached the text (TS311)."""

    def __init__(self, value: Any) -> None:
        super().__init__(type(value).__name__)
        self.value = value


def has_template(text: str) -> bool:
    return any(m in text for m in _MARKERS)


def shown(text: str) -> str:
    """``text`` quoted for a message, shortened when long (a message never repeats a megabyte)."""
    return repr(text) if len(text) <= _SHOWN else f"{text[:_SHOWN]!r}... ({len(text)} characters)"


# -- bounded operations -----------------------------------------------------------------------------


def _too_big(what: str, size: int) -> TemplateProblem:
    return TemplateProblem(
        codes.TEMPLATE_CAP,
        f"{what} would be {size} long, over the cap of {MAX_RENDERED_VALUE}",
        "a value needs no more than a few hundred characters; simplify the template",
    )


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse an operation whose result would be too large, before Python builds it."""
    sequences = (str, bytes, list, tuple)
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, sequences) and isinstance(times, int):
                if len(seq) * max(times, 0) > MAX_RENDERED_VALUE:
                    raise _too_big("a repetition (*)", len(seq) * times)
                return
        if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise TemplateProblem(
                codes.TEMPLATE_CAP, f"a product of more than {MAX_INT_BITS} bits", "use smaller numbers"
            )
    elif operator == "**":
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and right > 0
            and abs(left) > 1
            and (right > MAX_INT_BITS or (left.bit_length() - 1) * right > MAX_INT_BITS)
        ):
            raise TemplateProblem(
                codes.TEMPLATE_CAP, f"a power of more than {MAX_INT_BITS} bits", "use smaller numbers"
            )
    elif operator == "+":
        if isinstance(left, sequences) and isinstance(right, sequences) and len(left) + len(right) > MAX_RENDERED_VALUE:
            raise _too_big("a sum (+)", len(left) + len(right))
    elif operator == "%" and isinstance(left, (str, bytes)):
        raise TemplateProblem(
            codes.TEMPLATE_CONSTRUCT,
            "string formatting with % is not allowed in templates",
            "join strings with ~ instead: {{ values.a ~ '-' ~ values.b }}",
        )


def _text(value: Any) -> str:
    """``str(value)`` for a scalar; a null, mapping or list is TS311."""
    if value is None or isinstance(value, (dict, list, tuple, set)):
        raise _Unusable(value)
    return str(value)


def _joined(parts: Any, separator: str, what: str) -> str:
    out: list[str] = []
    size = 0
    for part in parts:
        text = _text(part)
        size += len(text) + (len(separator) if out else 0)
        if size > MAX_RENDERED_VALUE:
            raise _too_big(what, size)
        out.append(text)
    return separator.join(out)


def _concat(parts: list[Any]) -> str:
    return _joined(parts, "", "a concatenation (~)")


def _join(value: Any, d: Any = "", attribute: Any = None) -> str:
    if attribute is not None:
        raise TemplateProblem(
            codes.TEMPLATE_CONSTRUCT, "join(attribute=...) is not allowed in templates", _ALLOWED_HINT
        )
    if value is None or isinstance(value, dict):
        raise _Unusable(value)
    return _joined(value, _text(d), "a join")


def _replace(value: Any, old: Any, new: Any, count: Any = None) -> str:
    text, old, new = _text(value), _text(old), _text(new)
    times = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    size = len(text) + times * (len(new) - len(old))
    if size > MAX_RENDERED_VALUE:
        raise _too_big("a replace", size)
    return text.replace(old, new, count if isinstance(count, int) else -1)


def _number(convert: Callable[..., Any], name: str) -> Callable[..., Any]:
    """Jinja2's ``int``/``float`` filters, but a value that is no number is an error, not 0."""
    failed = object()

    def strict(value: Any, *args: Any, **kwargs: Any) -> Any:
        if value is None or isinstance(value, (dict, list, tuple)):
            raise _Unusable(value)
        kwargs.pop("default", None)
        result = convert(value, failed, *args[1:], **kwargs)  # args[0] would be the default: replaced
        if result is failed:
            raise TemplateProblem(
                codes.TEMPLATE_UNDEFINED,
                f"{shown(str(value))} is not a number ({name} filter)",
                "give the value a number in the values file",
            )
        return result

    return strict


def _scalar_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def guarded(value: Any, *args: Any, **kwargs: Any) -> Any:
        _text(value)
        return fn(value, *args, **kwargs)

    return guarded


def _finalize(value: Any, undefined: type) -> Any:
    """Every ``{{ }}`` result passes here before it becomes text."""
    if isinstance(value, undefined):
        return value  # rendering it raises the "undefined" error (StrictUndefined)
    if value is None or isinstance(value, (dict, list, tuple, set)):
        raise _Unusable(value)
    if callable(value) and not isinstance(value, str):
        raise TemplateProblem(
            codes.TEMPLATE_CONSTRUCT,
            "a template renders a function or method, not a value (for a key named "
            "like a method, write values['items'] rather than values.items)",
            _ALLOWED_HINT,
        )
    return value


@lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2 import StrictUndefined, Undefined
    from jinja2.filters import FILTERS
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class BoundedEnvironment(ImmutableSandboxedEnvironment):
        """The sandbox, with every arithmetic operator checked for the size of its result."""

        intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

        def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
            # Only the string methods allowed by _check_tree; this checks what is really called.
            if not (isinstance(getattr(obj, "__self__", None), str) and getattr(obj, "__name__", "") in _STR_METHODS):
                raise TemplateProblem(
                    codes.TEMPLATE_CONSTRUCT, "only a few string methods may be called in templates", _ALLOWED_HINT
                )
            return super().call(context, obj, *args, **kwargs)

    env = BoundedEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        optimized=False,
        finalize=lambda value: _finalize(value, Undefined),
    )
    env.globals.clear()  # no range, lipsum, dict, cycler, joiner, namespace
    env.filters = {name: FILTERS[name] for name in _PLAIN_FILTERS}
    env.filters.update({name: _scalar_only(FILTERS[name]) for name in _TEXT_FILTERS})
    env.filters.update(
        string=_text,
        join=_join,
        replace=_replace,
        int=_number(FILTERS["int"], "int"),
        float=_number(FILTERS["float"], "float"),
    )
    env.filters[_CONCAT] = _concat
    return env
