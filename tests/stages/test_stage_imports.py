"""What the sharding stage and the in-pod helpers import.

The stage's start-up is most of a by-bytes index run (bench/shard.py), so running it must not
import the helpers training code uses (checkpoints, readers, metrics, progress reports); and
``trainspec.stages`` still offers every helper by name.
"""

from __future__ import annotations

import json
import subprocess
import sys

import trainspec.stages as stages

HELPERS = ("checkpoints", "readers", "metrics", "metrics_http", "progress_report", "rank_zero", "trainer_status")


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out))


def test_running_the_stage_imports_none_of_the_training_helpers() -> None:
    loaded = _modules_after("import trainspec.stages.shard")
    assert not {f"trainspec.stages.{name}" for name in HELPERS} & loaded


def test_every_exported_helper_resolves_and_is_listed() -> None:
    assert stages.__all__ and all(getattr(stages, name) is not None for name in stages.__all__)
    assert set(stages.__all__) <= set(dir(stages))


def test_star_import_gives_every_helper() -> None:
    names: dict[str, object] = {}
    exec("from trainspec.stages import *", names)  # noqa: S102 - the star import is what is tested
    assert set(stages.__all__) <= set(names)


def test_an_index_run_does_not_import_dataclasses() -> None:
    # dataclasses brings inspect, ast, dis and tokenize: a sixth of an index run balanced by bytes,
    # which is nearly all start-up (bench/shard.py; its goal is 10x coreutils split).
    loaded = _modules_after(
        "import trainspec.stages.shard, trainspec.stages.runner, trainspec.stages.index_format, "
        "trainspec.stages.line_plan, trainspec.stages.lines_scan, trainspec.stages.sources"
    )
    assert not {"dataclasses", "inspect", "ast"} & loaded
