"""Per-environment values: ``{{ values.registry }}`` inside string scalars.

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
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related, format_path
from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.load.strict_yaml import SourceDoc

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

    def __init__(self, code: str, message: str, hint: str) -> None:
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


# -- what a template may contain ---------------------------------------------------------------------

_ALLOWED_NODES = frozenset(
    {
        "Template",
        "Output",
        "TemplateData",
        "Const",
        "Name",
        "Getattr",
        "Getitem",
        "Slice",
        "Concat",
        "CondExpr",
        "If",
        "Compare",
        "Operand",
        "And",
        "Or",
        "Not",
        "Neg",
        "Pos",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "FloorDiv",
        "Mod",
        "Pow",
        "Test",
        "Filter",
        "List",
        "Tuple",
        "Dict",
        "Pair",
        "Keyword",
        "Call",
    }
)
_REFUSED_WHAT = {
    "For": "{% for %} loops",
    "Call": "function and method calls",
    "Macro": "macros",
    "CallBlock": "{% call %} blocks",
    "Assign": "{% set %}",
    "AssignBlock": "{% set %}",
    "FilterBlock": "{% filter %} blocks",
    "With": "{% with %}",
    "Include": "{% include %}",
    "Import": "{% import %}",
    "FromImport": "{% from %} imports",
    "Extends": "{% extends %}",
    "Block": "{% block %}",
}


def _check_tree(tree: Any, env: Any) -> None:
    """Refuse (TS310) anything but expressions, ``if`` and the allowed filters, before compiling."""
    for node in _nodes(tree):
        name = type(node).__name__
        if name not in _ALLOWED_NODES:
            what = _REFUSED_WHAT.get(name, f"the construct {name}")
            raise TemplateProblem(
                codes.TEMPLATE_CONSTRUCT,
                f"{what} are not allowed in templates" if what.endswith("s") else f"{what} is not allowed in templates",
                _ALLOWED_HINT,
            )
        if name == "Call" and not (
            type(node.node).__name__ == "Getattr"
            and node.node.attr in _STR_METHODS
            and node.dyn_args is None
            and node.dyn_kwargs is None
        ):
            raise TemplateProblem(
                codes.TEMPLATE_CONSTRUCT,
                "function and method calls are not allowed in templates (except the "
                "string methods split, strip, lower, upper, ...)",
                _ALLOWED_HINT,
            )
        if name == "Filter" and node.name not in env.filters:
            raise TemplateProblem(
                codes.TEMPLATE_CONSTRUCT, f"the filter {node.name!r} is not allowed in templates", _ALLOWED_HINT
            )
        if name == "Test" and node.name not in env.tests:
            raise TemplateProblem(codes.TEMPLATE_UNDEFINED, f"unknown test {node.name!r}", _ALLOWED_HINT)


def _nodes(node: Any) -> Any:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.iter_child_nodes())


def _rewrite_concat(tree: Any) -> None:
    """Turn each ``a ~ b`` into the size-checking concat filter (Jinja2 joins without a hook)."""
    from jinja2 import nodes

    for node in list(_nodes(tree)):
        for field in node.fields:
            value = getattr(node, field, None)
            if isinstance(value, nodes.Concat):
                setattr(node, field, _concat_filter(value, nodes))
            elif isinstance(value, list):
                setattr(node, field, [_concat_filter(v, nodes) if isinstance(v, nodes.Concat) else v for v in value])


def _concat_filter(concat: Any, nodes: Any) -> Any:
    items = nodes.List(
        [_concat_filter(n, nodes) if isinstance(n, nodes.Concat) else n for n in concat.nodes], lineno=concat.lineno
    )
    return nodes.Filter(items, _CONCAT, [], [], None, None, lineno=concat.lineno)


def _value_paths(tree: Any) -> list[tuple]:
    """The ``values.a.b`` / ``values['a']`` paths a template reads, longest first."""
    from jinja2 import nodes

    paths = []
    for node in _nodes(tree):
        path: list[Any] = []
        current = node
        while True:
            if isinstance(current, nodes.Getattr):
                path.append(current.attr)
            elif isinstance(current, nodes.Getitem) and isinstance(current.arg, nodes.Const):
                path.append(current.arg.value)
            else:
                break
            current = current.node
        if path and isinstance(current, nodes.Name) and current.name == "values":
            paths.append(tuple(reversed(path)))
    return sorted(set(paths), key=lambda p: (-len(p), p))


@lru_cache(maxsize=512)
def _compiled(text: str) -> tuple[Any, tuple[tuple, ...]]:
    """The checked, compiled template for ``text`` and the values paths it reads (cached: the same
    template often appears in many documents)."""
    env = _environment()
    tree = env.parse(text)
    _check_tree(tree, env)
    paths = tuple(_value_paths(tree))
    _rewrite_concat(tree)
    tree.set_environment(env)
    return env.from_string(tree), paths


# -- rendering documents -----------------------------------------------------------------------------


def render_document(doc: SourceDoc, values: dict[str, Any], *, failed: list[str] | None = None) -> list[Diagnostic]:
    """Render every templated string of ``doc`` in place; return located errors.

    ``failed``, when given, receives the field path of every value left unrendered (its
    template failed, or the document's cap was reached before it).
    """
    problems: list[Diagnostic] = []
    state = _State(doc, values, problems, failed if failed is not None else [])
    _walk(state, doc.data, ())
    return problems


class _State:
    """One document's rendering: where problems go and how much has been rendered."""

    def __init__(self, doc: SourceDoc, values: dict[str, Any], problems: list[Diagnostic], failed: list[str]) -> None:
        self.doc, self.values, self.problems, self.failed = doc, values, problems, failed
        self.rendered = 0
        self.full = False

    def report(self, path: tuple, code: str, message: str, hint: str, related: tuple[Related, ...] = ()) -> None:
        self.failed.append(format_path(path))
        self.problems.append(
            Diagnostic.located(code, message, self.doc.file, self.doc.mark(path), path, hint=hint, related=related)
        )


def _walk(state: _State, node: Any, path: tuple) -> None:
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in list(items):
        here = (*path, key)
        if isinstance(child, str):
            if has_template(child):
                if state.full:
                    state.failed.append(format_path(here))
                    continue
                node[key] = _render(state, here, child)
        elif isinstance(child, (dict, list)):
            _walk(state, child, here)


def _render(state: _State, path: tuple, text: str) -> str:
    from jinja2 import TemplateError, UndefinedError

    paths: tuple[tuple, ...] = ()
    try:
        template, paths = _compiled(text)
        out = _bounded_output(template.generate(values=state.values), text)
    except TemplateProblem as exc:
        state.report(path, exc.code, f"template {shown(text)}: {exc.message}", exc.hint)
    except _Unusable as exc:
        _unusable(state, path, text, exc.value, paths)
    except UndefinedError as exc:
        state.report(
            path,
            codes.TEMPLATE_UNDEFINED,
            f"template {shown(text)}: {exc.message}",
            "define it in the values file given with --values",
        )
    except TemplateError as exc:
        state.report(path, codes.TEMPLATE_UNDEFINED, f"template {shown(text)}: {exc}", _ALLOWED_HINT)
    except Exception as exc:  # anything a template can raise (ZeroDivisionError, TypeError...) is the user's
        detail = str(exc)[:200]
        state.report(
            path,
            codes.TEMPLATE_UNDEFINED,
            f"template {shown(text)}: {type(exc).__name__}: {detail}",
            "fix the expression; it is evaluated with the values given with --values",
        )
    else:
        state.rendered += len(out)
        if state.rendered <= MAX_RENDERED_DOCUMENT:
            return out
        state.full = True
        state.report(
            path,
            codes.TEMPLATE_CAP,
            f"the document's templates render more than {MAX_RENDERED_DOCUMENT} characters",
            "a spec needs far less; check the values and templates for something repeated",
        )
    return text


def _bounded_output(chunks: Any, text: str) -> str:
    out: list[str] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > MAX_RENDERED_VALUE:
            raise TemplateProblem(
                codes.TEMPLATE_CAP,
                f"renders more than {MAX_RENDERED_VALUE} characters",
                "a value needs no more than a few hundred characters; check the values file",
            )
        out.append(chunk)
    return "".join(out)


def _unusable(state: _State, path: tuple, text: str, value: Any, paths: tuple[tuple, ...]) -> None:
    what = "null" if value is None else "a mapping" if isinstance(value, dict) else "a list"
    culprits = [p for p in paths if _describe(_lookup(state.values, p)) == what]
    origins = getattr(state.values, "origins", {}) or {}
    related = tuple(
        Related(f"values.{_dotted(p)} is {what} here", origin[0], origin[1].line, origin[1].column)
        for p in culprits
        if (origin := origins.get(p)) is not None
    )
    if culprits:
        name = f"values.{_dotted(culprits[0])}"
        message = f"template {shown(text)}: {name} is {what}, which cannot be written into the text"
    else:
        message, name = f"template {shown(text)}: renders {what}, which cannot be written into the text", "the value"
    if value is None:
        hint = (
            f"give {name} a value in the values file, or fall back with {{{{ {name} | default('...', true) }}}}"
            " (a null is reported where a template uses it, so a values file may leave unused keys empty)"
        )
    else:
        hint = f"use one entry of it ({name}.<key>), or join a list with {{{{ {name} | join(',') }}}}"
    state.report(path, codes.TEMPLATE_NOT_TEXT, message, hint, related)


_MISSING = object()


def _lookup(values: Any, path: tuple) -> Any:
    node = values
    for part in path:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node)
        ):
            node = node[part]
        else:
            return _MISSING
    return node


def _describe(value: Any) -> str:
    return (
        "null"
        if value is None
        else "a mapping"
        if isinstance(value, dict)
        else "a list"
        if isinstance(value, (list, tuple))
        else "scalar"
    )


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)
