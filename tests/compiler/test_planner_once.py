"""The parallelism planner runs once per job per command: the plan pass decides the layout and
keeps it in the plan (``JobPlan.parallel``); the rules, the environment contract of the lowering
and ``explain`` read it from there (issue 23)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from trainspec.cli.main import main
from trainspec.compiler.parallelism import recommend
from trainspec.compiler.pipeline import Options, Stop, run

ROOT = Path(__file__).resolve().parents[2]
#: Two jobs, both with spec.model on a runtime that gives its GPU memory: each is planned.
EXAMPLE = str(ROOT / "examples" / "llama-pretrain")
JOBS = 2


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every call of the planner's entry point, by the inputs it was given."""
    seen: list[object] = []
    real = recommend.plan_layouts

    def counting(inputs: recommend.PlannerInputs) -> recommend.Plan:
        seen.append(inputs)
        return real(inputs)

    monkeypatch.setattr(recommend, "plan_layouts", counting)
    return seen


@pytest.mark.parametrize(
    "words",
    [
        ["validate", EXAMPLE],
        ["compile", EXAMPLE, "-o", "-"],
        ["explain", EXAMPLE],
        ["explain", EXAMPLE, "--format", "json"],
        ["check", EXAMPLE],
    ],
    ids=lambda words: " ".join(w for w in words if w != EXAMPLE),
)
def test_each_command_plans_each_job_once(words: list[str], calls: list[object]) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([*words, "--no-project"]) == 0
    assert len(calls) == JOBS


def test_kfp_plans_its_job_once(calls: list[object]) -> None:
    pytest.importorskip("kfp", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")
    spec = str(ROOT / "examples" / "llama-pretrain" / "llama-70b.yaml")
    runtime = str(ROOT / "examples" / "llama-pretrain" / "runtime.yaml")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert (
            main(["kfp", spec, runtime, "--no-project", "--image", "registry.example.com/launcher:1", "-o", "-"]) == 0
        )
    assert len(calls) == 1


@pytest.mark.parametrize("stop", [Stop.VALIDATE, Stop.LOWER, Stop.EMIT])
def test_the_library_plans_each_job_once_and_keeps_the_answer(stop: Stop, calls: list[object]) -> None:
    result = run([EXAMPLE], Options(project=None, stop=stop))
    assert result.ok and len(calls) == JOBS
    assert all(plan.parallel is not None and plan.parallel.chosen is not None for plan in result.plans)


def test_a_pin_that_does_not_fit_is_planned_once_with_its_alternative(calls: list[object]) -> None:
    """TS425's hint (what the planner picks without the pin) comes from the one plan, not a second call."""
    spec = str(ROOT / "examples" / "invalid" / "TS425-pinned-layout-does-not-fit.yaml")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        main(["validate", spec, "--no-project"])
    assert "TS425" in out.getvalue() and "the planner recommends" in out.getvalue()
    assert len(calls) == 1
    (plan,) = run([spec], Options(project=None, stop=Stop.VALIDATE)).plans
    assert plan.parallel is not None and plan.parallel.unpinned is not None
