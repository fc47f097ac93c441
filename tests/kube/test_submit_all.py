"""``trainspec submit`` applies everything ``compile`` emits for a job (issue 22, item 3): in a safe
order, each with server-side apply, or says per object why not; ``-n`` as kubectl has it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import JOB_YAML, RUNS_YAML, cli, write_job
from kube_standin import NOW, StandIn

from trainspec.api import compile as compile_specs
from trainspec.kube.submit_plan import JOB, OBSERVABILITY, PREREQUISITES, SHARED, JobObjects, key_of, select_jobs

needs_kube = pytest.mark.skipif(
    importlib.util.find_spec("kubernetes") is None,
    reason="the kube extra is not installed: pip install 'trainspec[kube]'",
)
EXAMPLES = Path(__file__).parents[2] / "examples"
OBSERVED = EXAMPLES / "observability"
#: Every example whose jobs run on Kubeflow Trainer, as a directory or file compile takes alone.
TRAINER_EXAMPLES = [
    "ddp-cpu.yaml",
    "deepspeed.yaml",
    "jax.yaml",
    "upstream-torch.yaml",
    "llama-pretrain",
    "llama-sft",
    "observability",
    "train_ddp",
    "kfp/cpu-job.yaml",
]


def _kinds(lines: list[str]) -> list[str]:
    return [line.split("/", 1)[0] for line in lines]


@pytest.mark.parametrize("example", TRAINER_EXAMPLES)
def test_submit_takes_exactly_what_compile_emits_for_each_example(example: str) -> None:
    result = compile_specs(EXAMPLES / example, project=None)
    assert result.ok, result.diagnostics
    emitted = {key_of(d) for d in yaml.safe_load_all(result.to_yaml()) if isinstance(d, dict)}
    jobs = select_jobs(result, None)
    taken = {key_of(obj) for job in jobs for _, obj in job.objects()}
    runtimes = {key_of(job.runtime) for job in jobs if job.runtime is not None}
    # Everything but runtimes is some job's; the runtimes a job uses come with it (--with-runtimes).
    # A runtime no job uses (the base of a sharded variant) is nobody's to apply.
    assert taken | runtimes <= emitted
    assert {k for k in emitted - taken - runtimes if k[1] != "ClusterTrainingRuntime"} == set()
    for job in jobs:
        owned = [obj for _, obj in job.objects()]
        assert all((o["metadata"].get("labels") or {}).get("trainspec.dev/job") == job.job for o in owned)


def _fabricated() -> JobObjects:
    def obj(api_version: str, kind: str, name: str, **labels: str) -> dict[str, Any]:
        return {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": name, "namespace": "ml-dev", "labels": {"trainspec.dev/job": "j", **labels}},
        }

    rbac = "rbac.authorization.k8s.io/v1"
    return JobObjects(
        "j-abc123",
        "ml-dev",
        obj("trainer.kubeflow.org/v1alpha1", "TrainJob", "j-abc123") | {"spec": {"runtimeRef": {"name": "rt"}}},
        claims=[obj("v1", "PersistentVolumeClaim", "j-checkpoints")],
        extras=[
            obj("monitoring.coreos.com/v1", "PodMonitor", "j"),
            obj("v1", "ConfigMap", "j-dashboard", grafana_dashboard="1"),
            obj(rbac, "RoleBinding", "j"),
            obj("v1", "ConfigMap", "j-stage"),
            obj(rbac, "ClusterRole", "j"),
            obj("scheduling.k8s.io/v1", "PriorityClass", "high"),
            obj("kueue.x-k8s.io/v1beta2", "LocalQueue", "team"),
            obj("example.com/v1", "Gadget", "j"),
            obj(rbac, "Role", "j"),
            obj("v1", "ServiceAccount", "j"),
        ],
        job="j",
    )


def test_the_order_prerequisites_then_the_job_then_observability_and_never_shared_kinds() -> None:
    order = [(stage, o["kind"], o["metadata"]["name"]) for stage, o in _fabricated().objects()]
    assert order == [
        (PREREQUISITES, "ServiceAccount", "j"),
        (PREREQUISITES, "Role", "j"),
        (PREREQUISITES, "RoleBinding", "j"),
        (PREREQUISITES, "ConfigMap", "j-stage"),
        (PREREQUISITES, "PersistentVolumeClaim", "j-checkpoints"),
        (JOB, "TrainJob", "j-abc123"),
        (OBSERVABILITY, "PodMonitor", "j"),
        (OBSERVABILITY, "ConfigMap", "j-dashboard"),
        (SHARED, "ClusterRole", "j"),
        (SHARED, "PriorityClass", "high"),
        (SHARED, "LocalQueue", "team"),
        (SHARED, "Gadget", "j"),
    ]


@needs_kube
def test_rbac_and_configmaps_are_applied_and_shared_kinds_skipped_with_ts731(api: StandIn) -> None:
    from trainspec.kube.client import KubeApi
    from trainspec.kube.submit import submit

    api.add_cluster_runtime("rt")
    said: list[str] = []
    outcomes = submit(KubeApi.connect(), [_fabricated()], say=said.append)
    assert [line.split(" ", 1)[0] for line in said[:8]] == [
        "serviceaccount/ml-dev/j",
        "role.rbac.authorization.k8s.io/ml-dev/j",
        "rolebinding.rbac.authorization.k8s.io/ml-dev/j",
        "configmap/ml-dev/j-stage",
        "persistentvolumeclaim/ml-dev/j-checkpoints",
        "trainjob.trainer.kubeflow.org/ml-dev/j-abc123",
        "podmonitor.monitoring.coreos.com/ml-dev/j",
        "configmap/ml-dev/j-dashboard",
    ]
    assert all(line.endswith(" created") for line in said[:8])
    assert said[8:] == [
        f"{what} skipped: cluster-scoped or shared, submit never creates or changes it; a cluster admin applies it "
        "(kubectl apply)"
        for what in (
            "clusterrole.rbac.authorization.k8s.io/ml-dev/j",
            "priorityclass.scheduling.k8s.io/ml-dev/high",
            "localqueue.kueue.x-k8s.io/ml-dev/team",
            "gadget.example.com/ml-dev/j",
        )
    ]
    assert [o.diagnostic.code for o in outcomes if o.diagnostic is not None] == ["TS731"] * 4
    assert set(api.objects) == {"serviceaccounts", "roles", "rolebindings", "configmaps", "podmonitors"}
    for p in api.sent("PATCH"):
        assert p.query == {"fieldManager": "trainspec", "fieldValidation": "Strict"}
        assert p.headers["Content-Type"] == "application/apply-patch+yaml"
    assert not api.sent(pattern="clusterroles|priorityclasses|localqueues|gadgets")


@needs_kube
def test_submit_applies_the_podmonitor_and_dashboard_after_the_trainjob(api: StandIn) -> None:
    code, out, err = cli("submit", str(OBSERVED), "--no-project", "--with-runtimes")
    assert code == 0, err
    ((_, run),) = api.trainjobs
    assert out.splitlines() == [
        "clustertrainingruntime.trainer.kubeflow.org/torch-a100-observed created",
        f"trainjob.trainer.kubeflow.org/team-vision/{run} created",
        "podmonitor.monitoring.coreos.com/team-vision/vit-pretrain created",
        "configmap/team-vision/vit-pretrain-dashboard created",
    ]
    # What was applied is what compile emits, byte for byte.
    code, text, _ = cli("compile", str(OBSERVED), "--no-project", "-o", "-")
    emitted = {key_of(d): d for d in yaml.safe_load_all(text) if isinstance(d, dict)}
    sent = {key_of(p.body): p.body for p in api.sent("PATCH")}
    assert sent == emitted
    monitor = api.objects["podmonitors"][("team-vision", "vit-pretrain")]
    assert [m["manager"] for m in monitor["metadata"]["managedFields"]] == ["trainspec"]
    dashboard = api.objects["configmaps"][("team-vision", "vit-pretrain-dashboard")]
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    code, out, _ = cli("submit", str(OBSERVED), "--no-project", "--with-runtimes")
    assert code == 0 and all(line.endswith(" unchanged") for line in out.splitlines())


@needs_kube
def test_without_the_prometheus_operator_the_podmonitor_is_skipped_and_the_job_submitted(api: StandIn) -> None:
    api.unserved.add("podmonitors")
    api.add_cluster_runtime("torch-a100-observed")
    code, out, err = cli("submit", str(OBSERVED), "--no-project")
    assert code == 0, err
    assert out.splitlines()[1:] == [
        (
            "podmonitor.monitoring.coreos.com/team-vision/vit-pretrain skipped: the cluster does not serve PodMonitor "
            "(monitoring.coreos.com/v1); the job is submitted without it"
        ),
        "configmap/team-vision/vit-pretrain-dashboard created",
    ]
    assert _kinds(out.splitlines())[0] == "trainjob.trainer.kubeflow.org" and len(api.trainjobs) == 1
    assert "warning[TS730]" in err and "podmonitors.monitoring.coreos.com is not installed" in err
    assert "Prometheus Operator" in err and "observability.podMonitor: false" in err
    assert "job.yaml:" in err  # located at the job's spec
    assert not api.sent("PATCH", "podmonitors")


@needs_kube
def test_a_dry_run_covers_every_object_and_stores_none(api: StandIn) -> None:
    api.add_cluster_runtime("torch-a100-observed")
    code, out, err = cli("submit", str(OBSERVED), "--no-project", "--dry-run")
    assert code == 0, err
    assert _kinds(out.splitlines()) == [
        "trainjob.trainer.kubeflow.org",
        "podmonitor.monitoring.coreos.com",
        "configmap",
    ]
    assert all(line.endswith(" created (server dry run)") for line in out.splitlines())
    assert len(api.sent("PATCH")) == 3 and all(p.query["dryRun"] == "All" for p in api.sent("PATCH"))
    assert not api.trainjobs and not api.objects.get("podmonitors") and not api.objects.get("configmaps")


@needs_kube
def test_an_object_being_deleted_is_ts722_not_unchanged_and_nothing_is_applied(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    spec = write_job(tmp_path)
    assert cli("submit", spec, "--no-project")[0] == 0
    # cancel --no-wait just ran: the TrainJob stays until its JobSet and pods are gone.
    meta = api.trainjobs[("ml-dev", "ddp-ckpt")]["metadata"]
    meta.update(deletionTimestamp=NOW, finalizers=["foregroundDeletion"])
    patches = len(api.sent("PATCH"))
    code, out, err = cli("submit", spec, "--no-project")
    assert code == 1 and "unchanged" not in out and out == ""
    assert "error[TS722]" in err and f"TrainJob ml-dev/ddp-ckpt is being deleted (since {NOW}" in err
    assert "trainspec cancel ddp-ckpt -n ml-dev" in err
    assert len(api.sent("PATCH")) == patches  # not even the claim before it


@needs_kube
def test_namespace_option_places_a_job_without_one_as_kubectl_does(
    api: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.add_cluster_runtime("trainspec-torch")
    unplaced = write_job(tmp_path, RUNS_YAML.replace("  namespace: ml-dev\n", ""))
    code, out, err = cli("submit", unplaced, "--no-project", "-n", "team-a")
    assert code == 0, err
    assert {ns for ns, _ in api.trainjobs} == {"team-a"} and ("team-a", "ddp-ckpt-checkpoints") in api.claims
    assert "trainspec status ddp-ckpt-" in err and " -n team-a --watch" in err
    # Without -n: $TRAINSPEC_NAMESPACE (else the context's namespace), where status looks.
    monkeypatch.setenv("TRAINSPEC_NAMESPACE", "team-b")
    assert cli("submit", unplaced, "--no-project")[0] == 0
    assert {ns for ns, _ in api.trainjobs} == {"team-a", "team-b"}
    # A spec's own namespace wins over the environment, and must agree with -n.
    placed = write_job(tmp_path, JOB_YAML)
    assert cli("submit", placed, "--no-project")[0] == 0 and ("ml-dev", "ddp-ckpt") in api.trainjobs
    patches = len(api.sent("PATCH"))
    code, out, err = cli("submit", placed, "--no-project", "-n", "team-a")
    assert code == 1 and out == "" and "error[TS732]" in err
    assert "the namespace from the provided object 'ml-dev' does not match the namespace 'team-a'" in err
    assert "job.yaml:5:" in err  # at metadata.namespace
    code, _, err = cli("submit", placed, "--no-project", "-n", "Team_A")
    assert code == 2 and "error[TS732]" in err and "not a namespace name" in err
    assert len(api.sent("PATCH")) == patches


@needs_kube
def test_a_refused_observability_object_fails_the_command_after_the_rest_is_applied(api: StandIn) -> None:
    api.add_cluster_runtime("torch-a100-observed")
    api.fail("PATCH", "podmonitors", 403)
    code, out, err = cli("submit", str(OBSERVED), "--no-project")
    # As kubectl apply: the job and the dashboard are applied, then the refusal is the exit status.
    assert code == 1
    assert _kinds(out.splitlines()) == ["trainjob.trainer.kubeflow.org", "configmap"]
    assert len(api.trainjobs) == 1 and ("team-vision", "vit-pretrain-dashboard") in api.objects["configmaps"]
    assert "error[TS717]" in err and "podmonitor" in err
    assert "next: trainspec status" not in err
