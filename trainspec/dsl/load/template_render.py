"""Rendering the templates of a loaded document in place, one located diagnostic per failure.

Each templated string scalar is rendered with the values given with ``--values``; a value that
fails keeps its text and is reported at its line and column: a refusal or cap (TS310/TS309),
an undefined name or any exception (TS307), or a null, mapping or list where text is produced
(TS311, pointing at the values file entry). The document's total output is capped too.
"""

from __future__ import annotations

from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Related, format_path
from trainspec.dsl.load.strict_yaml import SourceDoc
from trainspec.dsl.load.template_compile import _compiled
from trainspec.dsl.load.templating import (
    _ALLOWED_HINT,
    MAX_RENDERED_DOCUMENT,
    MAX_RENDERED_VALUE,
    TemplateProblem,
    _Unusable,
    has_template,
    shown,
)

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

    def report(self, path: tuple, code: Code, message: str, hint: str, related: tuple[Related, ...] = ()) -> None:
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
        if _reread(state, path, text, paths):
            return text
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


def _reread(state: _State, path: tuple, text: str, paths: tuple[tuple, ...]) -> bool:
    """TS109 when the template reads a values entry YAML took for a bool or number written
    otherwise (``1.10`` is 1.1, ``017`` is 15, ``on`` is True): the text would change unseen."""
    plain = getattr(state.values, "plain", None)
    if not plain:
        return False
    for p in paths:
        written = plain.get(p)
        value = _lookup(state.values, p)
        if written is None or not isinstance(value, (bool, int, float)) or written == str(value):
            continue
        name = f"values.{_dotted(p)}"
        kind = "boolean" if isinstance(value, bool) else "number"
        origin = (getattr(state.values, "origins", {}) or {}).get(p)
        related = (
            () if origin is None else (Related(f"{name} is written here", origin[0], origin[1].line, origin[1].column),)
        )
        state.report(
            path,
            codes.YAML11_IMPLICIT,
            f"template {shown(text)}: {name} is written {written} in the values file, which YAML reads as the "
            f"{kind} {value!r}: the template would write {str(value)!r}",
            f"quote it in the values file ({p[-1]}: '{written}') to keep the text as written",
            related,
        )
        return True
    return False


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
