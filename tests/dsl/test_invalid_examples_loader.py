"""Each loader-level example in examples/invalid/ gives exactly the diagnostics its header promises.

A file states what it expects in leading comment lines of the form ``# expect: TS105 9:3``
(code, line:column). Only the codes the YAML loader itself reports are checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trainspec.dsl.load.strict_yaml import load_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "invalid"
LOADER_CODES = {"TS101", "TS103", "TS104", "TS105", "TS106", "TS107", "TS113"}
LOADER_FILES = [
    "TS101-not-utf8.yaml",
    "TS103-syntax-error.yaml",
    "TS104-tab-indent.yaml",
    "TS105-duplicate-key.yaml",
    "TS106-alias-bomb.yaml",
    "TS107-not-a-mapping.yaml",
    "TS113-non-string-key.yaml",
]
EXPECT = re.compile(rb"^# expect: (TS\d{3}) (\d+):(\d+)\s*$")


def expected(path: Path) -> list[tuple[str, int, int]]:
    """The ``# expect:`` lines of the file's leading comment block (read as bytes: TS101 is not UTF-8)."""
    out = []
    for line in path.read_bytes().splitlines():
        if not line.startswith(b"#"):
            break
        m = EXPECT.match(line)
        if m:
            out.append((m.group(1).decode(), int(m.group(2)), int(m.group(3))))
    return out


def test_every_loader_example_exists() -> None:
    for name in LOADER_FILES:
        assert (EXAMPLES / name).is_file(), name


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in EXAMPLES.glob("TS*.yaml") if p.name[:5] in LOADER_CODES) or LOADER_FILES,
)
def test_example_gives_expected_diagnostics(name: str) -> None:
    path = EXAMPLES / name
    want = expected(path)
    assert want, f"{name} has no '# expect:' lines"
    assert all(code == name[:5] for code, _, _ in want), "one file per code"
    _docs, diags = load_file(path, display=name)
    got = sorted((d.code, d.line, d.column) for d in diags)
    assert got == sorted(want)
    for d in diags:
        assert d.file == name
        assert d.is_error
        assert d.message and d.hint
