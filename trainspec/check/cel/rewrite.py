"""Source rewrites that let cel-expr-python run the Kubernetes calls its bindings cannot declare.

The bindings hand no optional value across the Python boundary and refuse new overloads of
the standard ``string()``. So, on the token stream of a rule (string literals and comments are
left alone):

* ``format.named(X)`` -> ``(__k8s_format_known(X) ? optional.of(__k8s_format(X)) : optional.none())``
* ``format.dns1123Label()`` (any named format) -> ``__k8s_format('dns1123Label')``
* ``R.validate(X)`` -> ``optional.ofNonZeroValue(__k8s_format_errors(R, X))``
* ``string(X)`` -> ``__k8s_string(X)`` in rules that use ``ip``/``cidr`` (IP and CIDR to text)

The results mean what the Kubernetes format and IP libraries define.
"""

from __future__ import annotations

import re

from trainspec.check.cel.k8s_library import FORMATS

_TOKEN = re.compile(
    r"""(?P<space>\s+|//[^\n]*)
      | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
                    |'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
      | (?P<number>\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?[uU]?|0[xX][0-9a-fA-F]+[uU]?)
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<punct>\.\?|\|\||&&|==|!=|<=|>=|.)""",
    re.VERBOSE | re.DOTALL,
)
_CLOSE = {")": "(", "]": "[", "}": "{"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "punct"
        out.append((kind, match.group()))
    return out


def _next(tokens: list[tuple[str, str]], i: int, step: int = 1) -> int | None:
    i += step
    while 0 <= i < len(tokens) and tokens[i][0] == "space":
        i += step
    return i if 0 <= i < len(tokens) else None


def _matching_close(tokens: list[tuple[str, str]], i: int) -> int:
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j][0] == "punct" and tokens[j][1] in "([{":
            depth += 1
        elif tokens[j][0] == "punct" and tokens[j][1] in ")]}":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced")


def _matching_open(tokens: list[tuple[str, str]], i: int) -> int:
    depth = 0
    for j in range(i, -1, -1):
        if tokens[j][0] == "punct" and tokens[j][1] in ")]}":
            depth += 1
        elif tokens[j][0] == "punct" and tokens[j][1] in "([{":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced")


def _chain_start(tokens: list[tuple[str, str]], j: int) -> int:
    """Where the postfix chain (``a.b(c)[d].e``) that ends at token ``j`` starts."""
    while True:
        kind, text = tokens[j]
        if kind == "punct" and text in _CLOSE:
            opener = _matching_open(tokens, j)
            before = _next(tokens, opener, -1)
            prior = tokens[before] if before is not None else ("", "")
            if before is not None and text == ")" and prior[0] == "ident":
                j = before  # a call: the name is part of the chain
            elif (
                before is not None and text == "]" and (prior[0] in ("ident", "string", "number") or prior[1] in _CLOSE)
            ):
                j = before  # an index: continue with what is indexed
                continue
            else:
                j = opener
        elif kind not in ("ident", "string", "number"):
            raise ValueError("no receiver")
        before = _next(tokens, j, -1)
        if before is not None and tokens[before][1] in (".", ".?"):
            ahead = _next(tokens, before, -1)
            if ahead is None:
                raise ValueError("no receiver")
            j = ahead
            continue
        return j


def _text(tokens: list[tuple[str, str]]) -> str:
    return "".join(t for _, t in tokens)


def rewrite_format_calls(rule: str) -> str:
    """``rule`` with the format-library and IP/CIDR ``string()`` calls rewritten (see module doc);
    unchanged when it has none or cannot be tokenised."""
    try:
        tokens = _tokens(rule)
        if _text(tokens) != rule:
            return rule
        tokens = _rewrite_validate(_rewrite_format(tokens))
        if any(t == ("ident", "ip") or t == ("ident", "cidr") for t in tokens):
            tokens = _rewrite_string(tokens)
    except ValueError:
        return rule  # the engine's own parser then reports what is wrong
    return _text(tokens)


def _is_global(tokens: list[tuple[str, str]], i: int) -> bool:
    before = _next(tokens, i, -1)
    return before is None or tokens[before][1] not in (".", ".?")


def _rewrite_format(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    i = 0
    while i < len(tokens):
        dot, name = _next(tokens, i), None
        if tokens[i] == ("ident", "format") and _is_global(tokens, i) and dot is not None and tokens[dot][1] == ".":
            name = _next(tokens, dot)
        paren = _next(tokens, name) if name is not None else None
        if name is None or paren is None or tokens[paren][1] != "(":
            i += 1
            continue
        close = _matching_close(tokens, paren)
        member = tokens[name][1]
        if member == "named":
            arg = _text(tokens[paren + 1 : close])
            text = f"(__k8s_format_known({arg}) ? optional.of(__k8s_format({arg})) : optional.none())"
        elif member in FORMATS and _next(tokens, paren) == close:
            text = f"__k8s_format('{member}')"
        else:
            i += 1
            continue
        tokens[i : close + 1] = [("ident", text)]
        i += 1
    return tokens


def _rewrite_validate(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    i = len(tokens) - 1
    while i >= 0:
        name, paren = _next(tokens, i), None
        if tokens[i][1] == "." and name is not None and tokens[name] == ("ident", "validate"):
            paren = _next(tokens, name)
        if paren is None or tokens[paren][1] != "(":
            i -= 1
            continue
        end = _next(tokens, i, -1)
        if end is None:
            raise ValueError("no receiver")
        start = _chain_start(tokens, end)
        close = _matching_close(tokens, paren)
        receiver, arg = _text(tokens[start : end + 1]), _text(tokens[paren + 1 : close])
        tokens[start : close + 1] = [("ident", f"optional.ofNonZeroValue(__k8s_format_errors({receiver}, {arg}))")]
        i = start - 1
    return tokens


def _rewrite_string(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    for i, token in enumerate(tokens):
        after = _next(tokens, i)
        if token == ("ident", "string") and _is_global(tokens, i) and after is not None and tokens[after][1] == "(":
            tokens[i] = ("ident", "__k8s_string")
    return tokens
