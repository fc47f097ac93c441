"""The cluster layer stays out of validate/compile, and says what is missing without the client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "kubernetes":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Block())
"""


def _python(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_validate_and_compile_load_nothing_of_the_cluster_layer() -> None:
    report = _python("""
import contextlib, io, json, sys
import trainspec.cli.main as cli
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    cli.main(["validate", "examples/ddp-cpu.yaml"])
    cli.main(["compile", "examples/ddp-cpu.yaml", "-o", "-"])
loaded = sorted(m for m in sys.modules if m.startswith(("trainspec.kube", "kubernetes", "trainspec.cli.submit",
                "trainspec.cli.status", "trainspec.cli.logs", "trainspec.cli.cancel", "trainspec.cli.listing")))
print(json.dumps({"loaded": loaded}))
""")
    assert report["loaded"] == []


def test_without_the_kubernetes_client_the_commands_say_how_to_get_it() -> None:
    report = _python(
        BLOCK
        + """
import contextlib, io, json
from trainspec.cli.main import main
err = io.StringIO()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
    code = main(["status", "job", "-n", "ml"])
print(json.dumps({"code": code, "err": err.getvalue()}))
"""
    )
    assert report["code"] == 2
    assert "error[TS710]" in report["err"] and "pip install 'trainspec[kube]'" in report["err"]
