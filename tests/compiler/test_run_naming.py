"""A job's run: its id, name and labels are decided from what it emits (trainspec.compiler.runs)."""

from __future__ import annotations

from pathlib import Path

import yaml

from trainspec.compiler.pipeline import Options, run
from trainspec.compiler.runs import PLACEHOLDER, run_digest, substitute
from trainspec.k8s import EnvVar, ObjectMeta

ROOT = Path(__file__).resolve().parents[2]
JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: bert, namespace: ml, labels: {{team: nlp}}}}
spec:
  runtime: trainspec-torch
  image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
  command: [torchrun, train.py]
  nodes: 2
  queue: q
{extra}"""


def compiled(tmp_path: Path, extra: str = "", name: str = "job.yaml", engine: str = "trainer") -> dict:
    path = tmp_path / name
    path.write_text(JOB.format(extra=extra))
    result = run([str(path)], Options(project=None, target={"engine": engine}))
    assert result.ok, [d.message for d in result.diagnostics]
    return next(d for d in yaml.safe_load_all(result.to_yaml()) if d["kind"] in ("TrainJob", "RayJob", "PyTorchJob"))


def test_the_run_object_is_named_and_labelled_after_its_job_and_run(tmp_path: Path) -> None:
    obj = compiled(tmp_path)
    labels = obj["metadata"]["labels"]
    assert obj["metadata"]["name"] == f"bert-{labels['trainspec.dev/run']}"
    assert labels["trainspec.dev/job"] == "bert" and len(labels["trainspec.dev/run"]) == 6
    env = {e["name"]: e.get("value") for e in obj["spec"]["trainer"]["env"]}
    assert env["TRAINSPEC_RUN_ID"] == labels["trainspec.dev/run"]
    assert PLACEHOLDER not in yaml.safe_dump(obj)  # every placeholder was put in place


def test_the_same_spec_anywhere_is_the_same_run(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "deep").mkdir(parents=True)
    first = compiled(tmp_path / "a")
    second = compiled(tmp_path / "b" / "deep", name="other-name.yaml")
    assert first == second


def test_what_changes_the_run_and_what_does_not(tmp_path: Path) -> None:
    base = compiled(tmp_path)["metadata"]["name"]
    for extra, same in [
        ("  args: [--lr, '1e-4']\n", False),
        ("  maxRunTime: 1h\n", False),
        ("  priority: high\n", False),  # Kueue refuses adding a priority class to a running job
        ("  rerun: 1\n", False),
        ("  rerun: 0\n", True),
        ("  podAnnotations: {a: b}\n", False),  # the pods change
    ]:
        name = compiled(tmp_path, extra)["metadata"]["name"]
        assert (name == base) is same, extra
    prioritized = compiled(tmp_path, "  priority: high\n")["metadata"]["name"]
    assert compiled(tmp_path, "  priority: low\n")["metadata"]["name"] == prioritized  # another class: in place


def test_labels_and_annotations_of_the_job_update_the_run_in_place(tmp_path: Path) -> None:
    base = compiled(tmp_path)
    path = tmp_path / "labelled.yaml"
    path.write_text(JOB.format(extra="").replace("labels: {team: nlp}", "labels: {team: nlp, owner: ana}"))
    result = run([str(path)], Options(project=None))
    obj = next(d for d in yaml.safe_load_all(result.to_yaml()) if d["kind"] == "TrainJob")
    assert obj["metadata"]["name"] == base["metadata"]["name"]


def test_runs_replace_keeps_the_name_and_asks_the_controllers_to_recreate(tmp_path: Path) -> None:
    obj = compiled(tmp_path, "  runs: replace\n")
    assert obj["metadata"]["name"] == "bert"
    annotations = obj["metadata"]["annotations"]
    assert annotations["argocd.argoproj.io/sync-options"] == "Force=true,Replace=true"
    assert annotations["kustomize.toolkit.fluxcd.io/force"] == "enabled"
    assert obj["metadata"]["labels"]["trainspec.dev/job"] == "bert"


def test_every_engine_names_its_run(tmp_path: Path) -> None:
    for engine, kind in (("ray", "RayJob"), ("training-operator", "PyTorchJob")):
        obj = compiled(tmp_path, engine=engine)
        assert obj["kind"] == kind
        assert obj["metadata"]["name"] == f"bert-{obj['metadata']['labels']['trainspec.dev/run']}"


def test_the_digest_is_of_the_spec_and_the_kueue_labels_only() -> None:
    doc = {"apiVersion": "v", "kind": "K", "metadata": {"name": "x", "labels": {"team": "a"}}, "spec": {"n": 1}}
    same = {**doc, "metadata": {"name": "y", "labels": {"team": "b"}, "annotations": {"a": "b"}}}
    assert run_digest(doc) == run_digest(same)
    queued = {**doc, "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "q"}}}
    assert run_digest(doc) != run_digest(queued)
    assert run_digest(doc) != run_digest(doc, rerun=1)
    assert run_digest({**doc, "spec": {"n": 2}}) != run_digest(doc)


def test_substitute_replaces_whole_strings_only_and_keeps_what_is_unchanged() -> None:
    meta = ObjectMeta(name="a", labels={"k": PLACEHOLDER, "other": f"{PLACEHOLDER}x"})
    out = substitute(meta, PLACEHOLDER, "abc123")
    assert out.labels == {"k": "abc123", "other": f"{PLACEHOLDER}x"}
    env = [EnvVar(name="A", value="1")]
    assert substitute(env, PLACEHOLDER, "z") is env  # nothing to replace: the same object back


def test_the_run_id_is_the_lowercased_base32_of_the_digest() -> None:
    """The id is the first characters of the digest's RFC 4648 base32: ids of existing runs must
    not change when the encoding is computed another way."""
    import base64
    import hashlib
    import json

    from trainspec.compiler.runs import RUN_ID_LENGTH, run_digest

    for n in range(300):
        document = {"apiVersion": "v", "kind": "TrainJob", "metadata": {"namespace": f"n{n}"}, "spec": {"x": n}}
        defining = {
            "apiVersion": "v",
            "kind": "TrainJob",
            "namespace": f"n{n}",
            "labels": {},
            "prioritized": False,
            "spec": {"x": n},
        }
        canonical = json.dumps(defining, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        expected = base64.b32encode(hashlib.sha256(canonical).digest()).decode().lower()[:RUN_ID_LENGTH]
        assert run_digest(document) == expected
