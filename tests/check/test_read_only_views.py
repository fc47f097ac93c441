"""No per-manifest deep copies, same answers (issue 26).

* schema defaulting is copy-on-write: the result equals the deep-copying algorithm it replaced,
  and the input is untouched;
* the CEL walk defaults level by level and converts only the fields of ``self`` a node's rules
  select: its findings equal those of defaulting the whole object first and converting every
  value whole (the walk as it was), on objects generated from every shipped CRD with rules,
  created and updated;
* the JobSet Trainer builds for a TrainJob shares the runtime's template instead of copying it:
  the runtime and the TrainJob are left as they were.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from tests.check.test_compiled_schema import _object, _shipped_schemas
from trainspec.check.cel import walker
from trainspec.check.cel.validations import check_cel, default_engine, iter_rules
from trainspec.check.schema.defaulting import apply_defaults
from trainspec.check.webhooks.admission import check_webhooks
from trainspec.check.webhooks.jobset_trainer import trainer_jobset_spec


def _deep_defaults(schema: Mapping[str, Any], value: Any) -> Any:
    """The defaulting as it was: a deep copy, filled in place."""
    result = copy.deepcopy(value)
    _fill(schema, result)
    return result


def _fill(schema: Mapping[str, Any], value: Any) -> None:
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                if name in value and value[name] is None and "default" in sub and not sub.get("nullable"):
                    del value[name]
                if name not in value and "default" in sub:
                    value[name] = copy.deepcopy(sub["default"])
                if name in value:
                    _fill(sub, value[name])
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key, item in value.items():
                if not (isinstance(properties, Mapping) and key in properties):
                    _fill(extra, item)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                _fill(items, item)


def _mutated(rng: random.Random, obj: Any) -> Any:
    """``obj`` with one value somewhere replaced (an old object for an update)."""
    out = copy.deepcopy(obj)
    node = out
    for _ in range(6):
        if not isinstance(node, dict) or not node:
            break
        key = rng.choice(list(node))
        if rng.random() < 0.4 or not isinstance(node[key], dict):
            node[key] = rng.choice([None, 0, 1, "x", [], {}])
            break
        node = node[key]
    return out


_WITH_RULES = [(name, schema) for name, schema in _shipped_schemas() if any(True for _ in iter_rules(schema))]


@pytest.mark.parametrize(("name", "schema"), _shipped_schemas(), ids=lambda v: v if isinstance(v, str) else "")
def test_copy_on_write_defaulting_equals_the_deep_copy(name: str, schema: Mapping[str, Any]) -> None:
    rng = random.Random(name)
    for _ in range(40):
        obj = _object(rng, schema, 0)
        before = json.dumps(obj)
        # json.dumps keeps the key order: defaults are added where the server adds them
        assert json.dumps(apply_defaults(schema, obj)) == json.dumps(_deep_defaults(schema, obj))
        assert json.dumps(obj) == before


def _as_before(schema: Mapping[str, Any], obj: Any, old: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """check_cel as the walk was: the whole object defaulted first, every value converted whole."""
    with monkeypatch.context() as patched:
        patched.setattr(walker, "_fields_named", lambda text: None)
        defaulted_old = _deep_defaults(schema, old) if old is not None else None
        return check_cel(_deep_defaults(schema, obj), schema, old=defaulted_old, defaults=False)


@pytest.mark.parametrize(("name", "schema"), _WITH_RULES, ids=lambda v: v if isinstance(v, str) else "")
def test_the_cel_walk_answers_as_before(name: str, schema: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        default_engine()
    except ImportError:
        pytest.skip("no CEL engine installed")
    rng = random.Random(name)
    for _ in range(40):
        obj = _object(rng, schema, 0)
        obj["metadata"] = {"name": rng.choice(["ok", "Bad_Name", "a" * 70])}
        old = _mutated(rng, obj) if rng.random() < 0.4 else None
        assert check_cel(obj, schema, old=old) == _as_before(schema, obj, old, monkeypatch), json.dumps(obj)[:1500]


@pytest.mark.parametrize(
    ("rule", "fields"),
    [
        ("self.metadata.name.matches('^a')", {"metadata"}),
        ("has(self.torch) || self.?mpi.orValue(null) != null", {"torch", "mpi"}),
        ("self.a__dash__b > 0", {"a__dash__b"}),
        ("self == oldSelf", None),
        ("size(self) > 1", None),
        ("self.all(k, k != 'x')", None),
        ("self.items.all(i, i > 0)", {"items"}),
        ("self.x.exists(e, e == self)", None),
    ],
)
def test_which_fields_a_rule_selects(rule: str, fields: set[str] | None) -> None:
    found = walker._fields_named(rule)
    assert (set(found) if found is not None else None) == fields


def test_the_jobset_of_a_trainjob_shares_the_runtime_and_changes_neither(runtime: Any, trainjob: Any) -> None:
    rt, tj = runtime(), trainjob()
    rt_before, tj_before = json.dumps(rt), json.dumps(tj)
    spec = trainer_jobset_spec(rt, tj)
    assert spec["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 2  # numNodes of the TrainJob
    assert check_webhooks([("rt.yaml", rt), ("tj.yaml", tj), ("tj2.yaml", copy.deepcopy(tj))], policy=False) == []
    assert (json.dumps(rt), json.dumps(tj)) == (rt_before, tj_before)
    # parts the controller does not change are the runtime's own objects, not copies
    template = rt["spec"]["template"]["spec"]
    assert spec["successPolicy"] is template["successPolicy"]
    assert spec["replicatedJobs"][0]["template"]["metadata"] is template["replicatedJobs"][0]["template"]["metadata"]
