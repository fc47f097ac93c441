"""``trainspec migrate``: what each field becomes, located warnings for what is not carried, the
engine of the result, the errors, the writer's safety and the command line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from trainspec.cli.main import main
from trainspec.dsl.diagnostics import CODES, Severity
from trainspec.migrate import migrate
from trainspec.migrate.writer import written_by_us

HERE = Path(__file__).parent / "manifests"


def write(tmp_path: Path, text: str, name: str = "job.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def docs(result) -> dict[str, dict]:
    return {d["kind"]: d for f in result.files for d in f.documents}


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: small}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: img:1
              command: [torchrun, t.py]
              workingDir: /src
              env:
                - {name: WANDB_API_KEY, value: 0123456789abcdef0123456789abcdef}
                - {name: PET_NNODES, value: "2"}
                - name: POD_IP
                  valueFrom: {fieldRef: {fieldPath: status.podIP}}
"""


def test_codes_are_registered() -> None:
    assert {f"TS54{i}" for i in range(9)} <= set(CODES)


def test_fields_not_carried_are_located_warnings(tmp_path: Path) -> None:
    path = write(tmp_path, PYTORCHJOB)
    result = migrate([path])
    assert result.ok
    found = {d.path: d for d in result.diagnostics}
    base = "spec.pytorchReplicaSpecs.Master.template.spec.containers[0]"
    working = found[f"{base}.workingDir"]
    assert (working.code, working.severity, working.line) == ("TS540", Severity.WARNING, line_of(path, "workingDir"))
    assert working.file == str(path) and working.column == 27
    # A credential never lands in a spec; a name the operator sets, or a fieldRef, is not carried either.
    assert found[f"{base}.env[0]"].code == "TS540" and "Secret" in found[f"{base}.env[0]"].hint
    assert found[f"{base}.env[1]"].code == "TS540" and found[f"{base}.env[2]"].code == "TS540"
    assert "0123456789abcdef" not in result.to_yaml()
    assert "env" not in docs(result)["TrainingJob"]["spec"]


def test_every_input_field_is_carried_or_warned(tmp_path: Path) -> None:
    """An unknown field anywhere (here: three levels deep) is a warning, never silently dropped."""
    text = PYTORCHJOB.replace("workingDir: /src", "lifecycle: {preStop: {exec: {command: [x]}}}")
    result = migrate([write(tmp_path, text)])
    assert [d.path for d in result.diagnostics if d.path.endswith("lifecycle")] == [
        "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].lifecycle"
    ]


def test_what_each_field_becomes() -> None:
    result = migrate([HERE / "multinode-nccl.yaml"])
    assert result.ok
    runtime, job = docs(result)["Runtime"]["spec"], docs(result)["TrainingJob"]["spec"]
    assert runtime["resourcesPerNode"] == {"gpu": 8, "cpu": 96, "memory": "1600Gi"}
    assert runtime["network"] == {"env": {"NCCL_DEBUG": "WARN", "NCCL_IB_HCA": "mlx5"}, "resources": {"rdma/ib": 8}}
    assert runtime["sharedMemory"] == "64Gi" and runtime["restarts"] == {"max": 3}
    assert "engine" not in runtime  # --target trainer (the default): Trainer can run it
    assert job["queue"] == "gpu-queue" and job["priority"] == "high" and job["maxRunTime"] == "72h"
    assert job["checkpoint"] == {"path": "/checkpoints", "claimName": "llama-ckpt"}
    assert job["secretEnv"] == {"HF_TOKEN": {"secret": "hf", "key": "token"}}
    assert job["nodes"] == 4 and "procsPerNode" not in job  # 8 = the GPUs per node, the default


def test_default_target_is_trainer_except_what_trainer_cannot_run() -> None:
    result = migrate([HERE / "elastic.yaml", HERE / "ray-gpu.yaml", HERE / "deepspeed.yaml"])
    engines = {
        f.name: next(d for d in f.documents if d["kind"] == "Runtime")["spec"].get("engine") for f in result.files
    }
    assert engines == {"elastic.yaml": "training-operator", "ray-gpu.yaml": "ray", "deepspeed.yaml": None}
    kept = sorted(Path(d.file).name for d in result.diagnostics if d.code == "TS546")
    assert kept == ["elastic.yaml", "ray-gpu.yaml"]
    source = migrate([HERE / "deepspeed.yaml"], target="source")
    assert docs(source)["Runtime"]["spec"]["engine"] == "training-operator"


def test_the_result_compiles_to_trainer_by_default() -> None:
    from trainspec.compiler.pipeline import Options, run
    from trainspec.dsl.load.spec_sources import load_string

    for name in ("single-node", "multinode-nccl", "gloo", "mpi", "deepspeed"):
        result = migrate([HERE / f"{name}.yaml"])
        specs, _ = load_string(result.files[0].text, "m.yaml")
        compiled = run(specs, Options(project=None))
        assert compiled.ok, (name, [d.message for d in compiled.diagnostics if d.is_error])
        assert "TrainJob" in {o.kind for o in compiled.objects()}


def test_output_is_deterministic_and_minimal() -> None:
    first = migrate([HERE / "mpi.yaml", HERE / "gloo.yaml"]).to_yaml()
    assert first == migrate([HERE / "gloo.yaml", HERE / "mpi.yaml"]).to_yaml()
    assert "scope:" not in first and "keep:" not in first  # defaults are left out
    assert "sshAuthMountPath: /home/mpiuser/.ssh" in first


def test_a_manifest_that_cannot_be_migrated_is_an_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: broken}
        spec:
          pytorchReplicaSpecs:
            Chief: {replicas: 1}
        """,
    )
    result = migrate([path])
    assert not result.ok and result.files == []
    [error] = [d for d in result.diagnostics if d.is_error]
    assert error.code == "TS543" and error.line == line_of(path, "pytorchReplicaSpecs")


def test_invalid_specs_are_reported_at_the_manifest_field(tmp_path: Path) -> None:
    path = write(tmp_path, PYTORCHJOB.replace("name: small", "name: Small_Job"))
    result = migrate([path])
    [error] = [d for d in result.diagnostics if d.is_error]
    assert error.code == "TS544" and error.line == 3 and "TS206" in error.message


def test_other_kinds_are_skipped_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path, "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    result = migrate([path])
    assert result.ok and result.files == []
    assert [(d.code, d.line) for d in result.diagnostics] == [("TS542", 2)]


def test_a_trainjob_without_its_runtime_refers_to_it(tmp_path: Path) -> None:
    text = (HERE / "trainjob.yaml").read_text().split("---\n")[1]
    result = migrate([write(tmp_path, text)])
    assert result.ok and [d.code for d in result.diagnostics] == ["TS547"]
    assert list(docs(result)) == ["TrainingJob"] and docs(result)["TrainingJob"]["spec"]["runtime"] == "team-torch"


def test_the_writer_never_overwrites_a_file_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "specs"
    assert main(["migrate", str(HERE / "gloo.yaml"), "-o", str(out)]) == 0
    written = out / "gloo.yaml"
    assert written_by_us(written.read_text())
    assert main(["migrate", str(HERE / "gloo.yaml"), "-o", str(out)]) == 0  # unchanged: fine
    written.write_text(written.read_text() + "# my note\n")
    assert main(["migrate", str(HERE / "gloo.yaml"), "-o", str(out)]) == 1  # edited since: TS545
    assert written.read_text().endswith("# my note\n")
    (out / "mpi.yaml").write_text("mine\n")
    assert main(["migrate", str(HERE / "mpi.yaml"), "-o", str(out)]) == 1
    assert (out / "mpi.yaml").read_text() == "mine\n"


def test_cli_prints_a_stream_and_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", str(HERE / "elastic.yaml")]) == 0
    out, err = capsys.readouterr()
    kinds = [d["kind"] for d in yaml.safe_load_all(out)]
    assert kinds == ["Runtime", "TrainingJob"]
    assert "warning[TS546]" in err


def test_cli_usage_error_for_an_unknown_target() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["migrate", str(HERE / "elastic.yaml"), "--target", "nope"])
    assert exc.value.code == 2


def test_docs_describe_the_codes() -> None:
    text = (ROOT / "docs" / "migrate.md").read_text(encoding="utf-8")
    for code in (f"TS54{i}" for i in range(9)):
        assert code in text


def test_the_cli_offers_every_target() -> None:
    from trainspec.cli.migrate import TARGETS as CLI_TARGETS
    from trainspec.migrate import TARGETS

    assert CLI_TARGETS == TARGETS
