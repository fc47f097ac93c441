"""Dependencies point one way: the package's import graph has no cycle and no upward edge.

The graph is read from the source (the AST of every module under ``trainspec/``), not from
what an import run happens to load, so it sees every import a module can make: module-level
imports and those inside functions (a function-level import still ties the two modules
together; it only hides the tie from start-up). Relative imports are resolved, ``from . import
x`` is an edge to the submodule ``x`` when there is one, else to the package's ``__init__``.
Imports under ``if TYPE_CHECKING:`` are left out: they never run, and annotations may name a
type from anywhere (they still must not be needed at run time).

Two checks:

* no cycle between modules (two modules that import each other, however indirectly);
* no upward import: every module belongs to one layer of :data:`LAYERS`, and may import its
  own package (its top-level folder under ``trainspec/``) and the layers below, never a layer
  above nor a sibling package of its own layer.

The layer order is also written in ``docs/pipeline.md`` ("Layers"); keep the two together.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "trainspec"

#: The layers, lowest first. A module may import modules of its own package and of the layers
#: below its own; packages that share a layer are independent of each other. Each name is a
#: module or a package under ``trainspec`` ("" is the package's own ``__init__``).
LAYERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("", "extras", "progress"),
        "the version and lazy public names, install hints, progress lines: standard library only",
    ),
    (("dsl",), "the spec language (models, loader, diagnostics): imports nothing else of trainspec"),
    (("k8s",), "typed Kubernetes objects, well-known facts and name rules, over dsl's value types"),
    (
        ("stages", "runtimes", "schemas", "gitops"),
        "leaves over dsl/k8s: in-pod programs (dsl facts only), built-in runtimes, JSON Schemas, health checks",
    ),
    (("kueue",), "Kueue pre-flight quota math over manifests: knows no compiler"),
    (("compiler",), "the passes: load to emit, with the parallelism planner and observability lowering"),
    (
        ("check", "explain", "observability", "migrate", "run", "kube"),
        "what is done with a compile: cluster verdicts and day-2 update rules, reports, local runs, the API",
    ),
    (("diff",), "what changed between two compiles, with check's day-2 view of the new runs"),
    (("client", "kfp"), "the cluster client and the Pipelines integration, over kube"),
    (("api", "cli"), "the entry points: the library facade and the commands"),
    (("__main__",), "``python -m trainspec``: runs the command line"),
)


#: Inside the two largest packages, the parts are ordered too (lowest first), as the layers are:
#: a module may import its own part and the parts before it. Each part is a list of the package's
#: direct children (a module or a subpackage; "" is the package's ``__init__``); "*" in the last
#: part stands for every child not listed.
SUBLAYERS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "dsl": (
        (
            ("", "codes", "diagnostics", "errors", "record", "kube_facts", "versions"),
            "the foundation: diagnostics and their codes, records, the exception root, Kubernetes facts",
        ),
        (("framework",), "the model framework: Model, field, validators and the typed scalars"),
        (("spec", "models"), "the spec language: the kinds and their parts (models: its public import path)"),
        (("load",), "the loader: files, YAML, Python spec modules, templates, documents into specs"),
    ),
    "check": (
        (("_paths",), "how field paths are written"),
        (("schema",), "what the API server checks from a CRD: structural schema, defaulting, core kinds, shipped data"),
        (("cel",), "CEL rules, evaluated over the defaulted object"),
        (("webhooks",), "the operators' admission webhooks"),
        (("", "*"), "the checker itself: requests, passes, the cache of verdicts, day-2 updates"),
    ),
}


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks (the else branch runs: it is kept)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            hidden.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return hidden


def _imported(node: ast.Import | ast.ImportFrom, name: str, is_package: bool, modules: Iterable[str]) -> set[str]:
    """The module names one import statement in module ``name`` refers to."""
    known = set(modules)
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    found = set()
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        found.add(sub if sub in known else target)  # `from pkg import module` or `from module import name`
    return found


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports (at any level of the file, TYPE_CHECKING
    blocks left out). ``root`` holds the folder ``package``."""
    files = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        hidden = _type_checking_only(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in hidden:
                is_package = path.name == "__init__.py"
                targets |= _imported(node, name, is_package, files)
        edges = set()
        for target in targets:
            if target != package and not target.startswith(package + "."):
                continue
            while target not in files and "." in target:  # `import a.b.name`: the module a.b
                target = target.rsplit(".", 1)[0]
            if target in files and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def find_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle path (first module repeated at the end) per strongly connected group of modules."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative (the graph is deep)
        work = [(start, iter(sorted(graph.get(start, ()))))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return [_cycle_path(graph, set(group)) for group in groups]


def _cycle_path(graph: Mapping[str, Iterable[str]], group: set[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph.get(node, ())):
            if child == start:
                return [*paths[node], start]
            if child in group and child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover: a group has one


def layer_of(module: str, package: str = "trainspec") -> tuple[int, str]:
    """(index in :data:`LAYERS`, the top-level part of the package) of a module."""
    part = module[len(package) + 1 :].split(".", 1)[0] if module != package else ""
    for index, (parts, _) in enumerate(LAYERS):
        if part in parts:
            return index, part
    raise AssertionError(f"{module} is in no layer: add trainspec.{part} to LAYERS in {__file__}")


def upward_imports(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Each import of a layer above the importer's, or of a sibling package of its layer."""
    found = []
    for module, targets in sorted(graph.items()):
        level, part = layer_of(module)
        for target in sorted(targets):
            target_level, target_part = layer_of(target)
            if target_part == part or target_level < level:
                continue
            where = "the same layer as" if target_level == level else "a higher layer than"
            found.append(
                f"{module} imports {target}, but trainspec.{target_part or '__init__'} is in {where} "
                f"trainspec.{part or '__init__'} (layer {target_level}: {LAYERS[target_level][1]})"
            )
    return found


def sublayer_of(module: str, package: str = "trainspec") -> tuple[str, int] | None:
    """(the package of :data:`SUBLAYERS` ``module`` is in, the index of its part), or None."""
    parts = module.split(".")[1:]
    if not parts or parts[0] not in SUBLAYERS:
        return None
    child = parts[1] if len(parts) > 1 else ""
    order = SUBLAYERS[parts[0]]
    for index, (children, _) in enumerate(order):
        if child in children:
            return parts[0], index
    if "*" in order[-1][0]:
        return parts[0], len(order) - 1
    raise AssertionError(f"{module} is in no part of trainspec.{parts[0]}: add {child!r} to SUBLAYERS in {__file__}")


def downward_within_packages(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Each import, inside a package of :data:`SUBLAYERS`, of a part above the importer's."""
    found = []
    for module, targets in sorted(graph.items()):
        mine = sublayer_of(module)
        for target in sorted(targets):
            theirs = sublayer_of(target)
            if mine is None or theirs is None or mine[0] != theirs[0] or theirs[1] <= mine[1]:
                continue
            order = SUBLAYERS[mine[0]]
            found.append(f"{module} ({order[mine[1]][1]}) imports {target} ({order[theirs[1]][1]})")
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(ROOT, "trainspec")


def test_the_package_has_no_import_cycle(graph: dict[str, set[str]]) -> None:
    cycles = find_cycles(graph)
    assert not cycles, (
        "import cycles (function-level imports count too):\n"
        + "\n".join("  " + " -> ".join(cycle) for cycle in cycles)
        + "\nBreak each one: move what both modules need into a lower module both import, "
        "or pass a function in instead of importing its module."
    )


def test_no_layer_imports_a_layer_above_it(graph: dict[str, set[str]]) -> None:
    upward = upward_imports(graph)
    assert not upward, (
        "imports against the layer order (LAYERS in tests/test_import_graph.py, docs/pipeline.md 'Layers'):\n"
        + "\n".join("  " + line for line in upward)
        + "\nMove the code to the layer that owns it (or the shared fact one layer down), or, if the "
        "order itself is wrong, change LAYERS and the docs together and say why."
    )


def test_every_module_is_in_a_layer(graph: dict[str, set[str]]) -> None:
    for module in graph:
        layer_of(module)


def test_the_parts_of_dsl_and_check_point_one_way(graph: dict[str, set[str]]) -> None:
    upward = downward_within_packages(graph)
    assert not upward, (
        "imports against the order of a package's parts (SUBLAYERS in tests/test_import_graph.py):\n"
        + "\n".join("  " + line for line in upward)
    )


def test_every_module_of_dsl_and_check_is_in_a_part(graph: dict[str, set[str]]) -> None:
    placed = [sublayer_of(module) for module in graph if module.split(".")[1:2] in (["dsl"], ["check"])]
    assert placed and all(placed)


def test_the_part_order_finds_an_upward_import() -> None:
    """The check can fail: the framework importing the spec language is reported."""
    graph = {"trainspec.dsl.framework.types": {"trainspec.dsl.spec.parts", "trainspec.dsl.errors"}}
    (found,) = downward_within_packages(graph)
    assert found.startswith("trainspec.dsl.framework.types (the model framework") and (
        "imports trainspec.dsl.spec.parts (the spec language" in found
    )


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A package ``pkg`` with a cycle a -> b -> c -> a (relative, function-level and TYPE_CHECKING
    imports among them) and an acyclic module d."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import thing\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\nfrom . import c\n"
    )
    return tmp_path


def test_the_graph_finds_a_planted_cycle(planted: Path) -> None:
    graph = import_graph(planted, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.c"}  # a function-level, relative import
    assert graph["pkg.d"] == {"pkg.c"}  # the TYPE_CHECKING import is left out
    assert find_cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]


def test_the_graph_of_an_acyclic_package_has_no_cycle(planted: Path) -> None:
    (planted / "pkg" / "c.py").write_text("import os\n")
    assert find_cycles(import_graph(planted, "pkg")) == []
