"""The checker's one entry point, ``run_check(CheckRequest) -> CheckReport``, and where its CRDs
come from: ``crds`` given, ``$TRAINSPEC_CRDS_DIR``, else the data shipped for the target."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.checkcmd.conftest import (
    CLUSTER,
    KUEUE,
    MINIMAL_CLUSTER,
    RUNTIME_SPEC,
    RUNTIMES,
    check,
    job_spec,
    line_of,
)
from tests.checkcmd.test_checkcmd_crds import FAKE_TRAINJOB_CRD, V21_TRAINJOB
from trainspec.check import CheckReport, CheckRequest, CheckUsageError, CrdSource, run_check
from trainspec.check.request import pipeline_options
from trainspec.cli.report import as_json
from trainspec.compiler.pipeline import Options, Stop

# A JobSet with a field its CRD does not have (line 9) and an int32 overflow (line 7).
BAD_JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: team-a}
spec:
  replicatedJobs:
  - name: workers
    replicas: 4294967296
    template: {spec: {template: {spec: {containers: [{name: c, image: example.com/c:1}]}}}}
  speed: fast
"""


def _codes(report: CheckReport, *only: str) -> set[tuple[str, str]]:
    return {(d.code, d.path) for d in report.diagnostics if not only or d.code in only}


CRD_CODES = ("TS500", "TS501", "TS502", "TS504")


def test_run_check_gives_what_the_cli_prints() -> None:
    jobs = str(CLUSTER / "jobs" / "fail")
    request = CheckRequest([str(RUNTIMES), jobs], cluster=[str(KUEUE)])
    report = run_check(request)
    status, printed = check(str(RUNTIMES), jobs, "--cluster", str(KUEUE))
    assert report.exit_code == status == 1 and not report.ok
    assert [as_json(d) for d in report.diagnostics] == printed
    assert report.files > 5 and report.crds.origin == "shipped"
    assert report.result is not None and report.result.target is not None


def test_request_takes_lists_single_paths_and_options() -> None:
    request = CheckRequest(
        "examples/ddp-cpu.yaml",
        crds=["a"],
        cluster="b",
        target={"trainer": (2, 2)},
        options=Options(project=None, stop=Stop.EMIT),
    )
    assert request.paths == ("examples/ddp-cpu.yaml",) and request.crds == ("a",) and request.cluster == ("b",)
    options = pipeline_options(request)
    assert options.stop is Stop.LOWER and options.target == {"trainer": (2, 2)} and options.project is None
    assert CheckRequest(["x"]).crds is None  # the default: environment, then shipped data


def test_missing_crds_or_cluster_path_is_a_usage_error() -> None:
    with pytest.raises(CheckUsageError, match="--crds no/such/crds: no such file"):
        run_check(CheckRequest(["examples/ddp-cpu.yaml"], crds=["no/such/crds"]))
    with pytest.raises(CheckUsageError, match="--cluster no/such/dir"):
        run_check(CheckRequest(["examples/ddp-cpu.yaml"], cluster=["no/such/dir"]))


def test_shipped_crds_check_jobsets_and_kueue_objects(write) -> None:
    """No --crds: the shipped data covers JobSet and Kueue kinds as well as Trainer's."""
    manifest = write("js.yaml", BAD_JOBSET)
    report = run_check(CheckRequest([str(manifest)]))
    assert report.crds.origin == "shipped"
    assert {("TS500", "spec.speed"), ("TS500", "spec.replicatedJobs[0].replicas")} <= _codes(report)
    cluster = write(
        "cluster/kueue.yaml",
        MINIMAL_CLUSTER.replace(
            '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n',
            '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n  cohort: pool\n',
        ),
    )
    write("specs/runtime.yaml", RUNTIME_SPEC)
    job = write("specs/job.yaml", job_spec(2))
    status, found = check(str(job.parent), "--cluster", str(cluster.parent))
    assert status == 1
    line, column = line_of(cluster, "  cohort: pool", "cohort")
    assert {(d["code"], d["file"], d["line"], d["column"]) for d in found} >= {("TS500", str(cluster), line, column)}


def test_crds_given_replace_the_shipped_data(write) -> None:
    crd_dir = write("crds/trainjob.yaml", FAKE_TRAINJOB_CRD).parent
    manifest = write("js.yaml", BAD_JOBSET)
    report = run_check(CheckRequest([str(manifest)], crds=[str(crd_dir)]))
    assert report.crds.origin == "option"
    assert _codes(report, *CRD_CODES) == {("TS504", "")}  # no JobSet CRD among those given: not the shipped one


def test_crds_from_the_environment_replace_the_shipped_data(write, monkeypatch: pytest.MonkeyPatch) -> None:
    crd_dir = write("crds/trainjob.yaml", FAKE_TRAINJOB_CRD).parent
    monkeypatch.setenv("TRAINSPEC_CRDS_DIR", str(crd_dir))
    report = run_check(CheckRequest([str(write("js.yaml", BAD_JOBSET))]))
    assert report.crds.origin == "environment" and _codes(report, *CRD_CODES) == {("TS504", "")}


def test_no_crds_at_all_when_asked(write) -> None:
    report = run_check(CheckRequest([str(write("js.yaml", BAD_JOBSET))], crds=()))
    assert report.crds == CrdSource() and _codes(report, *CRD_CODES) == set()


def test_other_target_versions_are_not_judged_by_the_shipped_data(write) -> None:
    """A Trainer 2.1 TrainJob with a 2.1 target: the 2.3 schema must not reject its 2.1 fields;
    one warning says which kinds went unchecked and why."""
    manifest = write("tj.yaml", V21_TRAINJOB)
    _status, found = check(str(manifest), "--target", "trainer=2.1,kueue=0.16")
    assert "TS500" not in {d["code"] for d in found}
    [warning] = [d for d in found if d["code"] == "TS524"]
    assert warning["severity"] == "warning" and warning["file"] == "--crds"
    assert "Kubeflow Trainer 2.3" in warning["message"] and "TrainJob manifests" in warning["message"]
    assert "--crds" in warning["hint"]
    # JobSet and Kueue are skipped too, but nothing of theirs is there: only Trainer's kinds are named.
    _, found = check("examples/ddp-cpu.yaml", "--target", "trainer=2.1,kueue=0.16")
    [warning] = [d["message"] for d in found if d["code"] == "TS524"]
    assert "Kubeflow Trainer 2.3" in warning and "ClusterTrainingRuntime, TrainJob manifests" in warning


def test_kueue_bundle_follows_the_kueue_target(write) -> None:
    cluster = write(
        "cluster/kueue.yaml",
        MINIMAL_CLUSTER.replace(
            '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n',
            '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n  cohort: pool\n',
        ),
    )
    write("specs/runtime.yaml", RUNTIME_SPEC)
    job = write("specs/job.yaml", job_spec(2))
    report = run_check(
        CheckRequest([str(job.parent)], cluster=[str(cluster.parent)], target={"trainer": (2, 3), "kueue": (0, 18)})
    )
    assert [b.name for b in report.crds.shipped] == [
        "trainer",
        "jobset",
        "kuberay",
        "training-operator",
        "mpi-operator",
    ]
    assert "TS500" not in {d.code for d in report.diagnostics}
    [warning] = [d for d in report.diagnostics if d.code == "TS524"]
    assert "Kueue 0.19" in warning.message and "ClusterQueue" in warning.message


def test_the_cli_only_feeds_run_check(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """``trainspec check`` turns its arguments into a request and prints the report it gets back."""
    from trainspec.check import request as request_module
    from trainspec.cli.main import main
    from trainspec.dsl.diagnostics import Diagnostic

    seen: list[CheckRequest] = []

    def fake(request: CheckRequest) -> CheckReport:
        seen.append(request)
        return CheckReport((Diagnostic(code="TS503", message="from the fake", file="x.yaml", line=2, column=3),), 7)

    monkeypatch.setattr(request_module, "run_check", fake)
    status = main(
        [
            "check",
            "a.yaml",
            "b/",
            "--crds",
            "c1",
            "--crds",
            "c2",
            "--cluster",
            "k",
            "--target",
            "trainer=2.2",
            "--no-project",
            "--values",
            "v.yaml",
        ]
    )
    assert status == 1
    assert "x.yaml:2:3: error[TS503]: from the fake" in capsys.readouterr().out
    (request,) = seen
    assert (request.paths, request.crds, request.cluster) == (("a.yaml", "b/"), ("c1", "c2"), ("k",))
    assert request.options.target == {"trainer": (2, 2)} and request.options.project is None
    assert request.options.values_files == ("v.yaml",) and request.options.stop is Stop.LOWER
    main(["check", "a.yaml"])
    assert seen[-1].crds is None  # no --crds: the checker decides (environment, then shipped data)


def test_cli_module_is_argument_parsing_only() -> None:
    """The checking logic lives in trainspec.check; the CLI module keeps parsing and printing."""
    import trainspec.cli.check as cli

    source = Path(cli.__file__).read_text(encoding="utf-8")
    assert "def run(" in source and "run_check(" in source
    for logic in ("check_manifest", "check_webhooks", "preflight", "read_objects", "FieldSources", "lookup("):
        assert logic not in source, logic
    assert isinstance(cli.add_arguments(argparse.ArgumentParser()), type(None))
