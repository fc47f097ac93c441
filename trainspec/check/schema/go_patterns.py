"""A CRD's ``pattern`` is a Go (RE2) regular expression; the checker runs it with Python's ``re``.

The two agree on the patterns CRDs use, with one exception that made ``check`` fail with an
internal error: Go takes flags such as ``(?i)`` anywhere, applying to the rest of the enclosing
group (Kueue 0.19's AdmissionCheck has ``^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$``), while Python 3.11+
accepts such "global" flags only at the very start. :func:`python_pattern` rewrites them as
Python's scoped form, ``(?i:...)`` up to the end of the group. A pattern Python compiles as it
is stays as it is, so no verdict of a pattern that worked before changes.
"""

from __future__ import annotations

import functools
import re

#: ``(?i)``, ``(?im)``, ``(?-s)``, ``(?i-m)``: the flags Python also has (Go's ``U`` it lacks).
_FLAGS = re.compile(r"\(\?([ims]*(?:-[ims]+)?)\)")


@functools.lru_cache(maxsize=1024)
def python_pattern(pattern: str) -> str:
    """``pattern`` as Python's ``re`` reads it the way Go does (unchanged when it already compiles)."""
    try:
        re.compile(pattern)
        return pattern
    except re.error:
        pass
    rewritten = _scope_flags(pattern)
    try:
        re.compile(rewritten)
    except re.error:
        return pattern  # not this difference: the caller gets Python's own error, as before
    return rewritten


def _scope_flags(pattern: str) -> str:
    out: list[str] = []
    closers = [0]  # per open group: scoped-flag groups to close where it ends
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            start = i + 2 if pattern.startswith("[^", i) else i + 1
            if pattern.startswith("]", start):  # a leading ']' is a literal in both dialects
                out.append(pattern[i : start + 1])
                i = start + 1
                continue
        else:
            flags = _FLAGS.match(pattern, i)
            if flags is not None and i > 0:
                out.append(f"(?{flags.group(1)}:")
                closers[-1] += 1
                i = flags.end()
                continue
            if char == "(":
                closers.append(0)
            elif char == ")" and len(closers) > 1:
                out.append(")" * closers.pop())
        out.append(char)
        i += 1
    out.append(")" * closers[0])
    return "".join(out)
