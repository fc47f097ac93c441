"""Per-environment values: ``{{ values.registry }}`` inside string scalars.

Templates are rendered after parsing, value by value, so they never change the YAML structure
and every diagnostic keeps its exact line and column. The Jinja2 environment is sandboxed and
strict: an undefined name is an error, not an empty string. Jinja2 is imported only when a
document actually contains a template.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic, format_path
from trainspec.dsl.yaml_loader import SourceDoc

_MARKERS = ("{{", "{%", "{#")


def has_template(text: str) -> bool:
    return any(m in text for m in _MARKERS)


@lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    return ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


def render_document(doc: SourceDoc, values: dict[str, Any]) -> list[Diagnostic]:
    """Render every templated string of ``doc`` in place; return located errors."""
    problems: list[Diagnostic] = []
    _walk(doc, doc.data, (), values, problems)
    return problems


def _walk(doc: SourceDoc, node: Any, path: tuple, values: dict[str, Any], problems: list[Diagnostic]) -> None:
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in list(items):
        here = (*path, key)
        if isinstance(child, str):
            if has_template(child):
                node[key] = _render(doc, here, child, values, problems)
        elif isinstance(child, (dict, list)):
            _walk(doc, child, here, values, problems)


def _render(doc: SourceDoc, path: tuple, text: str, values: dict[str, Any], problems: list[Diagnostic]) -> str:
    from jinja2 import TemplateError, UndefinedError

    try:
        return _environment().from_string(text).render(values=values)
    except UndefinedError as exc:
        message, hint = f"template {text!r}: {exc.message}", "define it in the values file given with --values"
    except TemplateError as exc:
        message, hint = f"template {text!r}: {exc}", "templates may only use {{ values.<name> }} expressions"
    mark = doc.mark(path)
    problems.append(Diagnostic(code="TS307", message=message, file=doc.file, line=mark.line, column=mark.column,
                               path=format_path(path), hint=hint))
    return text
