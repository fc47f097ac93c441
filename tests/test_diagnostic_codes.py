"""The diagnostic codes: one registry (:mod:`trainspec.dsl.codes`), referred to by name.

* no ``"TSnnn"`` string literal in the package outside the registry: code names a code
  (``codes.UNKNOWN_FIELD``), so a typo is a type checker's error, not a new code;
* every registered code is used by name somewhere in the package (else it is dead: retire it);
* every code the package's prose names (docstrings, help texts, messages) is registered;
* the README's "Diagnostic codes" table and the docs name exactly the registered codes: every
  code named or inside a range of the table is registered (a retired number may be a gap in a
  range), and every registered code is named or inside a range;
* a code behaves as the plain string everywhere output is made (text, JSON, sorting, sets).
"""

from __future__ import annotations

import ast
import json
import pickle
import re
from pathlib import Path

import pytest

from trainspec.dsl import codes
from trainspec.dsl.codes import CODES, RETIRED, Code
from trainspec.dsl.diagnostics import CODES as DIAGNOSTICS_CODES, Diagnostic

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "trainspec"
REGISTRY = PACKAGE / "dsl" / "codes.py"
CODE = re.compile(r"^TS\d{3}$")
MENTION = re.compile(r"\bTS\d{3}\b")
RANGE = re.compile(r"\b(TS\d{3})[\u2013-](TS\d{3})\b")  # an en dash (as the README writes ranges) or a hyphen


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(PACKAGE.rglob("*.py"))]


def _members() -> dict[str, Code]:
    return {name: value for name, value in vars(codes).items() if isinstance(value, Code)}


def test_the_package_names_codes_never_spells_them() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for path, tree in _modules()
        if path != REGISTRY
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value)
    ]
    assert found == [], "use the name from trainspec.dsl.codes:\n" + "\n".join(found)


def test_every_registered_code_is_used() -> None:
    used: set[str] = set()
    for path, tree in _modules():
        if path == REGISTRY:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "codes":
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and node.module == "trainspec.dsl.codes":
                used.update(alias.name for alias in node.names)
    members = _members()
    assert sorted(set(members) - used) == [], "registered, used nowhere: dead (retire the number instead)"
    assert sorted(used - set(members) - {"Code", "CODES", "RETIRED", "code_named"}) == []


def test_the_registry_is_well_formed() -> None:
    members = _members()
    values = [str(value) for value in members.values()]
    assert all(CODE.match(value) for value in values), values
    assert len(set(values)) == len(values), "a code under two names"
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", name) for name in members)
    assert all(value.description and value.description == value.description.strip() for value in members.values())
    assert dict(CODES) == {value: value.description for value in members.values()}
    assert list(CODES) == sorted(CODES)
    assert DIAGNOSTICS_CODES is CODES
    assert RETIRED.isdisjoint(CODES) and all(CODE.match(code) for code in RETIRED)


def test_every_code_the_package_mentions_is_registered() -> None:
    mentioned: dict[str, str] = {}
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and path != REGISTRY:
                for code in MENTION.findall(node.value):
                    mentioned.setdefault(code, f"{path.relative_to(ROOT)}:{node.lineno}")
    assert {code: where for code, where in mentioned.items() if code not in CODES} == {}


def _readme_table() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Diagnostic codes\n", 1)[1].split("\n## ", 1)[0]
    return [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| TS")]


def test_the_readme_table_names_exactly_the_registered_codes() -> None:
    covered: set[str] = set()
    for cell in _readme_table():
        match = RANGE.fullmatch(cell)
        if match:
            low, high = (int(code[2:]) for code in match.groups())
            span = {f"TS{n}" for n in range(low, high + 1)}
            assert match.group(1) in CODES and match.group(2) in CODES, cell
            assert span - set(CODES) <= RETIRED, (cell, sorted(span - set(CODES) - RETIRED))
            covered |= span & set(CODES)
        else:
            assert CODE.match(cell) and cell in CODES, cell
            covered.add(cell)
    assert sorted(set(CODES) - covered) == [], "registered, missing from the README's table"


def test_every_code_the_docs_name_is_registered() -> None:
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        named = set(MENTION.findall(path.read_text(encoding="utf-8")))
        assert sorted(named - set(CODES)) == [], path.relative_to(ROOT)


def test_a_code_is_its_string_wherever_output_is_made() -> None:
    code = codes.UNKNOWN_FIELD
    assert code == "TS200" and isinstance(code, str)
    old_style = "%s" % code  # noqa: UP031 (printf-style formatting is one of the ways output is made)
    assert (str(code), f"{code}", f"[{code}]", old_style, repr(code)) == (
        "TS200",
        "TS200",
        "[TS200]",
        "TS200",
        "'TS200'",
    )
    assert type(str(code)) is str
    assert json.dumps({"code": code}) == '{"code": "TS200"}'
    assert hash(code) == hash("TS200") and code in {"TS200"} and "TS200" in {code}
    assert sorted([codes.WRONG_TYPE, "TS100", code]) == ["TS100", "TS200", "TS202"]
    assert pickle.loads(pickle.dumps(code)) == "TS200" and pickle.loads(pickle.dumps(code)) is code
    assert Diagnostic(code, "m") == Diagnostic("TS200", "m")


def test_every_diagnostic_carries_a_registered_code_object() -> None:
    """``Diagnostic.code`` is typed :class:`Code`, and is one at run time: over every invalid
    example (each code the loader, the rules and the lowering report), through pickling, and back
    from the check cache's stored form."""
    from trainspec.compiler.pipeline import Options, Stop, run
    from trainspec.dsl.codes import Code, code_named

    invalid = ROOT / "examples" / "invalid"
    result = run([str(invalid)], Options(project=None, stop=Stop.LOWER))
    found = result.diagnostics
    assert len({d.code for d in found}) > 40
    assert all(type(d.code) is Code for d in found), sorted({d.code for d in found if type(d.code) is not Code})
    assert all(type(d.code) is Code for d in pickle.loads(pickle.dumps(found)))
    assert code_named("TS200") is codes.UNKNOWN_FIELD
    with pytest.raises(KeyError):
        code_named("TS999")
