"""``trainspec compile`` as a GitOps user runs it: stable bytes, --check, safe writes, pruning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT, run_cli
from trainspec.cli.main import main
from trainspec.compiler import emit


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_compile_twice_gives_identical_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert run_cli("compile", "examples/", "-o", str(first)).returncode == 0
    assert run_cli("compile", "examples/", "-o", str(second)).returncode == 0
    assert tree(first) == tree(second)
    assert "kustomization.yaml" in tree(first)


def test_output_does_not_depend_on_input_order(tmp_path: Path) -> None:
    specs = ["examples/jax.yaml", "examples/llama-sft", "examples/ddp-cpu.yaml", "examples/deepspeed.yaml"]
    forward = run_cli("compile", *specs, "-o", "-")
    backward = run_cli("compile", *reversed(specs), "-o", "-")
    assert forward.returncode == backward.returncode == 0
    assert forward.stdout == backward.stdout


def test_layout_and_apply_order(tmp_path: Path) -> None:
    assert run_cli("compile", "examples/", "-o", str(tmp_path)).returncode == 0
    files = tree(tmp_path)
    assert "runtimes/torch-h100-ib.yaml" in files and "runtimes/torch-h100-ib-sharded.yaml" in files
    assert "team-nlp/llama-sft.yaml" in files
    resources = yaml.safe_load(files["kustomization.yaml"])["resources"]
    runtimes = [i for i, r in enumerate(resources) if r.startswith("runtimes/")]
    assert max(runtimes) < min(i for i, r in enumerate(resources) if not r.startswith("runtimes/"))
    kinds = [d["kind"] for d in yaml.safe_load_all(files["team-nlp/llama-sft.yaml"])]
    assert kinds == ["PersistentVolumeClaim", "TrainJob"]


def test_stream_orders_runtimes_then_claims_then_jobs() -> None:
    proc = run_cli("compile", "examples/", "-o", "-")
    kinds = [d["kind"] for d in yaml.safe_load_all(proc.stdout)]
    order = {
        "ClusterTrainingRuntime": 0,
        "TrainingRuntime": 0,
        "PersistentVolumeClaim": 1,
        "TrainJob": 1,
        "RayJob": 1,
        "PyTorchJob": 1,
        "JAXJob": 1,
        "MPIJob": 1,
        "PodMonitor": 1,
        "ConfigMap": 1,
    }
    assert [order[k] for k in kinds] == sorted(order[k] for k in kinds)


def test_argocd_sync_waves(tmp_path: Path) -> None:
    proc = run_cli("compile", "examples/llama-sft", "-o", "-", "--gitops", "argocd")
    waves = {
        d["kind"]: int(d["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave", "0"))
        for d in yaml.safe_load_all(proc.stdout)
    }
    # Runtimes first; a claim never in an earlier wave than the job that binds it (WaitForFirstConsumer).
    assert waves["ClusterTrainingRuntime"] < waves["PersistentVolumeClaim"] == waves["TrainJob"] == 0


def test_check_detects_a_stale_tree(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert run_cli("compile", "examples/", "-o", str(out)).returncode == 0
    fresh = run_cli("compile", "examples/", "-o", str(out), "--check")
    assert fresh.returncode == 0, fresh.stderr
    edited = out / "team-nlp" / "llama-sft.yaml"
    edited.write_text(edited.read_text() + "# edited by hand\n")
    (out / "ml-dev" / "ddp-cpu.yaml").unlink()
    before = tree(out)
    stale = run_cli("compile", "examples/", "-o", str(out), "--check")
    assert stale.returncode == 1
    assert "llama-sft.yaml: stale" in stale.stderr and "ddp-cpu.yaml: missing" in stale.stderr
    assert "TS411" in stale.stderr  # its seal no longer matches
    assert tree(out) == before  # --check writes nothing
    # Without trainspec's header the file is someone else's: never overwritten (TS407).
    edited.write_text("# edited by hand\n")
    replaced = run_cli("compile", "examples/", "-o", str(out), "--check")
    assert replaced.returncode == 1 and "TS407" in replaced.stderr


def test_prunes_only_files_trainspec_wrote(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(EXAMPLES / "llama-sft", specs / "llama-sft")
    shutil.copy(EXAMPLES / "jax.yaml", specs / "jax.yaml")
    out = tmp_path / "deploy"
    assert run_cli("compile", str(specs), "-o", str(out)).returncode == 0
    (out / "README.md").write_text("hand-written notes\n")
    (out / "team-research" / "notes.yaml").write_text("kind: ConfigMap\n")
    (specs / "jax.yaml").unlink()
    assert run_cli("compile", str(specs), "-o", str(out)).returncode == 0
    files = tree(out)
    assert "team-research/t5x-pretrain.yaml" not in files
    assert "runtimes/trainspec-jax-sharded.yaml" not in files
    assert files["README.md"] == b"hand-written notes\n"
    assert "team-research/notes.yaml" in files


def test_refuses_to_overwrite_a_file_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    (out / "ml-dev").mkdir(parents=True)
    (out / "ml-dev" / "ddp-cpu.yaml").write_text("# mine\n")
    proc = run_cli("compile", "examples/ddp-cpu.yaml", "-o", str(out))
    assert proc.returncode == 1
    assert "TS407" in proc.stderr
    assert (out / "ml-dev" / "ddp-cpu.yaml").read_text() == "# mine\n"


def test_invalid_specs_leave_the_old_tree_intact(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(EXAMPLES / "jax.yaml", specs / "jax.yaml")
    out = tmp_path / "deploy"
    assert run_cli("compile", str(specs), "-o", str(out)).returncode == 0
    before = tree(out)
    shutil.copy(EXAMPLES / "invalid" / "TS203-out-of-range.yaml", specs / "broken.yaml")
    proc = run_cli("compile", str(specs), "-o", str(out))
    assert proc.returncode == 1 and "TS203" in proc.stderr
    assert tree(out) == before


def test_a_crash_mid_compile_leaves_the_old_tree_intact(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "deploy"
    assert main(["compile", "examples/", "-o", str(out)]) == 0
    before = tree(out)
    (out / "team-nlp" / "llama-sft.yaml").unlink()  # so a new compile has something to write

    def explode(*args, **kwargs):
        raise RuntimeError("simulated crash while lowering")

    monkeypatch.setattr("trainspec.compiler.lower.trainer.trainjob.lower_job", explode)
    assert main(["compile", "examples/", "-o", str(out)]) == 2
    after = tree(out)
    del before["team-nlp/llama-sft.yaml"]
    assert after == before


def test_a_crash_while_writing_leaves_every_file_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "deploy"
    assert main(["compile", "examples/", "-o", str(out)]) == 0
    before = tree(out)
    calls = {"n": 0}
    real_replace = emit.os.replace

    def flaky_replace(src, dst):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device", str(dst))
        return real_replace(src, dst)

    for path in out.rglob("*.yaml"):
        path.write_text(path.read_text() + "# local edit\n")
    monkeypatch.setattr(emit.os, "replace", flaky_replace)
    assert main(["compile", "examples/", "-o", str(out)]) == 1
    after = tree(out)
    for name, data in after.items():  # every file is either the old or the new text, never half
        assert data == before[name] or data == before[name] + b"# local edit\n" or name.startswith(".")
    assert not list(out.rglob("*.tmp"))


def test_stdout_stream_is_valid_yaml_with_no_diagnostics_mixed_in() -> None:
    proc = run_cli("compile", "examples/ddp-cpu.yaml", "-o", "-")
    assert proc.returncode == 0
    assert all(isinstance(d, dict) for d in yaml.safe_load_all(proc.stdout))


@pytest.mark.parametrize("args", [["compile", "examples/"], ["validate"], ["nope"]])
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert run_cli(*args).returncode == 2


@pytest.mark.parametrize("command", ["validate", "compile", "explain", "diff", "kfp"])
def test_every_compiling_command_takes_the_shared_input_options(command: str) -> None:
    """One option builder (trainspec.cli.common): each command reads specs under the same limits."""
    from trainspec.cli.main import build_parser

    given = ["--python-timeout", "3", "--max-file-size", "1MiB", "--no-python", "--values", "v.yaml"]
    extra = ["-o", "-"] if command == "compile" else []
    args = build_parser(command).parse_args([command, "a", "b", *given, *extra])
    assert (args.python_timeout, args.max_file_size, args.no_python, args.values) == (3.0, 1 << 20, True, ["v.yaml"])


def test_diff_reads_each_side_under_the_size_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text((EXAMPLES / "ddp-cpu.yaml").read_text())
    new.write_text((EXAMPLES / "ddp-cpu.yaml").read_text() + "#" * 2048 + "\n")
    assert main(["diff", str(old), str(new), "--no-project", "--max-file-size", str(new.stat().st_size - 1)]) == 2
    assert "error[TS" in capsys.readouterr().err
