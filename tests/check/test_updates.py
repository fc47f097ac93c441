"""Day-2 update rules (trainspec.check.updates): the expected verdicts, pairing, PVC sizes, no engine.

``update_verdicts/`` holds one update a file: the previous object, then the new one, both as
``trainspec compile examples/`` emits them, with the verdict a cluster would give (derived from the
upstream rules, see each file's ``# rule:`` line) in the header:

* ``# verdict: ACCEPTED|REJECTED`` and, for a rejection, ``# message:`` (the server's or the
  webhook's message) and ``# code:`` (the diagnostic code); an accepted update may name the
  warning it carries in ``# code:``;
* ``# source: crd|core|webhook:<component>``, ``# rule:`` (the rule and its upstream file),
  ``# assumes:`` (the live state the verdict needs) and ``# note:``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.check import updates
from trainspec.check.cel import validations as cel
from trainspec.check.updates import object_key, transition_schema, tree_update_problems, update_problems
from trainspec.dsl.diagnostics import Diagnostic, Severity

VERDICTS = Path(__file__).with_name("update_verdicts")
FILES = sorted(VERDICTS.glob("*.yaml"))
HEADER = re.compile(r"^# (verdict|message|source|code|rule|assumes|note): (.*)$", re.MULTILINE)
#: The API server's prefix of an invalid object's message: ``TrainJob.trainer.kubeflow.org "a" is invalid: ``.
INVALID_PREFIX = re.compile(r'^\S+ "[^"]+" is invalid: ')


def _read(path: Path) -> tuple[dict[str, str], Any, Any]:
    text = path.read_text(encoding="utf-8")
    header = dict(HEADER.findall(text))
    old, new = list(yaml.safe_load_all(text))
    return header, old, new


def _errors(found: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in found if d.severity is Severity.ERROR]


def test_the_recorded_expectations_cover_every_kind_and_verdict() -> None:
    headers = [_read(path)[0] for path in FILES]
    kinds = {_read(path)[1]["kind"] for path in FILES}
    assert len(FILES) >= 24
    assert kinds >= {"TrainJob", "ClusterTrainingRuntime", "RayJob", "PyTorchJob", "MPIJob", "PersistentVolumeClaim"}
    assert {h["verdict"] for h in headers} == {"ACCEPTED", "REJECTED"}
    assert all(h["source"] in ("crd", "core") or h["source"].startswith("webhook:") for h in headers)
    assert all(h["message"] and h["code"] for h in headers if h["verdict"] == "REJECTED")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_expected_verdict(path: Path) -> None:
    header, old, new = _read(path)
    assert object_key(old) == object_key(new)
    found = update_problems(old, new)
    assert not [d for d in found if d.code == "TS502"], "every transition rule must be evaluated"
    errors = _errors(found)
    if header["verdict"] == "ACCEPTED":
        assert errors == [], f"expected no refusal, got {[d.message for d in errors]}"
        if header.get("code"):  # an accepted update that still carries a warning (a growing claim)
            assert header["code"] in {d.code for d in found if d.severity is Severity.WARNING}
        return
    expected = INVALID_PREFIX.sub("", header["message"])
    matching = [d for d in errors if d.code == header["code"] and expected in d.message]
    assert matching, f"no {header['code']} containing {expected!r} among {[(d.code, d.message) for d in errors]}"
    assert all(d.path and d.hint for d in matching)


# -- TrainJob ----------------------------------------------------------------------------------------


def _pair(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    _, old, _ = _read(VERDICTS / name)
    return old, copy.deepcopy(old)


def test_trainjob_metadata_and_suspend_changes_are_accepted() -> None:
    old, new = _pair("01-tj-labels-annotations.yaml")
    new["metadata"]["labels"] = {**new["metadata"]["labels"], "team": "other", "cost-center": "cc-1"}
    new["metadata"]["annotations"] = {"example.com/note": "day 2"}
    new["spec"]["suspend"] = False
    assert update_problems(old, new) == []


def test_trainjob_immutable_fields_are_named_with_the_crd_message() -> None:
    old, new = _pair("01-tj-labels-annotations.yaml")
    new["spec"]["trainer"]["args"] = ["--epochs", "3"]
    new["spec"]["activeDeadlineSeconds"] = 60
    found = {d.path: d for d in update_problems(old, new)}
    assert found["spec.trainer"].code == "TS440"
    assert found["spec.trainer"].message == 'spec.trainer: Invalid value: "object": field is immutable'
    assert found["spec.activeDeadlineSeconds"].message.endswith('"integer": field is immutable')


def test_runtime_patches_may_change_when_this_update_suspends_a_job_without_a_queue() -> None:
    old, new = _pair("10-tj-runtimepatch-labels.yaml")
    for obj in (old, new):
        del obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    old["spec"]["suspend"] = True  # suspended and nobody's queue: it is not running
    labels = new["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    labels["template"]["spec"]["template"]["metadata"]["labels"]["extra"] = "1"
    assert _errors(update_problems(old, new)) == []
    old["spec"]["suspend"] = new["spec"]["suspend"] = False  # running before and after: refused
    assert [d.code for d in _errors(update_problems(old, new))] == ["TS441"]


def test_runtime_patch_time_is_not_a_change() -> None:
    old, new = _pair("10-tj-runtimepatch-labels.yaml")
    old["spec"]["runtimePatches"][0]["time"] = "2026-01-01T00:00:00Z"  # set by Trainer's defaulter
    assert update_problems(old, new) == []


def test_kueue_rules_beyond_the_recorded_files() -> None:
    _, old, _ = _read(VERDICTS / "21-ray-entrypoint.yaml")
    elastic = copy.deepcopy(old)
    elastic["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    assert [(d.code, d.path) for d in update_problems(old, elastic)] == [
        ("TS441", "metadata.annotations['kueue.x-k8s.io/elastic-job']")
    ]
    # Leaving the queue while this update suspends the job: refused only where a default LocalQueue exists.
    running, leaving = copy.deepcopy(old), copy.deepcopy(old)
    running["spec"]["suspend"] = False
    del leaving["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    leaving["metadata"]["labels"].pop("kueue.x-k8s.io/max-exec-time-seconds")
    running["metadata"]["labels"].pop("kueue.x-k8s.io/max-exec-time-seconds")
    found = update_problems(running, leaving)
    assert [(d.code, d.severity) for d in found] == [("TS441", Severity.WARNING)]
    assert "default queue" in found[0].message
    # A RayJob Kueue manages neither before nor after is not validated by Kueue at all.
    for obj in (running, leaving):
        obj["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name", None)
    leaving["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"] = "60"
    assert update_problems(running, leaving) == []


def test_a_patch_change_trainer_accepts_but_jobset_refuses_is_a_warning() -> None:
    old, new = _pair("10-tj-runtimepatch-labels.yaml")
    for obj in (old, new):
        del obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    rjob = new["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    rjob["template"]["spec"]["template"]["spec"] = {"affinity": {"nodeAffinity": {}}}
    found = update_problems(old, new)
    assert [(d.code, d.severity) for d in found] == [("TS441", Severity.WARNING)]
    assert "JobSet" in found[0].message and "affinity" in found[0].message


# -- pairing -----------------------------------------------------------------------------------------


def _object(kind: str, name: str, namespace: str | None = "ns", api: str = "v1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta, "data": {"k": name}}


def test_pairing_by_group_kind_namespace_and_name() -> None:
    kept = _object("ConfigMap", "kept")
    old_tree = [kept, _object("ConfigMap", "pruned"), _object("ConfigMap", "moved", "a"), {"kind": "NoName"}]
    new_tree = [
        _object("ConfigMap", "created"),
        copy.deepcopy(kept),
        _object("ConfigMap", "moved", "b"),  # another namespace: another object
        _object("Secret", "kept"),  # another kind
    ]
    results = tree_update_problems(old_tree, new_tree)
    assert [(r.obj["kind"], r.obj["metadata"]["name"], r.problems) for r in results] == [("ConfigMap", "kept", [])]


def test_pairing_ignores_the_version_but_not_the_group() -> None:
    assert object_key(_object("MPIJob", "a", api="kubeflow.org/v1")) == ("kubeflow.org", "MPIJob", "ns", "a")
    assert object_key(_object("MPIJob", "a", api="kubeflow.org/v2beta1")) == object_key(
        _object("MPIJob", "a", api="kubeflow.org/v1")
    )
    assert object_key(_object("Job", "a", api="batch/v1")) != object_key(_object("Job", "a", api="jobset.x-k8s.io/v1"))
    with pytest.raises(ValueError, match="not an update"):
        update_problems(_object("ConfigMap", "a"), _object("ConfigMap", "b"))


def test_tree_update_problems_reports_every_refused_update() -> None:
    _, old_job, new_job = _read(VERDICTS / "03-tj-trainer-image.yaml")
    _, old_claim, new_claim = _read(VERDICTS / "31-pvc-shrink.yaml")
    results = tree_update_problems([old_claim, old_job], [new_job, new_claim])
    assert [r.obj["kind"] for r in results] == ["TrainJob", "PersistentVolumeClaim"]
    assert [[d.code for d in r.problems] for r in results] == [["TS440"], ["TS442"]]


# -- PersistentVolumeClaim ---------------------------------------------------------------------------


def _claim(**spec: Any) -> dict[str, Any]:
    base = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "100Gi"}}, "storageClassName": "x"}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "ckpt", "namespace": "ns"},
        "spec": {**base, **spec},
    }


@pytest.mark.parametrize("same", ["107374182400", 107374182400, "102400Mi", "0.09765625Ti", " 100Gi"])
def test_pvc_sizes_compare_by_value(same: Any) -> None:
    assert update_problems(_claim(), _claim(resources={"requests": {"storage": same}})) == []


def test_pvc_one_byte_more_is_growth_and_one_less_is_refused() -> None:
    grow = update_problems(_claim(), _claim(resources={"requests": {"storage": "107374182401"}}))
    assert [(d.code, d.severity) for d in grow] == [("TS443", Severity.WARNING)]
    assert "ns/ckpt" in grow[0].message and "'x'" in grow[0].message
    shrink = update_problems(_claim(), _claim(resources={"requests": {"storage": "107374182399"}}))
    assert [(d.code, d.path) for d in shrink] == [("TS442", "spec.resources.requests.storage")]


def test_pvc_defaults_and_unset_fields() -> None:
    # volumeMode defaults to Filesystem; dataSource and dataSourceRef are filled from each other.
    source = {"kind": "VolumeSnapshot", "name": "snap", "apiGroup": "snapshot.storage.k8s.io"}
    assert update_problems(_claim(dataSource=source), _claim(dataSource=source, dataSourceRef=source)) == []
    assert update_problems(_claim(), _claim(volumeMode="Filesystem")) == []
    # unset -> set may be fine (nothing set it on the cluster yet): a warning; set -> unset is refused.
    unset = _claim()
    del unset["spec"]["storageClassName"]
    assert [(d.code, d.severity) for d in update_problems(unset, _claim())] == [("TS442", Severity.WARNING)]
    assert [(d.code, d.severity) for d in update_problems(_claim(), unset)] == [("TS442", Severity.ERROR)]
    limits = {"requests": {"storage": "1Gi"}, "limits": {"storage": "1Gi"}}
    assert (
        update_problems(_claim(resources=limits), _claim(resources={**limits, "limits": {"storage": "1024Mi"}})) == []
    )
    assert [d.path for d in update_problems(_claim(resources=limits), _claim(resources={**limits, "limits": {}}))] == [
        "spec.resources.limits"
    ]
    vac = update_problems(_claim(volumeAttributesClassName="gold"), _claim())
    assert [d.message for d in vac] == [
        "spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is forbidden"
    ]
    assert update_problems(_claim(volumeAttributesClassName="gold"), _claim(volumeAttributesClassName="silver")) == []


# -- without a CEL engine ----------------------------------------------------------------------------


def test_without_a_cel_engine_one_warning_and_the_other_rules_still_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_engine(name: str = "") -> Any:
        raise ImportError("no module named 'cel_expr_python' nor 'celpy'")

    monkeypatch.setattr(cel, "_DEFAULT", None)
    monkeypatch.setattr(cel, "make_engine", no_engine)
    _, old, new = _read(VERDICTS / "03-tj-trainer-image.yaml")
    new["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "elsewhere"
    found = update_problems(old, new)
    warnings = [d for d in found if d.code == "TS502"]
    assert len(warnings) == 1 and warnings[0].severity is Severity.WARNING
    assert "transition rule" in warnings[0].message and "no CEL engine" in warnings[0].message
    assert [d.code for d in _errors(found)] == ["TS441"]  # Kueue's rule needs no CEL
    assert tree_update_problems([old], [new])[0].problems == found


def test_transition_schema_keeps_only_rules_with_old_self() -> None:
    schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "a": {
                "type": "string",
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}, {"rule": "size(self) > 1"}],
            },
            "b": {"type": "string", "default": "z", "x-kubernetes-validations": [{"rule": "self != 'oldSelfish'"}]},
        },
    }
    filtered = transition_schema(schema)
    assert filtered is not None
    assert filtered["properties"]["a"]["x-kubernetes-validations"] == [{"rule": "self == oldSelf"}]
    assert (
        "x-kubernetes-validations" not in filtered["properties"]["b"] and filtered["properties"]["b"]["default"] == "z"
    )
    assert transition_schema({"type": "object", "properties": {"b": schema["properties"]["b"]}}) is None
    assert updates.transition_schema(schema) is filtered  # memoised
