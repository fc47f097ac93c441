"""``--max-file-size`` on the commands that read files, and the library's ``Options.limits``.

The default cap admits every object the API server admits (tests/dsl/test_load_limits.py); the
option moves it for the load pass and for ``check``'s reading of manifests alike.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tests.checkcmd.conftest import check
from trainspec.compiler.pipeline import Options, Stop, run
from trainspec.dsl.load.strict_yaml import LoadLimits

PVC = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ckpt
  namespace: team-a
spec:
  accessModes: [ReadWriteMany]
  resources:
    requests:
      storage: 100Gi
"""


def _main(*args: str) -> tuple[int, str, str]:
    from trainspec.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def pvc(tmp_path: Path) -> Path:
    path = tmp_path / "pvc.yaml"
    path.write_text(PVC, encoding="utf-8")
    return path


def test_check_reads_manifests_under_the_option(pvc: Path, crds: Path) -> None:
    code, found = check(str(pvc), "--crds", str(crds))
    assert code == 0 and found == []
    code, found = check(str(pvc), "--crds", str(crds), "--max-file-size", "100")
    assert code == 1
    assert {(d["code"], Path(d["file"]).name) for d in found} == {("TS102", "pvc.yaml")}


def test_a_file_over_the_default_cap_loads_with_a_larger_one(tmp_path: Path, crds: Path) -> None:
    big = tmp_path / "big.yaml"
    # A valid claim padded with a comment past the default cap (4 MiB).
    big.write_text(PVC + "# " + "x" * (4 << 20) + "\n", encoding="utf-8")
    code, found = check(str(big), "--crds", str(crds))
    assert code == 1 and [d["code"] for d in found] == ["TS102"]
    code, found = check(str(big), "--crds", str(crds), "--max-file-size", "8MiB")
    assert code == 0 and found == []


def test_validate_takes_the_option_too(pvc: Path) -> None:
    code, out, _ = _main("validate", str(pvc), "--max-file-size", "64")
    assert code == 1 and "TS102" in out and "64-byte cap" in out


@pytest.mark.parametrize("value", ["lots", "0", "2GiB"])
def test_a_bad_size_is_a_usage_error(pvc: Path, value: str) -> None:
    code, _, err = _main("validate", str(pvc), "--max-file-size", value)
    assert code == 2 and "--max-file-size" in err


def test_pipeline_options_carry_the_limits(pvc: Path) -> None:
    result = run([str(pvc)], Options(project=None, stop=Stop.CHECK, limits=LoadLimits(max_bytes=64)))
    assert [d.code for d in result.diagnostics] == ["TS102"]
    result = run([str(pvc)], Options(project=None, stop=Stop.CHECK))
    assert result.diagnostics == []
