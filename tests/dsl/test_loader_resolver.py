"""The spec loader's scalar resolver gives PyYAML's tags (it remembers those of short plain scalars)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from trainspec.dsl.load.strict_yaml import scalars

TRICKY = [
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "~",
    "null",
    "Null",
    "",
    "1e3",
    "1.0e+3",
    "0x1F",
    "0o17",
    "017",
    "0b101",
    "1:30",
    "-1:30.5",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    ".inf",
    "-.Inf",
    ".NaN",
    "<<",
    "=",
    "1_000",
    "+12",
    "-0",
    "8Gi",
    "30m",
    "true",
    "FALSE",
    "abc",
    "1.",
    ".5",
    "1e",
    "0x",
    "0.5.1",
]


def _tags(text: str, loader: Any) -> list[str]:
    """Every node's tag, in document order."""
    out: list[str] = []
    stack = [yaml.compose(text, Loader=loader)]
    while stack:
        node = stack.pop()
        out.append(node.tag)
        if isinstance(node, yaml.MappingNode):
            stack.extend(part for pair in reversed(node.value) for part in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
    return out


def _document(value: str) -> str:
    quoted = value.replace("'", "''")
    return (
        f"plain: {value}\nsingle: '{quoted}'\nflow: [{value}, '{quoted}']\n"
        f"tagged: ! {value}\nstr: !!str {value}\n{value}: key\nnested: {{a: {value}}}\n"
    )


@pytest.mark.parametrize("value", TRICKY)
def test_every_node_gets_pyyamls_tag(value: str) -> None:
    text = _document(value) if value else "plain:\nflow: [a, '']\n"
    assert _tags(text, scalars.loader_class()) == _tags(text, yaml.SafeLoader)
    assert _tags(text, scalars.loader_class()) == _tags(text, yaml.SafeLoader)  # remembered this time


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.eE+-_:xobtrufalsyTNn~<=iIfF ", min_size=1, max_size=12))
def test_plain_scalars_resolve_as_pyyaml_resolves_them(value: str) -> None:
    value = value.strip()
    if not value or (value[0] in "-:~<" and len(value) > 1 and value[1] in " :"):
        value = "x" + value
    try:
        expected = _tags(f"k: {value}\n", yaml.SafeLoader)
    except yaml.YAMLError:
        return
    assert _tags(f"k: {value}\n", scalars.loader_class()) == expected


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scalars, "_MEMO_SIZE", 8)
    text = "".join(f"k{i}: {i}\n" for i in range(50)) + "long: " + "9" * 100 + "\n"
    assert _tags(text, scalars.loader_class()) == _tags(text, yaml.SafeLoader)
    cells = scalars.loader_class().resolve.__closure__
    memo = next(c.cell_contents for c in cells if isinstance(c.cell_contents, dict))
    assert 0 < len(memo) <= 8 and not any(len(key) > scalars._MEMO_LENGTH for key in memo)
