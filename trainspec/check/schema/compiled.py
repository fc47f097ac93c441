"""A compiled validator for the structural-schema subset the converted CRDs use.

jsonschema's Draft 7 validator interprets the schema on every node of every manifest: it
creates a validator object per descent, looks keywords up by name and asks a type-checker
registry for every type test, which made the structural step a quarter of a check. Here each
schema node becomes one closure (:mod:`.keyword_checks`), built the first time a manifest
reaches the node: a manifest visits the few hundred nodes its fields lead to, of the
thousands a CRD has, so a cold check converts (:func:`.structural.convert_node`) and compiles
only what it uses, and later manifests reuse it.

The answers are jsonschema's, error for error and in the same order: the keywords of a node
run in the schema's own key order with jsonschema's semantics (:mod:`.jsonschema_subset`).
A node outside the subset (``$ref``, ``if``, ``const``, a keyword value of an odd shape, an
unknown type name, a pattern Python cannot compile) raises
:class:`~.jsonschema_subset.Unsupported` when it is compiled; :class:`.structural.StructuralValidator`
then validates with jsonschema itself, so an odd user CRD keeps jsonschema's exact behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trainspec.check.schema.jsonschema_subset import (
    DRAFT7,
    Check,
    Lazy,
    Problem,
    Unsupported,
    path_from,
    schema_like,
)
from trainspec.check.schema.k8s_keywords import RULES as K8S_RULES
from trainspec.check.schema.keyword_checks import BUILDERS, accept, refuse


class Compiler:
    """Compiles schema nodes into checks, each node once (memoised by identity).

    ``expand(node)`` is the JSON Schema form of an OpenAPI node held by a :class:`Lazy` (whose
    own sub-schemas may be :class:`Lazy` again); ``materialize(schema)`` the whole JSON Schema
    of a sub-schema, for the two messages that print one (``oneOf``, ``not``).
    """

    def __init__(
        self,
        expand: Callable[[Mapping[str, Any]], Mapping[str, Any]],
        materialize: Callable[[Any], Any],
    ) -> None:
        self._expand, self._materialize = expand, materialize
        # id(node) -> (node, check): the node is kept so that its id cannot be reused.
        self._done: dict[int, tuple[Any, Check]] = {}

    def check(self, schema: Any) -> Check:
        """The check of ``schema`` (a JSON Schema node, a :class:`Lazy` node or a boolean), compiled now."""
        source = schema.node if isinstance(schema, Lazy) else schema
        found = self._done.get(id(source))
        if found is not None and found[0] is source:
            return found[1]
        if schema is True:
            check: Check = accept
        elif schema is False:
            check = refuse
        elif isinstance(schema, Lazy):
            check = self._node(self._expand(schema.node))
        elif isinstance(schema, Mapping):
            check = self._node(schema)
        else:
            raise Unsupported(f"a schema of type {type(schema).__name__}")
        self._done[id(source)] = (source, check)
        return check

    def link(self, schema: Any) -> Check:
        """A check of ``schema`` compiled when first called (most sub-schemas are never reached)."""
        cell: list[Check] = []

        def first(instance: Any, path: Any, out: list[Problem]) -> None:
            if not cell:
                cell.append(self.check(schema))
            cell[0](instance, path, out)

        return first

    def materialize(self, schema: Any) -> Any:
        """``schema`` wholly in JSON Schema form."""
        return self._materialize(schema)

    def _node(self, schema: Mapping[str, Any]) -> Check:
        if "$ref" in schema:
            raise Unsupported("$ref")  # Draft 7 ignores the other keywords beside it
        steps = [step for step in (self._step(schema, k, v) for k, v in schema.items()) if step is not None]
        if not steps:
            return accept
        if len(steps) == 1:
            return steps[0]
        if len(steps) == 2:
            one, two = steps

            def pair(instance: Any, path: Any, out: list[Problem]) -> None:
                one(instance, path, out)
                two(instance, path, out)

            return pair

        def node(instance: Any, path: Any, out: list[Problem]) -> None:
            for step in steps:
                step(instance, path, out)

        return node

    def _step(self, schema: Mapping[str, Any], keyword: Any, value: Any) -> Check | None:
        if keyword in K8S_RULES:
            return _k8s(schema, keyword, value)
        if keyword not in DRAFT7 or keyword == "format":
            return None  # jsonschema ignores other keys; format does nothing without a format checker
        build = _BUILDERS.get(keyword)
        if build is None:
            raise Unsupported(f"keyword {keyword}")
        return build(self, schema, value)


def _branches(keyword: str, value: Any) -> list[Any]:
    if not isinstance(value, list) or not all(schema_like(b) for b in value):
        raise Unsupported(keyword)
    return value


def _all_of(c: Compiler, schema: Mapping[str, Any], value: Any) -> Check:
    links = [c.link(b) for b in _branches("allOf", value)]

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        for link in links:
            link(instance, path, out)

    return step


def _any_of(c: Compiler, schema: Mapping[str, Any], value: Any) -> Check:
    links = [c.link(b) for b in _branches("anyOf", value)]

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        for link in links:
            errors: list[Problem] = []
            link(instance, path, errors)
            if not errors:
                return
        message = f"{instance!r} is not valid under any of the given schemas"
        out.append(Problem("anyOf", value, instance, schema, message, path))

    return step


def _one_of(c: Compiler, schema: Mapping[str, Any], value: Any) -> Check:
    branches = _branches("oneOf", value)
    links = [c.link(b) for b in branches]

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        valid = []
        for index, link in enumerate(links):
            errors: list[Problem] = []
            link(instance, path, errors)
            if not errors:
                valid.append(index)
        if not valid:
            message = f"{instance!r} is not valid under any of the given schemas"
            out.append(Problem("oneOf", value, instance, schema, message, path))
        elif len(valid) > 1:  # jsonschema lists the later valid branches, then the first
            shown = [c.materialize(branches[i]) for i in (*valid[1:], valid[0])]
            reprs = ", ".join(repr(s) for s in shown)
            out.append(Problem("oneOf", value, instance, schema, f"{instance!r} is valid under each of {reprs}", path))

    return step


def _not(c: Compiler, schema: Mapping[str, Any], value: Any) -> Check:
    if not schema_like(value):
        raise Unsupported("not")
    link = c.link(value)

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        errors: list[Problem] = []
        link(instance, path, errors)
        if not errors:
            message = f"{instance!r} should not be valid under {c.materialize(value)!r}"
            out.append(Problem("not", value, instance, schema, message, path))

    return step


#: Keyword -> builder; a Draft 7 keyword missing here ($ref, if, const, ...) is unsupported.
_BUILDERS: dict[str, Callable[[Any, Mapping[str, Any], Any], Check]] = {
    **BUILDERS,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
}


def _k8s(schema: Mapping[str, Any], keyword: str, value: Any) -> Check:
    rule = K8S_RULES[keyword]

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        for message, below in rule(value, instance):
            out.append(Problem(keyword, value, instance, schema, message, path_from(below, path)))

    return step


class CompiledValidator:
    """``iter_errors(instance)`` of a whole schema, as jsonschema's validator has it."""

    def __init__(self, root: Any, compiler: Compiler) -> None:
        self._root, self._compiler = root, compiler
        self._check: Check | None = None

    def iter_errors(self, instance: Any) -> list[Problem]:
        """Every error of ``instance``, in jsonschema's order; raises :class:`Unsupported`."""
        if self._check is None:
            self._check = self._compiler.check(self._root)
        out: list[Problem] = []
        self._check(instance, None, out)
        return out
