"""The README's ladder session on a cluster is what the commands print: each ``$ trainspec ...`` line of
its block runs (from the repository root) against the loopback stand-in of the API server, with the
controllers and rank 0's progress reports played as tests/kube/ladder_standin.py plays them, and
prints what the README shows (stderr, then stdout, as a terminal shows them: the progress lines come
as the rungs run, the table at the end). The stand-in's address is shown as ``http://127.0.0.1:8001``.

The figures are the played reports' (:data:`PLAYED`), not a cluster's: the README says so.
``UPDATE_GOLDEN=1`` rewrites the block's outputs from the run (then review the diff).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import cli
from kube_standin import StandIn
from ladder_standin import Controller, Rung, reported

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MARKER = (
    "<!-- ladder session: tests/kube/test_readme_ladder_cluster.py runs this block; UPDATE_GOLDEN=1 rewrites it -->\n"
)
SHOWN_URL = "http://127.0.0.1:8001"
BLOCK = re.compile(re.escape(MARKER) + r"```text\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
#: Rank 0's reports: 10 samples a step on each rank; at 2 nodes the step is a little slower and the
#: loop waits for data 4 times as long.
PLAYED = {"1n": Rung(status=reported(0.095, 0.005)), "2n": Rung(status=reported(0.1, 0.03))}


def _session(text: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        elif pairs:
            pairs[-1][1].append(line)
    return [(command, "\n".join(lines)) for command, lines in pairs]


def test_the_readme_ladder_session_is_what_the_commands_print(api: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = README.read_text(encoding="utf-8")
    found = BLOCK.search(readme)
    assert found, "the README lost its ladder session on a cluster (or the marker line before it)"
    monkeypatch.chdir(ROOT)
    api.on_watch = Controller(dict(PLAYED))
    actual = []
    for command, _ in _session(found.group(1)):
        code, out, err = cli(*shlex.split(command)[1:])
        assert code == 0, err
        actual.append((command, (err + out).replace(api.url, SHOWN_URL).rstrip("\n")))
    if os.environ.get("UPDATE_GOLDEN"):
        body = "".join(f"$ {command}\n{output}\n" for command, output in actual)
        README.write_text(readme[: found.start(1)] + body + readme[found.end(1) :], encoding="utf-8")
        return
    assert actual == _session(found.group(1))
