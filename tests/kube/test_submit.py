"""``trainspec submit`` against the stand-in: what is sent, what is said, what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import CTR, PVC, TJ, cli, write_job
from kube_standin import StandIn


def test_submit_applies_pvc_then_trainjob_server_side_and_strict(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    code, out, err = cli("submit", write_job(tmp_path), "--no-project")
    assert code == 0, err
    assert out.splitlines() == [
        "persistentvolumeclaim/ml-dev/ddp-ckpt-checkpoints created",
        "trainjob.trainer.kubeflow.org/ml-dev/ddp-ckpt created",
    ]
    assert "next: trainspec status ddp-ckpt -n ml-dev --watch" in err
    # The runtime was read, never written.
    assert [r.method for r in api.sent(pattern="clustertrainingruntimes")] == ["GET"]
    patches = api.sent("PATCH")
    assert [p.path for p in patches] == [PVC, TJ]
    for p in patches:
        assert p.query == {"fieldManager": "trainspec", "fieldValidation": "Strict"}
        assert p.headers["Content-Type"] == "application/apply-patch+yaml"
    assert patches[1].body["kind"] == "TrainJob" and patches[1].body["spec"]["trainer"]["numNodes"] == 2
    stored = api.trainjobs[("ml-dev", "ddp-ckpt")]
    assert [m["manager"] for m in stored["metadata"]["managedFields"]] == ["trainspec"]
    assert api.claims[("ml-dev", "ddp-ckpt-checkpoints")]["spec"]["resources"]["requests"]["storage"] == "10Gi"


def test_resubmit_reports_unchanged_then_configured(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    spec = write_job(tmp_path)
    assert cli("submit", spec, "--no-project")[0] == 0
    version = api.trainjobs[("ml-dev", "ddp-ckpt")]["metadata"]["resourceVersion"]
    code, out, _ = cli("submit", spec, "--no-project")
    assert code == 0 and out.splitlines() == [
        "persistentvolumeclaim/ml-dev/ddp-ckpt-checkpoints unchanged",
        "trainjob.trainer.kubeflow.org/ml-dev/ddp-ckpt unchanged",
    ]
    assert api.trainjobs[("ml-dev", "ddp-ckpt")]["metadata"]["resourceVersion"] == version
    Path(spec).write_text(Path(spec).read_text().replace("nodes: 2", "nodes: 3"))
    code, out, _ = cli("submit", spec, "--no-project")
    assert code == 0 and out.splitlines()[1] == "trainjob.trainer.kubeflow.org/ml-dev/ddp-ckpt configured"
    assert api.trainjobs[("ml-dev", "ddp-ckpt")]["spec"]["trainer"]["numNodes"] == 3


def test_dry_run_is_a_server_dry_run_and_stores_nothing(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    code, out, err = cli("submit", write_job(tmp_path), "--no-project", "--dry-run")
    assert code == 0, err
    assert out.splitlines() == [
        "persistentvolumeclaim/ml-dev/ddp-ckpt-checkpoints created (server dry run)",
        "trainjob.trainer.kubeflow.org/ml-dev/ddp-ckpt created (server dry run)",
    ]
    assert all(p.query["dryRun"] == "All" for p in api.sent("PATCH"))
    assert not api.trainjobs and not api.claims


def test_missing_runtime_is_refused_before_anything_is_applied(api: StandIn, tmp_path: Path) -> None:
    code, out, err = cli("submit", write_job(tmp_path), "--no-project")
    assert code == 1 and out == ""
    assert "error[TS712]" in err and "ClusterTrainingRuntime 'trainspec-torch'" in err
    assert "--with-runtimes" in err and "job.yaml:1:1" in err
    assert not api.sent("PATCH")


def test_with_runtimes_applies_the_compiled_runtime_first(api: StandIn, tmp_path: Path) -> None:
    code, out, err = cli("submit", write_job(tmp_path), "--no-project", "--with-runtimes")
    assert code == 0, err
    assert out.splitlines()[0] == "clustertrainingruntime.trainer.kubeflow.org/trainspec-torch created"
    assert [p.path for p in api.sent("PATCH")] == [CTR, PVC, TJ]
    assert ("ClusterTrainingRuntime", "", "trainspec-torch") in api.runtimes


def test_an_unknown_field_is_rejected_with_the_real_servers_answer_and_not_retried(api: StandIn) -> None:
    from kube_standin import _schema, unknown_field

    body = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "ddp-cpu", "namespace": "ml-dev"},
        "spec": {"runtimeRef": {"name": "x"}, "trainer": {"numNodes": 2, "gpus": 8}},
    }
    assert unknown_field(body, _schema("trainer.kubeflow.org_trainjobs.json")) == ".spec.trainer.gpus"
    from trainspec.kube.client import ApiException, KubeApi
    from trainspec.kube.retry import RetryPolicy, call, is_transient

    kube = KubeApi.connect()
    with pytest.raises(ApiException) as caught:
        call(lambda: kube.apply(body), RetryPolicy(base=0.001), what="apply", log=lambda m: None)
    assert caught.value.status == 500 and not is_transient(caught.value)
    assert len(api.sent("PATCH")) == 1  # a verdict, not server trouble: sent once
    from trainspec.kube.session import api_diagnostic

    diagnostic = api_diagnostic(caught.value, kube, what="apply it", file="job.yaml", line=3, column=1)
    assert diagnostic.code == "TS714" and diagnostic.path == "spec.trainer.gpus"
    assert (
        "failed to create typed patch object (ml-dev/ddp-cpu; trainer.kubeflow.org/v1alpha1, Kind=TrainJob): "
        ".spec.trainer.gpus: field not declared in schema"
    ) in diagnostic.message


def test_a_field_owned_by_another_manager_is_a_conflict(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    spec = write_job(tmp_path)
    assert cli("submit", spec, "--no-project")[0] == 0
    from trainspec.kube.client import KubeApi

    # Kueue admitting the job (suspend: false) is no conflict: trainspec never sets suspend.
    KubeApi.connect().apply(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "ddp-ckpt", "namespace": "ml-dev"},
            "spec": {"suspend": False},
        },
        manager="kueue-admission",
        force=True,
    )
    code, _, err = cli("submit", spec, "--no-project")
    assert code == 0, err
    # Another manager taking a field trainspec sets is.
    KubeApi.connect().apply(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "ddp-ckpt", "namespace": "ml-dev"},
            "spec": {"activeDeadlineSeconds": 60},
        },
        manager="someone-else",
        force=True,
    )
    code, _, err = cli("submit", spec, "--no-project")
    assert code == 1 and "error[TS714]" in err
    # kube-apiserver names an Apply manager without "using <apiVersion>" (that is for Update managers).
    assert 'conflict with "someone-else": .spec.activeDeadlineSeconds' in err
    assert "--force-conflicts" in err
    code, _out, err = cli("submit", spec, "--no-project", "--force-conflicts")
    assert code == 0, err
    assert api.sent("PATCH")[-1].query["force"] == "true"


def test_other_engines_are_not_supported_yet(api: StandIn, tmp_path: Path) -> None:
    text = Path(__file__).parents[2].joinpath("examples", "elastic-pytorchjob.yaml").read_text()
    code, _, err = cli("submit", write_job(tmp_path, text), "--no-project")
    assert code == 1 and "error[TS713]" in err and "not supported yet" in err
    assert not api.requests  # refused before connecting


def test_no_cluster_is_a_diagnostic_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TRAINSPEC_KUBE_API", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing-kubeconfig"))
    code, _, err = cli("submit", write_job(tmp_path), "--no-project")
    assert code == 1 and "error[TS711]" in err and "Traceback" not in err
