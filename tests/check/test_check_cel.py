"""CEL rules (TS501 violated, TS502 not evaluable): CRD rules, defaults, transition rules, engine."""

from __future__ import annotations

import pytest

from trainspec.check import (
    CelCompileError,
    check_cel,
    check_manifest,
    default_engine,
    iter_rules,
    load_crds,
)
from trainspec.check.cel.validations import cel_value, escape_property
from trainspec.dsl.diagnostics import Severity

pytest.importorskip("celpy", reason="cel-python is needed for the CEL checks")


def found_at(diagnostics, code):
    return [(d.path, d.message) for d in diagnostics if d.code == code]


# -- every rule in every shared CRD compiles -------------------------------------------------


def test_every_crd_rule_compiles(crd_dirs):
    registry = load_crds(crd_dirs)
    engine = default_engine()
    rules = {(crd.kind, crd.version, path, rule["rule"]) for crd in registry for path, rule in iter_rules(crd.schema)}
    assert len({r[3] for r in rules}) >= 40, "the shared CRDs carry ~48 distinct rules"
    failures = []
    for kind, version, path, text in sorted(rules):
        try:
            engine.compile(text)
        except CelCompileError as exc:
            failures.append((kind, version, path, text, str(exc)))
    # A rule that does not compile must surface as a TS502 warning naming it, never pass.
    for _kind, _version, _path, text, _error in failures:
        schema = {"type": "object", "x-kubernetes-validations": [{"rule": text}]}
        reported = check_cel({}, schema)
        assert [d.code for d in reported] == ["TS502"] and text in reported[0].message
    assert failures == []


# -- Trainer rules ---------------------------------------------------------------------------


def test_bad_name(check, runtime, trainjob):
    tj = trainjob()
    tj["metadata"]["name"] = "Bad_Name!"
    found = check(runtime(), tj)
    assert found_at(found, "TS501") == [("", "metadata.name must match RFC 1035 DNS label format")]
    # The API server's own object-name check fires as well (structural, on metadata.name).
    assert [d.path for d in found if d.code == "TS500"] == ["metadata.name"]


def test_name_too_long(check, runtime, trainjob):
    tj = trainjob()
    tj["metadata"]["name"] = "a" * 64
    found = check(runtime(), tj)
    assert found_at(found, "TS501") == [("", "metadata.name must be no more than 63 characters")]
    assert not [d for d in found if d.code == "TS500"]


def test_managed_by_nonsense(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["managedBy"] = "nonsense"
    assert [p for p, _ in found_at(check(runtime(), tj), "TS501")] == ["spec.managedBy"]
    tj["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert check(runtime(), tj) == []


@pytest.mark.parametrize(("uri", "ok"), [("data/train", False), ("hf://org/ds", True), ("", True), ("s3://b/k", True)])
def test_storage_uri_scheme(check, runtime, trainjob, rjob, uri, ok):
    rt = runtime()
    rt["spec"]["template"]["spec"]["replicatedJobs"].insert(
        0, rjob("dataset-initializer", "dataset-initializer", ancestor="dataset-initializer", mounts=True)
    )
    tj = trainjob()
    tj["spec"]["initializer"] = {"dataset": {"storageUri": uri}}
    found = check(rt, tj)
    assert [d.path for d in found] == ([] if ok else ["spec.initializer.dataset.storageUri"])
    assert all(d.code == "TS501" for d in found)


def test_two_ml_policy_sources(check, runtime):
    rt = runtime()
    rt["spec"]["mlPolicy"]["mpi"] = {"numProcPerNode": 1}
    assert found_at(check(rt), "TS501") == [("spec.mlPolicy", "Only one of the policy can be configured")]


def test_in_order_startup_with_depends_on(check, runtime, rjob):
    rt = runtime()
    spec = rt["spec"]["template"]["spec"]
    spec["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    spec["replicatedJobs"] = [
        rjob("prep", "prep"),
        rjob("node", "node", ancestor="trainer", dependsOn=[{"name": "prep", "status": "Complete"}]),
    ]
    assert found_at(check(rt), "TS501") == [
        ("spec.template.spec", "StartupPolicy and DependsOn APIs are mutually exclusive")
    ]


def test_num_proc_per_node_zero(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["trainer"]["numProcPerNode"] = 0
    assert found_at(check(runtime(), tj), "TS501") == [
        ("spec.trainer.numProcPerNode", "numProcPerNode must be greater than or equal to 1")
    ]


def test_transition_rules_skip_on_create_and_run_with_old(crd_dirs, trainjob):
    registry = load_crds(crd_dirs)
    old = trainjob()
    new = trainjob()
    new["spec"]["trainer"]["numNodes"] = 4
    assert check_manifest(new, registry) == []
    found = check_manifest(new, registry, old=old)
    assert found_at(found, "TS501") == [("spec.trainer", "field is immutable")]
    assert check_manifest(old, registry, old=old) == []


# -- Kueue rules, with schema defaults ------------------------------------------------------


def _cluster_queue(**spec):
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "gpu"},
        "spec": {"namespaceSelector": {}, **spec},
    }


_GROUPS = [
    {
        "coveredResources": ["nvidia.com/gpu"],
        "flavors": [
            {
                "name": "a100",
                "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": 8}],
            }
        ],
    }
]


def test_borrowing_limit_needs_a_cohort(check):
    found = check(_cluster_queue(resourceGroups=_GROUPS))
    assert found_at(found, "TS501") == [("spec", "borrowingLimit must be nil when cohort is empty")]
    assert check(_cluster_queue(resourceGroups=_GROUPS, cohortName="org")) == []


def test_defaults_are_applied_before_cel(check):
    # reclaimWithinCohort is absent and defaults to Never, which the rule forbids together with
    # a borrowWithinCohort policy other than Never.
    found = check(_cluster_queue(preemption={"borrowWithinCohort": {"policy": "LowerPriority"}}))
    assert [p for p, _ in found_at(found, "TS501")] == ["spec.preemption"]
    assert check(_cluster_queue(preemption={})) == []


def _topology(*labels):
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": "dc"},
        "spec": {"levels": [{"nodeLabel": label} for label in labels]},
    }


def test_topology_hostname_must_be_last(check):
    found = check(_topology("kubernetes.io/hostname", "cloud.example.com/rack"))
    assert found_at(found, "TS501") == [
        ("spec.levels", "the kubernetes.io/hostname label can only be used at the lowest level of topology")
    ]
    assert check(_topology("cloud.example.com/rack", "kubernetes.io/hostname")) == []
    assert [p for p, _ in found_at(check(_topology("a.example.com/x", "a.example.com/x")), "TS501")] == ["spec.levels"]


# -- engine behaviour on synthetic schemas --------------------------------------------------


def _schema(rule, **rule_extra):
    return {
        "type": "object",
        "properties": {
            "size-gb": {"type": "integer"},
            "ratio": {"type": "number"},
            "mem": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "name": {"type": "string"},
        },
        "x-kubernetes-validations": [{"rule": rule, **rule_extra}],
    }


def test_unsupported_function_is_a_warning_naming_the_rule():
    # The strings extension's format() is not implemented offline (the IP/CIDR library is).
    found = check_cel({"name": "10.0.0.0/8"}, _schema("'%s'.format([self.name]) == self.name"))
    assert [(d.code, d.severity, d.path) for d in found] == [("TS502", Severity.WARNING, "")]
    assert "format([self.name])" in found[0].message
    assert check_cel({"name": "10.0.0.0/8"}, _schema("isCIDR(self.name)")) == []


def test_syntax_error_is_a_warning_and_an_evaluation_error_a_rejection():
    assert [d.code for d in check_cel({}, _schema("self.name ==== 1"))] == ["TS502"]
    # Reading a field the object lacks is an error the API server rejects the object with.
    found = check_cel({"name": "x"}, _schema("self.ratio > 1.0"))
    assert [(d.code, d.message) for d in found] == [("TS501", "no such key: ratio evaluating rule: self.ratio > 1.0")]


def test_values_are_typed_by_the_schema():
    # number -> double even when written as 1; int-or-string keeps the YAML type.
    assert check_cel({"ratio": 1}, _schema("self.ratio > 0.5")) == []
    assert check_cel({"mem": "1Gi"}, _schema("isQuantity(self.mem)")) == []
    assert check_cel({"size-gb": 3}, _schema("self.size__dash__gb == 3")) == []
    assert cel_value(_schema("true"), {"unknown": 1, "size-gb": 2}) == {"size__dash__gb": 2}
    assert escape_property("a.b/c__d") == "a__dot__b__slash__c__underscores__d"
    assert escape_property("namespace") == "__namespace__"


def test_message_expression_and_field_path():
    schema = _schema(
        "self.ratio < 1.0", messageExpression="'ratio ' + string(self.ratio) + ' too big'", fieldPath=".ratio"
    )
    found = check_cel({"ratio": 2}, schema)
    # cel-go (the server) prints a double as Go's %g does: string(2.0) is "2".
    assert [(d.code, d.path, d.message) for d in found] == [("TS501", "ratio", "ratio 2 too big")]


def test_rules_on_mistyped_values_are_skipped():
    # The wrong type is a TS500 already; evaluating the rule would only add noise.
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 1"}]}},
    }
    assert check_cel({"n": "auto"}, schema) == []
    assert [d.code for d in check_cel({"n": 0}, schema)] == ["TS501"]


class _RejectEverything:
    def compile(self, rule):
        raise CelCompileError("nope")

    def evaluate(self, program, activation):
        raise AssertionError("never reached")


def test_custom_engine_failures_are_reported(check, runtime):
    found = check(runtime(), engine=_RejectEverything())
    assert {d.code for d in found} == {"TS502"}
    assert {d.path for d in found} == {"spec.mlPolicy", "spec.template.spec"}


def test_missing_cel_python_is_one_warning(monkeypatch):
    from trainspec.check.cel import validations as cel

    def unavailable():
        raise ImportError("No module named 'celpy'")

    monkeypatch.setattr(cel, "default_engine", unavailable)
    found = check_cel({"name": "x"}, _schema("self.name == 'x'"))
    assert [(d.code, d.severity) for d in found] == [("TS502", Severity.WARNING)]
    assert "1 CEL rule(s) not evaluated" in found[0].message


def test_optional_old_self_runs_on_create_with_no_old_value():
    # optionalOldSelf: the rule runs on a create too, with oldSelf = optional.none().
    found = check_cel({"name": "x"}, _schema("oldSelf.hasValue()", optionalOldSelf=True))
    assert [d.code for d in found] == ["TS501"]
    assert check_cel({"name": "x"}, _schema("!oldSelf.hasValue()", optionalOldSelf=True)) == []
