"""``trainspec check`` as users run it: a real process, exit codes, formats, usage errors."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.checkcmd.conftest import CLUSTER, KUEUE, RUNTIMES
from tests.conftest import ROOT, run_cli


def rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_passing_jobs_exit_0_as_json() -> None:
    proc = run_cli("check", rel(RUNTIMES), rel(CLUSTER / "jobs/ok"), "--cluster", rel(KUEUE), "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["diagnostics"] == [] and payload["summary"]["errors"] == 0
    assert payload["summary"]["files"] == 4 + 5  # 4 spec files, 5 cluster files


def test_usage_errors_exit_2() -> None:
    proc = run_cli("check", "examples/ddp-cpu.yaml", "--cluster", "no/such/dir")
    assert proc.returncode == 2 and "--cluster no/such/dir: no such file or directory" in proc.stderr
    proc = run_cli("check", "examples/ddp-cpu.yaml", "--crds", "no/such/crds")
    assert proc.returncode == 2
    proc = run_cli("check")
    assert proc.returncode == 2


def test_missing_input_is_a_diagnostic_like_validate() -> None:
    proc = run_cli("check", "no-such-spec.yaml")
    assert proc.returncode == 1 and "error[TS100]" in proc.stdout


def test_help_lists_the_options() -> None:
    proc = run_cli("check", "--help")
    assert proc.returncode == 0
    for option in ("--crds", "--cluster", "--target", "--format", "--project"):
        assert option in proc.stdout


def test_the_parser_imports_nothing_heavy() -> None:
    code = (
        "import sys\nfrom trainspec.cli.main import build_parser\nbuild_parser()\n"
        "heavy = [m for m in ('trainspec.kueue.cluster_files', 'celpy', 'jsonschema', 'yaml', 'pydantic') "
        "if m in sys.modules]\nassert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_compiled_output_directory_is_checked_as_manifests(tmp_path, crds) -> None:
    """`compile -o DIR` then `check DIR`: the manifests are read as they are (kustomization skipped),
    and findings point at the manifest lines."""
    out = tmp_path / "deploy"
    job = CLUSTER / "jobs/fail/TS514-never-admissible.yaml"
    proc = run_cli("compile", rel(RUNTIMES), rel(CLUSTER / "jobs/ok"), rel(job), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("check", str(out), "--crds", str(crds), "--cluster", rel(KUEUE), "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [finding] = json.loads(proc.stdout)["diagnostics"]
    manifest = out / "team-nlp" / "nlp-pretrain-xl.yaml"
    line = next(n for n, text in enumerate(manifest.read_text().splitlines(), 1) if "numNodes: 8" in text)
    assert (finding["code"], finding["file"], finding["line"], finding["path"]) == (
        "TS514",
        str(manifest),
        line,
        "spec.trainer.numNodes",
    )
