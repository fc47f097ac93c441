"""kfp is an optional extra: the core must neither load it nor need it.

These tests run in subprocesses (a fresh ``sys.modules``) and need no kfp themselves: "kfp
missing" is simulated by an import hook that refuses ``kfp`` and ``kubernetes``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kfp_testing import ROOT

#: Makes ``import kfp`` / ``import kubernetes`` fail as if the extra were not installed.
BLOCK = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("kfp", "kubernetes"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Block())
"""


def _python(code: str, *, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, check=False, capture_output=True, text=True, timeout=120
    )


def test_validate_and_compile_never_import_kfp_or_kubernetes(tmp_path: Path) -> None:
    code = f"""
import contextlib, io, json, sys
import trainspec.cli.main as cli
codes = []
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    codes.append(cli.main(["validate", "examples"]))
    codes.append(cli.main(["compile", "examples", "-o", "-"]))
    codes.append(cli.main(["compile", "examples/kfp/cpu-job.yaml", "-o", {str(tmp_path / "out")!r}]))
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & {{"kfp", "kubernetes"}})
print(json.dumps({{"codes": codes, "loaded": loaded}}))
"""
    done = _python(code)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["codes"] == [0, 0, 0]
    assert report["loaded"] == []


def test_core_works_without_kfp(tmp_path: Path) -> None:
    code = (
        BLOCK
        + """
import contextlib, io, json
import trainspec, trainspec.kfp
from trainspec.cli.main import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    validate = main(["validate", "examples"])
    pipeline = main(["kfp", "examples/ddp-cpu.yaml", "-o", "-"])
    rbac = main(["kfp", "--rbac"])
compiled = trainspec.kfp.compile_trainjob("examples/ddp-cpu.yaml")
print(json.dumps({"validate": validate, "pipeline": pipeline, "rbac": rbac, "err": err.getvalue(),
                  "rbac_out": "ClusterRoleBinding" in out.getvalue(), "job": compiled.name}))
"""
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["validate"] == 0
    assert report["pipeline"] == 2 and "pip install 'trainspec[kfp]'" in report["err"]
    assert report["rbac"] == 0 and report["rbac_out"]  # RBAC needs no kfp
    assert report["job"] == "ddp-cpu"  # compiling the job for a pipeline needs no kfp either


def test_launcher_module_needs_only_the_kubernetes_client() -> None:
    # In the launcher pod kfp is installed with --no-deps: the launcher must not import kfp.
    done = _python("import sys, trainspec.kfp.launcher; print('kfp' in {m.split('.')[0] for m in sys.modules})")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
