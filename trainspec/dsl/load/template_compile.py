"""Checking and compiling one template before anything runs (the TS310 refusals).

A template may hold expressions, ``if`` and the allowed filters and string methods, nothing
else (:mod:`trainspec.dsl.load.templating` says why). The parsed tree is checked, each ``~``
is rewritten to the size-checked concat filter, and the ``values`` paths it reads are kept
for the diagnostics of :mod:`trainspec.dsl.load.template_render`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.load.templating import _ALLOWED_HINT, _CONCAT, _STR_METHODS, TemplateProblem, _environment

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
