"""A small well-formedness check for the PromQL trainspec writes into dashboards.

Not a PromQL parser: it tokenises an expression and checks what a typo breaks first, the way
Prometheus' lexer and parser would report it: balanced ``()``, ``{}`` and ``[]``; closed string
literals; every ``{...}`` a comma-separated list of ``label op "value"`` matchers (op one of
``=``, ``!=``, ``=~``, ``!~``) with valid label names; every ``[...]`` a duration or a Grafana
variable (``$__rate_interval``); no empty expression. It returns the problems found (empty when
the expression is well formed), so a test can assert both directions.
"""

from __future__ import annotations

import re

_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MATCHER_OP = re.compile(r"=~|!~|!=|=")
_DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$|^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$")
_PAIRS = {"(": ")", "{": "}", "[": "]"}


def _string_end(expr: str, start: int) -> int:
    """Index after the string literal starting at ``start``, or -1 if it is not closed."""
    quote = expr[start]
    i = start + 1
    while i < len(expr):
        if expr[i] == "\\":
            i += 2
            continue
        if expr[i] == quote:
            return i + 1
        i += 1
    return -1


def _matchers(body: str) -> list[str]:
    """Problems of the inside of one ``{...}``."""
    problems: list[str] = []
    rest = body.strip()
    while rest:
        name = _LABEL_NAME.match(rest)
        if name is None:
            return [*problems, f"expected a label name in {{{body}}}, got {rest[:20]!r}"]
        rest = rest[name.end() :].lstrip()
        op = _MATCHER_OP.match(rest)
        if op is None:
            return [*problems, f"expected =, !=, =~ or !~ after label {name.group()!r}"]
        rest = rest[op.end() :].lstrip()
        if not rest or rest[0] not in "\"'`":
            return [*problems, f"expected a quoted value for label {name.group()!r}"]
        end = _string_end(rest, 0)
        if end < 0:
            return [*problems, f"unclosed string for label {name.group()!r}"]
        rest = rest[end:].lstrip()
        if rest.startswith(","):
            rest = rest[1:].lstrip()
        elif rest:
            return [*problems, f"expected ',' or '}}' after label {name.group()!r}, got {rest[:20]!r}"]
    return problems


def problems(expr: str) -> list[str]:
    """What is wrong with ``expr`` as PromQL (balanced brackets, strings, matchers, ranges); [] if nothing."""
    if not expr.strip():
        return ["empty expression"]
    found: list[str] = []
    stack: list[tuple[str, int]] = []
    i = 0
    while i < len(expr):
        char = expr[i]
        if char in "\"'`":
            end = _string_end(expr, i)
            if end < 0:
                return [*found, f"unclosed string at offset {i}"]
            i = end
            continue
        if char in _PAIRS:
            stack.append((char, i))
        elif char in _PAIRS.values():
            if not stack or _PAIRS[stack[-1][0]] != char:
                return [*found, f"unexpected {char!r} at offset {i}"]
            opener, start = stack.pop()
            inner = expr[start + 1 : i]
            if opener == "{":
                found.extend(_matchers(inner))
            elif opener == "[" and not _DURATION.match(inner.strip()):
                found.append(f"range [{inner}] is not a duration such as 5m")
        i += 1
    if stack:
        found.append(f"unclosed {stack[-1][0]!r} at offset {stack[-1][1]}")
    return found
