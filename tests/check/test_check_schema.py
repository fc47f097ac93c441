"""Structural (TS500) checks: strict schemas converted from the CRDs, ObjectMeta, core kinds."""

from __future__ import annotations

from trainspec.check.schema.structural import StructuralValidator, convert, did_you_mean
from trainspec.dsl.diagnostics import Severity


def at(diagnostics, code):
    return [d.path for d in diagnostics if d.code == code]


def test_good_pair_has_no_findings(check, runtime, trainjob):
    assert check(runtime(), trainjob()) == []


def test_v21_style_trainjob_and_runtime_fields_are_unknown(check, runtime, trainjob):
    rt = runtime()
    rt["spec"]["mlPolicy"]["torch"]["numProcPerNode"] = "auto"
    tj = trainjob()
    tj["spec"]["labels"] = {"team": "a"}
    tj["spec"]["podTemplateOverrides"] = [{"targetJobs": [{"name": "node"}]}]
    found = check(rt, tj)
    assert at(found, "TS500") == [
        "spec.mlPolicy.torch.numProcPerNode",
        "spec.labels",
        "spec.podTemplateOverrides",
    ]
    messages = {d.path: d for d in found}
    assert messages["spec.labels"].message == "unknown field 'labels'"
    assert messages["spec.labels"].file == "m1.yaml"
    assert messages["spec.mlPolicy.torch.numProcPerNode"].file == "m0.yaml"
    assert "envInjection" in (messages["spec.mlPolicy.torch.numProcPerNode"].hint or "")


def test_unknown_field_suggests_the_close_name(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["trainer"]["numNode"] = 2
    tj["metadata"]["label"] = {"a": "b"}
    found = check(runtime(), tj)
    by_path = {d.path: d.message for d in found if d.code == "TS500"}
    assert by_path == {
        "metadata.label": "unknown field 'label' (did you mean 'labels'?)",
        "spec.trainer.numNode": "unknown field 'numNode' (did you mean 'numNodes'?)",
    }


def test_empty_policy_objects_take_no_fields(check, runtime):
    rt = runtime()
    rt["spec"]["mlPolicy"] = {"xgboost": {"workers": 2}}
    found = check(rt)
    assert at(found, "TS500") == ["spec.mlPolicy.xgboost.workers"]
    assert found[0].hint == "this object takes no fields"


def test_enum_violation(check, runtime):
    rt = runtime()
    rt["spec"]["mlPolicy"] = {"numNodes": 1, "mpi": {"mpiImplementation": "MPICH"}}
    found = check(rt)
    assert at(found, "TS500") == ["spec.mlPolicy.mpi.mpiImplementation"]
    assert "must be one of 'OpenMPI'" in found[0].message


def test_wrong_type(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["trainer"]["numNodes"] = "two"
    tj["spec"]["suspend"] = "yes"
    found = check(runtime(), tj)
    assert at(found, "TS500") == ["spec.suspend", "spec.trainer.numNodes"]
    assert "wrong type: expected integer, got string 'two'" in {d.message for d in found}


def test_float_is_not_an_integer(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["trainer"]["numNodes"] = 2.0
    assert at(check(runtime(), tj), "TS500") == ["spec.trainer.numNodes"]


def test_missing_required_field_points_at_the_field(check, runtime, trainjob):
    tj = trainjob()
    del tj["spec"]["runtimeRef"]["name"]
    found = check(runtime(), tj)
    assert [(d.path, d.message) for d in found] == [("spec.runtimeRef.name", "missing required field 'name'")]


def test_duplicate_list_map_key_is_rejected(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["runtimePatches"].append({"manager": "trainspec.dev/compiler"})
    found = check(runtime(), tj)
    assert at(found, "TS500") == ["spec.runtimePatches[1]"]
    assert "manager='trainspec.dev/compiler'" in found[0].message


def test_dependson_over_five_is_a_schema_error(check, runtime, rjob):
    rt = runtime()
    jobs = [rjob(f"prep{i}", "prep") for i in range(6)]
    node = rjob(
        "node",
        "node",
        ancestor="trainer",
        dependsOn=[{"name": j["name"], "status": "Complete"} for j in jobs],
    )
    rt["spec"]["template"]["spec"]["replicatedJobs"] = [*jobs, node]
    found = check(rt)
    assert at(found, "TS500") == ["spec.template.spec.replicatedJobs[6].dependsOn"]
    assert "no more than 5 items (has 6)" in found[0].message


def test_int_or_string_quantities(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["trainer"]["resourcesPerNode"]["limits"]["memory"] = "64 GB"
    found = check(runtime(), tj)
    assert at(found, "TS500") == ["spec.trainer.resourcesPerNode.limits.memory"]
    assert "does not match the pattern" in found[0].message


def test_object_meta_is_strict_and_validated(check, runtime):
    rt = runtime()
    rt["metadata"]["labels"]["bad key!"] = "x"
    rt["metadata"]["labels"]["ok"] = "-bad-value"
    rt["metadata"]["annotations"] = {"fine.example.com/x": "anything at all"}
    found = check(rt)
    assert sorted(at(found, "TS500")) == sorted(["metadata.labels['bad key!']", "metadata.labels.ok"])


def test_metadata_name_is_required(check, runtime):
    rt = runtime()
    del rt["metadata"]["name"]
    found = check(rt)
    assert "metadata.name" in at(found, "TS500")


def test_kueue_v1beta1_field_under_v1beta2(check):
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "gpu"},
        "spec": {"cohort": "org", "namespaceSelector": {}},
    }
    found = check(cq)
    assert [(d.code, d.path) for d in found] == [("TS500", "spec.cohort")]
    assert found[0].message == "unknown field 'cohort' (did you mean 'cohortName'?)"
    cq["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    assert check(cq) == []


def test_unserved_version_and_unknown_kind(check):
    found = check(
        {"apiVersion": "kueue.x-k8s.io/v1beta9", "kind": "ClusterQueue", "metadata": {"name": "a"}},
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}},
        {"kind": "Widget"},
    )
    assert [(d.file, d.code, d.path, d.severity) for d in found] == [
        ("m0.yaml", "TS500", "apiVersion", Severity.ERROR),
        ("m1.yaml", "TS504", "", Severity.WARNING),
        ("m3.yaml", "TS500", "apiVersion", Severity.ERROR),
    ]
    assert "kueue.x-k8s.io/v1beta1, kueue.x-k8s.io/v1beta2" in found[0].message


def test_pvc_schema(check):
    good = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "ckpt", "namespace": "team-a"},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": "100Gi"}},
            "storageClassName": "fast",
            "volumeMode": "Filesystem",
        },
    }
    assert check(good) == []
    bad = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "Ckpt"},
        "spec": {
            "accessModes": ["ReadWriteSometimes"],
            "resources": {"requests": {"storage": "lots"}},
            "size": 1,
        },
    }
    assert at(check(bad), "TS500") == [
        "metadata.name",
        "spec.accessModes[0]",
        "spec.resources.requests.storage",
        "spec.size",
    ]
    del bad["spec"]["resources"]["requests"]["storage"]
    assert "spec.resources.requests.storage" in at(check(bad), "TS500")


def test_convert_handles_openapi_specifics():
    schema = convert(
        {
            "type": "object",
            "properties": {
                "port": {
                    "x-kubernetes-int-or-string": True,
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                },
                "maybe": {"type": "string", "nullable": True, "enum": ["a"]},
                "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                "when": {"type": "string", "format": "date-time"},
            },
        }
    )
    props = schema["properties"]
    assert props["port"] == {"type": ["integer", "string"]}
    assert props["maybe"] == {"type": ["string", "null"], "enum": ["a", None]}
    assert props["ratio"] == {"type": "number", "exclusiveMinimum": 0}
    assert "additionalProperties" not in props["free"]
    assert schema["additionalProperties"] is False
    assert "format" not in props["when"]
    validator = StructuralValidator(schema, converted=True)
    problems = validator.validate(
        {
            "port": 1.5,
            "maybe": None,
            "ratio": 0,
            "free": {"x": 1},
            "tags": ["a", "a"],
            "when": "x",
            "extra": 1,
        }
    )
    assert sorted(d.path for d in problems) == ["extra", "port", "ratio", "tags[1]"]


def test_did_you_mean():
    assert did_you_mean("numprocpernode", ["numProcPerNode"]) == "numProcPerNode"
    assert did_you_mean("zzz", ["numNodes"]) is None


def test_root_preserving_unknown_fields_accepts_anything():
    validator = StructuralValidator({"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    assert validator.validate({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}, "any": 1}) == []
    assert [d.path for d in validator.validate({"apiVersion": "x/v1", "kind": "X", "metadata": {}})] == [
        "metadata.name"
    ]
