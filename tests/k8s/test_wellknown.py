"""Kubernetes facts are defined once (issue 10, item 3): every label and annotation key, container,
volume and manager name, reserved env name, name pattern and integer bound of the two
``wellknown`` modules appears nowhere else in the package source.

The scan reads each module's syntax tree and looks for string constants *equal* to a fact (a
docstring or message that mentions a key is fine) and for the integer bounds written out as
numbers or powers of two. Generated JSON schemas and docs are not Python and are not scanned.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import trainspec.dsl.kube_facts as dsl_facts
import trainspec.k8s.wellknown as k8s_facts

PACKAGE = Path(dsl_facts.__file__).resolve().parents[1]
HOMES = {"trainspec/dsl/kube_facts.py", "trainspec/k8s/wellknown.py"}

#: Facts that are also everyday words of the code (a spec field ``trainer``, the shard-by value
#: ``node``, an explain row "checkpoints"): an equal string elsewhere need not mean the fact.
GENERIC = {
    "node",
    "launcher",
    "trainer",
    "initializer",
    "checkpoints",
    "trainspec",
    "volcano",
    "v1alpha1",
    "v1beta1",
    "v1beta2",
    "jax",
    # a name rule's forbidden separator (kube_facts) is also every path check's parent directory
    "..",
}

#: Modules whose owners are rewriting them at the time of writing; they switch to the
#: wellknown constant next (listed in the issue's hand-over). Never add to this list.
PENDING: set[tuple[str, str]] = set()

_BOUNDS = {(1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, 1 << 64}


def _facts() -> dict[str, str]:
    """Every string fact of both modules -> the constant that holds it."""
    found: dict[str, str] = {}
    for module in (dsl_facts, k8s_facts):
        for name in dir(module):
            if not name.isupper():
                continue
            value = getattr(module, name)
            items = value.values() if isinstance(value, dict) else [value]
            for item in items:
                for text in item if isinstance(item, tuple) else (item,):
                    if isinstance(text, str):
                        found.setdefault(text, name)
    return found


def _sources() -> list[tuple[str, ast.AST]]:
    return [
        (path.relative_to(PACKAGE.parent).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


SOURCES = _sources()
FACTS = _facts()


def test_the_scan_sees_the_facts() -> None:
    """Guards the scan itself: it must find the facts where they are defined."""
    for key in (
        "kueue.x-k8s.io/queue-name",
        "kueue.x-k8s.io/priority-class",
        "kueue.x-k8s.io/max-exec-time-seconds",
        "trainer.kubeflow.org/trainjob-ancestor-step",
        "dataset-initializer",
        "dshm",
        "trainspec.dev/compiler",
        "PET_",
        "TRAINSPEC_CHECKPOINT_DIR",
        "PET_NNODES",
        "argocd.argoproj.io/sync-wave",
    ):
        assert key in FACTS, key
    defined = {text for name in HOMES for text in STRINGS[name]}
    assert "kueue.x-k8s.io/queue-name" in defined and "dshm" in defined


def _strings(tree: ast.AST) -> set[str]:
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


STRINGS = {name: _strings(tree) for name, tree in SOURCES}


@pytest.mark.parametrize("fact", sorted(set(FACTS) - GENERIC))
def test_each_fact_is_written_out_in_one_module_only(fact: str) -> None:
    elsewhere = sorted(
        name
        for name, strings in STRINGS.items()
        if name not in HOMES and (fact, name) not in PENDING and fact in strings
    )
    assert elsewhere == [], f"{fact!r} ({FACTS[fact]}) is written out in {elsewhere}: import it from wellknown"


def _bound(node: ast.AST) -> int | None:
    """The integer a node writes out if it is one of the bounds (a literal, 2**n or 1 << n)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value if node.value in _BOUNDS else None
    if isinstance(node, ast.BinOp) and isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
        left, right = node.left.value, node.right.value
        if isinstance(node.op, ast.Pow) and left == 2 and right in (31, 32, 63, 64):
            return 2**right
        if isinstance(node.op, ast.LShift) and left == 1 and right in (31, 32, 63, 64):
            return 1 << right
    return None


def test_integer_bounds_are_written_out_only_in_the_dsl_facts() -> None:
    found = sorted(
        f"{name}:{node.lineno}"
        for name, tree in SOURCES
        if name != "trainspec/dsl/kube_facts.py"
        for node in ast.walk(tree)
        if _bound(node) is not None
    )
    assert found == [], f"int32/int64 bounds written out in {found}: use trainspec.dsl.kube_facts"


def test_the_k8s_module_re_exports_the_dsl_facts() -> None:
    for name in ("INT32_MAX", "INT64_MAX", "DNS1123_LABEL_PATTERN", "RESERVED_ENV_PREFIXES", "TRAINER_RESERVED_ENV"):
        assert getattr(k8s_facts, name) is getattr(dsl_facts, name)
    assert set(k8s_facts.__all__) <= set(dir(k8s_facts))
