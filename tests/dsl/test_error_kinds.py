"""Every error kind the validation layer produces maps to exactly one diagnostic code."""

from __future__ import annotations

import re
from pathlib import Path

from trainspec.dsl.errors import ERROR_KINDS
from trainspec.dsl.load.validation import CODE_BY_ERROR

DSL = Path(__file__).resolve().parents[2] / "trainspec" / "dsl"

#: Where the layer names a kind: Invalid("kind", ...), fail("kind", ...), error_dict("kind", ...), or a
#: "ts_..." kind handed to a helper (_parse(..., "ts_duration"), _NameRule("ts_name", ...)).
_NAMED = re.compile(r"""(?:\bInvalid|\bfail|\berror_dict)\(\s*["']([a-z_]+)["']|["'](ts_[a-z_]+)["']""")


def test_the_table_lists_every_kind_and_only_those() -> None:
    assert CODE_BY_ERROR.keys() == ERROR_KINDS.keys()
    assert all(re.fullmatch(r"TS[2-4]\d\d", code) for code in CODE_BY_ERROR.values())


def test_every_kind_named_in_the_source_has_a_code() -> None:
    named = {
        kind
        for path in DSL.rglob("*.py")
        if path.name != "validation.py"
        for match in _NAMED.finditer(path.read_text(encoding="utf-8"))
        for kind in match.groups()
        if kind
    }
    assert named, "the scan found nothing: the pattern no longer matches the source"
    assert named <= CODE_BY_ERROR.keys(), sorted(named - CODE_BY_ERROR.keys())


def test_no_pydantic_vocabulary_is_left() -> None:
    """Kinds and names the layer can never produce (it is not pydantic) are gone from the package."""
    package = DSL.parent
    for word in (
        "extra_forbidden",
        "model_attributes_type",
        "include_url",
        "Extra inputs are not permitted",
        "function-",
    ):
        users = [str(p.relative_to(package)) for p in package.rglob("*.py") if word in p.read_text(encoding="utf-8")]
        assert users == [], (word, users)
