"""Day-2 updates: which changes the cluster refuses when a recompiled tree is re-applied.

A GitOps repository's tree is recompiled and applied over the objects the previous tree created.
The API server refuses some of those updates, and this module says which, offline, from the
previous object and the new one (plain dicts, as parsed from YAML):

* **TS440**, a CRD transition rule: every ``x-kubernetes-validations`` rule that mentions
  ``oldSelf`` (Trainer's ``self == oldSelf`` on ``spec.trainer``, ``spec.runtimeRef``, ...), run
  with ``oldSelf`` bound to the previous object as apiextensions-apiserver does (a rule runs
  only where both objects have the field, list-map items are matched by key). The create-time
  rules are checked elsewhere (:func:`~trainspec.check.check_manifest`);
* **TS441**, a validating webhook's update rule (:mod:`.update_rules`): Kueue's label rules
  (queue, priority class, maximum execution time, elastic annotation) and Trainer's runtime
  patch rule; a rule that depends on whether the job runs now is reported as a refusal, with
  the condition in the message;
* **TS442** / **TS443**, core PersistentVolumeClaim update validation: an immutable spec field
  changed, a smaller storage request (errors); a larger one (a warning: the storage class must
  allow expansion, which only the cluster knows).

Messages are the server's or the webhook's own words (``spec.trainer: Invalid value: "object":
field is immutable``); ``Diagnostic.path`` is the field in the checker's rendered form (see
:func:`.locate.parse_path`). Without a CEL engine the transition rules are not evaluated and one
TS502 warning says so, as :func:`.cel.check_cel` does.

Importing this module is cheap: the CRD registry, the CEL engine and the rules are loaded on
first use.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from trainspec.check.cel.validations import CelEngine
    from trainspec.check.schema.crds import CrdRegistry, CrdVersion

__all__ = [
    "ObjectKey",
    "UpdateResult",
    "object_key",
    "transition_schema",
    "tree_update_problems",
    "update_problems",
]

#: (API group, kind, namespace, name); the group of core kinds is ``""``, so is a cluster-scoped
#: object's namespace.
ObjectKey = tuple[str, str, str, str]

_OLD_SELF = re.compile(r"\boldSelf\b")


class UpdateResult(NamedTuple):
    """One object present in both trees: the new object and what refuses its update (may be empty)."""

    obj: Mapping[str, Any]
    problems: list[Diagnostic]


def object_key(obj: Any) -> ObjectKey | None:
    """What identifies ``obj`` on a cluster: (group, kind, namespace, name); None without a name."""
    if not isinstance(obj, Mapping):
        return None
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name, kind, api_version = meta.get("name"), obj.get("kind"), obj.get("apiVersion")
    if not (isinstance(name, str) and name and isinstance(kind, str) and isinstance(api_version, str)):
        return None
    namespace = meta.get("namespace")
    return api_version.rpartition("/")[0], kind, namespace if isinstance(namespace, str) else "", name


def update_problems(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    engine: CelEngine | None = None,
    crds: CrdRegistry | None = None,
) -> list[Diagnostic]:
    """Every refusal of updating ``old`` (on the cluster) to ``new`` (the recompiled object).

    Both must be the same object (:func:`object_key`: group, kind, namespace, name), else
    ValueError. ``crds`` is the registry to take CRD schemas from (default: ``$TRAINSPEC_CRDS_DIR``,
    else the CRDs shipped for the default target); ``engine`` the CEL engine (default: the
    installed one). Findings come as CRD transition rules, then PVC rules, then webhook rules.
    """
    key = object_key(new)
    if key is None or key != object_key(old):
        raise ValueError(f"not an update of one object: {object_key(old)} -> {key}")
    from trainspec.check.schema.defaulting import apply_defaults
    from trainspec.check.update_rules import pvc_update_problems, webhook_update_problems

    registry = crds if crds is not None else _default_registry()
    crd = registry.lookup(str(new["apiVersion"]), key[1])
    out: list[Diagnostic] = []
    if crd is not None:
        # The server compares stored (defaulted) objects: default both, as it decodes both.
        old, new = apply_defaults(crd.schema, dict(old)), apply_defaults(crd.schema, dict(new))
        out.extend(_transition_problems(old, new, crd, engine))
    if (new.get("apiVersion"), key[1]) == ("v1", "PersistentVolumeClaim"):
        out.extend(pvc_update_problems(old, new))
    out.extend(webhook_update_problems(old, new))
    return out


def tree_update_problems(
    old_objects: Iterable[Any],
    new_objects: Iterable[Any],
    *,
    engine: CelEngine | None = None,
    crds: CrdRegistry | None = None,
) -> list[UpdateResult]:
    """:func:`update_problems` for every object of ``new_objects`` that ``old_objects`` also has.

    Objects are paired by :func:`object_key`; one only in the old tree (pruned) or only in the new
    one (created) is no update and is left out, so are objects without a name. Results follow the
    new tree's order, one per pair, including pairs without problems. The CRD registry and the CEL
    engine are resolved once for the whole tree.
    """
    previous: dict[ObjectKey, Mapping[str, Any]] = {}
    for obj in old_objects:
        key = object_key(obj)
        if key is not None:
            previous[key] = obj
    registry = crds if crds is not None else _default_registry()
    if engine is None:
        engine = _engine_or_none()
    out = []
    for obj in new_objects:
        key = object_key(obj)
        if key is not None and key in previous:
            out.append(UpdateResult(obj, update_problems(previous[key], obj, engine=engine, crds=registry)))
    return out


# -- CRD transition rules ------------------------------------------------------------------------


def _default_registry() -> CrdRegistry:
    from trainspec.check.schema.crd_source import resolve_crds
    from trainspec.check.schema.crds import load_crds
    from trainspec.compiler.targets import Target

    return load_crds(resolve_crds(None, Target()).files)


def _engine_or_none() -> CelEngine | None:
    from trainspec.check.cel import validations as cel

    try:
        return cel.default_engine()
    except ImportError:
        return None


_TRANSITIONS: dict[int, tuple[Mapping[str, Any], dict[str, Any] | None]] = {}
_TRANSITIONS_LOCK = threading.Lock()


def _only_transitions(node: Any) -> Any:
    """A copy of a schema keeping only the rules that mention ``oldSelf`` (types, defaults and
    everything else kept: the rules' ``self`` is converted by the whole schema)."""
    if isinstance(node, Mapping):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "x-kubernetes-validations" and isinstance(value, list):
                kept = [r for r in value if isinstance(r, Mapping) and _OLD_SELF.search(str(r.get("rule", "")))]
                if kept:
                    out[key] = kept
            else:
                out[key] = _only_transitions(value)
        return out
    if isinstance(node, list):
        return [_only_transitions(item) for item in node]
    return node


def transition_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` with only its transition rules, or None when it has none (memoised per schema)."""
    from trainspec.check.cel.validations import iter_rules

    with _TRANSITIONS_LOCK:
        found = _TRANSITIONS.get(id(schema))
        if found is not None and found[0] is schema:
            return found[1]
    filtered = _only_transitions(schema)
    result = filtered if any(True for _ in iter_rules(filtered)) else None
    with _TRANSITIONS_LOCK:
        _TRANSITIONS[id(schema)] = (schema, result)
    return result


def _schema_type(schema: Mapping[str, Any], path: str) -> str:
    """The ``type`` of the schema node at a rendered path (what the server quotes as the value)."""
    from trainspec.check.locate import parse_path

    node: Any = schema
    for part in parse_path(path):
        if not isinstance(node, Mapping):
            return ""
        if isinstance(part, int):
            node = node.get("items")
        else:
            properties = node.get("properties") or {}
            node = properties.get(part) if part in properties else node.get("additionalProperties")
    return str(node.get("type") or "") if isinstance(node, Mapping) else ""


def _transition_problems(
    old: Mapping[str, Any], new: Mapping[str, Any], crd: CrdVersion, engine: CelEngine | None
) -> list[Diagnostic]:
    from trainspec.check.cel.validations import check_cel, iter_rules

    schema = transition_schema(crd.schema)
    if schema is None:
        return []
    if engine is None:
        engine = _engine_or_none()
    if engine is None:
        from trainspec.extras import install_hint  # here: `import trainspec.check` stays self-contained

        count = sum(1 for _ in iter_rules(schema))
        return [
            Diagnostic(
                code=codes.CRD_RULE_UNEVALUATED,
                severity=Severity.WARNING,
                message=f"{count} CRD transition rule(s) of {crd.kind} not evaluated: no CEL engine "
                f"(cel-expr-python or cel-python) is installed",
                hint=install_hint("check"),
            )
        ]
    out = []
    for found in check_cel(dict(new), schema, engine=engine, old=dict(old), defaults=False):
        if found.code != codes.CRD_RULE:
            out.append(found)  # a rule the offline engine could not run (TS502): said, never passed
            continue
        value = _schema_type(crd.schema, found.path)
        out.append(
            Diagnostic(
                code=codes.UPDATE_TRANSITION_RULE,
                message=f'{found.path}: Invalid value: "{value}": {found.message}',
                path=found.path,
                hint=f"the {crd.kind} CRD keeps this field as it was created ({found.hint}): revert the "
                f"change, or make the changed object a new one (another name, or delete and recreate it)",
            )
        )
    return out
