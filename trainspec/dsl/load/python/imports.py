"""Does a Python file build trainspec specs? Read with :mod:`ast`, never run.

Directory walks use this to tell spec modules from training scripts that sit beside them
(which may import ``trainspec.stages`` but build no ``TrainingJob``). A file counts when it
imports the spec API in any form and calls a ``TrainingJob``/``Runtime`` constructor (or a
class method such as ``TrainingJob.model_validate``) through whatever name that import bound.
"""

from __future__ import annotations

import re
from typing import Any

#: The spec classes a module may build.
SPEC_CLASSES = frozenset({"TrainingJob", "Runtime", "Pipeline"})
#: Modules that export the spec classes (``import trainspec as ts`` ... ``ts.TrainingJob``).
#: The modules a spec file imports the kinds from: the package, the public ``trainspec.dsl.models``
#: and where the kinds are defined (``trainspec.dsl.spec.models``).
SPEC_MODULES = frozenset(
    {
        "trainspec",
        "trainspec.dsl",
        "trainspec.dsl.models",
        "trainspec.dsl.spec",
        "trainspec.dsl.spec.models",
        "trainspec.dsl.spec.pipeline_spec",
    }
)

# When the file does not parse: keep it if it plausibly is a spec, so the loader reports the error.
_TEXT_IMPORT = re.compile(r"^\s*(?:from\s+trainspec[\w.]*\s+import|import\s+trainspec)\b", re.M)
_TEXT_CLASS = re.compile(r"\b(?:TrainingJob|Runtime)\b")


def builds_specs(text: str) -> bool:
    """Whether the module source ``text`` imports trainspec's spec API and builds a spec with it."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return bool(_TEXT_IMPORT.search(text) and _TEXT_CLASS.search(text))
    classes, modules = _bindings(tree, ast)
    if not classes and not modules:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_spec_callee(node.func, classes, modules, ast):
            return True
    return False


def _bindings(tree: Any, ast: Any) -> tuple[set[str], dict[str, str]]:
    """Names bound to a spec class, and names bound to a module (name -> dotted module)."""
    classes: set[str] = set()
    modules: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("trainspec"):
                    continue
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:  # ``import trainspec.dsl.models`` binds ``trainspec``
                    modules[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("trainspec"):
            for alias in node.names:
                bound = alias.asname or alias.name
                if alias.name == "*":
                    classes.update(SPEC_CLASSES)
                elif alias.name in SPEC_CLASSES:
                    classes.add(bound)
                elif f"{node.module}.{alias.name}" in SPEC_MODULES:
                    modules[bound] = f"{node.module}.{alias.name}"
    return classes, modules


def _is_spec_callee(func: Any, classes: set[str], modules: dict[str, str], ast: Any) -> bool:
    """``TJ(...)``, ``TJ.model_validate(...)``, ``ts.TrainingJob(...)``, ``trainspec.dsl.models.Runtime(...)``."""
    parts: list[str] = []
    node = func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return False
    parts.append(node.id)
    parts.reverse()  # e.g. ["ts", "dsl", "models", "TrainingJob"]
    if parts[0] in classes:
        return len(parts) <= 2  # the class itself, or one of its class methods
    root = modules.get(parts[0])
    if root is None:
        return False
    for i in range(1, len(parts)):
        if parts[i] in SPEC_CLASSES and ".".join([root, *parts[1:i]]) in SPEC_MODULES:
            return i >= len(parts) - 2
    return False
