"""``check --previous DIR|REF:PATH``: the day-2 gate for any manifests, trainspec's or not."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from trainspec.cli.main import main

CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: ml
spec:
  accessModes: [ReadWriteMany]
  storageClassName: {cls}
  resources:
    requests:
      storage: {size}
"""


def check(cwd: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = main(["check", *args])
    finally:
        os.chdir(here)
    return code, out.getvalue()


def test_a_hand_written_claim_that_shrinks_is_refused_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "live").mkdir()
    (tmp_path / "live" / "claim.yaml").write_text(CLAIM.format(cls="standard", size="100Gi"))
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "claim.yaml").write_text(CLAIM.format(cls="standard", size="50Gi"))
    code, out = check(tmp_path, "new", "--previous", "live")
    assert code == 1, out
    assert "new/claim.yaml:11:16: error[TS442]" in out, out
    code, out = check(tmp_path, "new", "--previous", "new")  # against itself: no update at all
    assert code == 0, out


def test_a_storage_class_change_is_refused_and_a_new_claim_is_not_an_update(tmp_path: Path) -> None:
    (tmp_path / "live").mkdir()
    (tmp_path / "live" / "claim.yaml").write_text(CLAIM.format(cls="standard", size="100Gi"))
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "claim.yaml").write_text(CLAIM.format(cls="fast", size="100Gi"))
    code, out = check(tmp_path, "new", "--previous", "live")
    assert code == 1 and "TS442" in out and "immutable" in out, out
    (tmp_path / "new" / "claim.yaml").write_text(
        CLAIM.format(cls="fast", size="100Gi").replace("name: data", "name: d2")
    )
    code, out = check(tmp_path, "new", "--previous", "live")
    assert code == 0, out


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_ref_is_the_previous_tree(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@trainspec.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@trainspec.invalid",
        "HOME": str(tmp_path),
    }
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "claim.yaml").write_text(CLAIM.format(cls="standard", size="100Gi"))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "live"]):
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True, timeout=60)
    (tmp_path / "deploy" / "claim.yaml").write_text(CLAIM.format(cls="standard", size="10Gi"))
    code, out = check(tmp_path, "deploy", "--previous", "HEAD:deploy")
    assert code == 1 and "TS442" in out, out
    code, out = check(tmp_path, "deploy", "--previous", "no-such-ref:deploy")
    assert code == 1 and "error[TS444]" in out and "unknown git ref" in out, out
    code, out = check(tmp_path, "deploy", "--previous", "missing-dir")
    assert code == 1 and "error[TS444]" in out and "no such file or directory" in out, out
