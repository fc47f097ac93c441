"""The diff compares meaning: shuffling documents, files and keys, or re-quoting, changes nothing."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings, strategies as st

from trainspec.compiler.pipeline import compile_paths
from trainspec.diff import DiffReport, diff_results

PAIR = Path(__file__).resolve().parents[2] / "examples" / "diff"


class _QuotingDumper(yaml.SafeDumper):
    """Double-quotes every string, so no string can be re-read as a number or boolean."""


_QuotingDumper.add_representer(
    str, lambda dumper, text: dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"')
)


def _permute(node: Any, rnd: random.Random) -> Any:
    """Mapping keys in a random order, recursively; list order is meaning, so it stays."""
    if isinstance(node, dict):
        keys = list(node)
        rnd.shuffle(keys)
        return {k: _permute(node[k], rnd) for k in keys}
    if isinstance(node, list):
        return [_permute(item, rnd) for item in node]
    return node


def scramble(source: Path, target: Path, rnd: random.Random) -> None:
    """Every document of ``source`` rewritten into ``target``: shuffled across 1-3 files, keys
    permuted, block or flow style, all strings quoted, comments gone."""
    docs = [doc for path in sorted(source.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())]
    rnd.shuffle(docs)
    files: dict[str, list[Any]] = {}
    for doc in docs:
        files.setdefault(f"part-{rnd.randint(1, 3)}.yaml", []).append(_permute(doc, rnd))
    target.mkdir(parents=True)
    for name, group in files.items():
        text = yaml.dump_all(
            group,
            Dumper=_QuotingDumper,
            sort_keys=False,
            default_flow_style=rnd.choice([False, None]),
            width=rnd.choice([60, 200]),
        )
        (target / name).write_text(text)


def report(old: Path, new: Path) -> DiffReport:
    old_result, new_result = compile_paths([str(old)]), compile_paths([str(new)])
    assert old_result.ok and new_result.ok, [*old_result.diagnostics, *new_result.diagnostics]
    return diff_results(old_result, new_result)


BASELINE = report(PAIR / "old", PAIR / "new")


@settings(max_examples=12, deadline=None)
@given(st.randoms(use_true_random=False))
def test_scrambled_sides_give_the_same_report(rnd: random.Random) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        old, new = Path(tmp, "old"), Path(tmp, "new")
        scramble(PAIR / "old", old, rnd)
        scramble(PAIR / "new", new, rnd)
        assert report(old, new) == BASELINE
        assert report(PAIR / "old", old).changes == ()
        assert report(new, PAIR / "new").changes == ()


def test_a_fixed_permutation_gives_the_same_report(tmp_path: Path) -> None:
    scramble(PAIR / "new", tmp_path / "new", random.Random(7))
    assert report(PAIR / "old", tmp_path / "new") == BASELINE
    assert BASELINE.changed and len(BASELINE.changes) == 7  # 6 changes and the new run they cause
