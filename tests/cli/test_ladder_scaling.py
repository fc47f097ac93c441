"""The measured scaling table's logic on fixed measurements: speed-up, efficiency per GPU, the
recommendation (the largest rung whose efficiency stays at or above the threshold) and the data
pipeline named as the bottleneck; and every column in text and JSON."""

from __future__ import annotations

import json

import pytest

from trainspec.explain.ladder_scaling import MeasuredRung, Settings, analyse, as_dict, render
from trainspec.stages.step_rates import Measurement, RankRate, Warmup


def _measured(samples: float | None, wait: float = 0.05, *, tokens: float | None = None) -> Measurement:
    rank = RankRate(0, 90, 9.0, 10.0, samples, tokens, wait)
    return Measurement((rank,), 1, 10.0, samples, tokens, wait, "counted" if samples is not None else None)


def _rung(tag: str, gpus: int, samples: float | None, wait: float = 0.05, **extra: object) -> MeasuredRung:
    nodes = max(1, gpus // 8)
    fields: dict = {
        "tag": tag,
        "name": f"llm-ladder-{tag}",
        "nodes": nodes,
        "procs_per_node": min(gpus, 8),
        "world_size": gpus,
        "gpus": gpus,
        "status": "measured",
        "measurement": _measured(samples, wait),
    }
    fields.update(extra)
    return MeasuredRung(**fields)


LADDER = [
    _rung("1gpu", 1, 100.0),
    _rung("1n", 8, 760.0),  # 95%
    _rung("2n", 16, 1400.0),  # 87.5%
    _rung("4n", 32, 2400.0),  # 75%: below 80%
    _rung("8n", 64, 4900.0),  # 76.6%
]


def test_speedup_and_efficiency_per_gpu_against_the_first_rung() -> None:
    scaling = analyse("ml", "llm", LADDER)
    assert scaling.unit == "samples/s" and scaling.scale_unit == "GPUs"
    assert [round(r.speedup or 0, 3) for r in scaling.rows] == [1.0, 7.6, 14.0, 24.0, 49.0]
    assert [round(r.efficiency or 0, 4) for r in scaling.rows] == [1.0, 0.95, 0.875, 0.75, 0.7656]


def _recommended(settings: Settings) -> str | None:
    found = analyse("ml", "llm", LADDER, settings).recommendation
    return found.rung if found is not None else None


def test_the_recommendation_is_the_last_rung_before_efficiency_first_falls_below_the_threshold() -> None:
    scaling = analyse("ml", "llm", LADDER)
    assert scaling.recommendation is not None
    assert (scaling.recommendation.kind, scaling.recommendation.rung) == ("below", "2n")
    assert "4n (32 GPUs) falls to 75%" in scaling.recommendation.message
    # A lower bar takes the climb to the top; a higher one stops it at the first step.
    assert _recommended(Settings(min_efficiency=0.7)) == "8n"
    assert _recommended(Settings(min_efficiency=0.96)) == "1gpu"


def test_unmeasured_rungs_are_shown_with_their_reason_and_left_out_of_the_climb() -> None:
    rungs = [
        _rung("1gpu", 1, 100.0),
        _rung("1n", 8, 760.0),
        _rung("2n", 16, None, status="skipped", measurement=None, note="needs 16 GPUs; this machine has 8"),
    ]
    scaling = analyse("ml", "llm", rungs)
    assert scaling.recommendation is not None and scaling.recommendation.kind == "all"
    assert scaling.recommendation.rung == "1n"
    text = render([scaling])
    assert "skipped: needs 16 GPUs; this machine has 8" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("2n"))
    assert row.split()[:6] == ["2n", "16", "-", "-", "-", "-"]


def test_one_measured_rung_has_nothing_to_compare_with() -> None:
    scaling = analyse("ml", "llm", [_rung("1n", 8, 760.0)])
    assert scaling.recommendation is not None and scaling.recommendation.kind == "only"


def test_nothing_measured_recommends_nothing() -> None:
    scaling = analyse("ml", "llm", [_rung("1n", 8, None, status="failed", measurement=None, note="exited 1")])
    assert scaling.recommendation is None and scaling.bottleneck is None
    assert "recommendation: none, no rung was measured" in render([scaling])


def test_steps_alone_give_no_speedup_and_say_how_to_count_samples() -> None:
    scaling = analyse("ml", "llm", [_rung("1n", 8, None), _rung("2n", 16, None)])
    assert scaling.unit == "steps/s"
    assert [r.speedup for r in scaling.rows] == [None, None]
    assert scaling.recommendation is None
    assert any("step(samples=len(batch))" in note for note in scaling.notes)


def test_tokens_are_the_unit_when_every_rung_knows_them() -> None:
    rungs = [
        MeasuredRung("1n", "a", 1, 8, 8, 8, "measured", _measured(8.0, tokens=8.0 * 4096)),
        MeasuredRung("2n", "b", 2, 8, 16, 16, "measured", _measured(16.0, tokens=16.0 * 4096)),
    ]
    scaling = analyse("ml", "llm", rungs)
    assert scaling.unit == "tokens/s"
    assert scaling.rows[1].efficiency == pytest.approx(1.0)


def test_a_job_without_gpus_scales_per_process() -> None:
    rungs = [
        MeasuredRung("1n", "a", 1, 1, 1, 0, "measured", _measured(100.0)),
        MeasuredRung("2n", "b", 2, 1, 2, 0, "measured", _measured(150.0)),
    ]
    scaling = analyse("ml", "cpu", rungs)
    assert scaling.scale_unit == "processes"
    assert scaling.rows[1].efficiency == pytest.approx(0.75)
    assert scaling.recommendation is not None and scaling.recommendation.rung == "1n"
    assert "2n (2 processes) falls to 75%" in scaling.recommendation.message


def test_a_data_wait_that_grows_past_the_bound_names_the_data_pipeline() -> None:
    rungs = [_rung("1n", 8, 800.0, wait=0.04), _rung("2n", 16, 1500.0, wait=0.12), _rung("4n", 32, 2600.0, wait=0.31)]
    scaling = analyse("ml", "llm", rungs)
    assert scaling.bottleneck is not None
    assert (scaling.bottleneck.kind, scaling.bottleneck.rung) == ("growing", "4n")
    assert "4% of its time at 1n and 31% at 4n (above 20%)" in scaling.bottleneck.message
    # A bound above the last share names nothing; a share that only moves within the noise is not growth.
    assert analyse("ml", "llm", rungs, Settings(max_data_wait=0.35)).bottleneck is None
    flat = [_rung("1n", 8, 800.0, wait=0.18), _rung("2n", 16, 1500.0, wait=0.21)]
    assert analyse("ml", "llm", flat).bottleneck is None


def test_a_data_wait_above_the_bound_at_every_rung_names_the_data_pipeline_too() -> None:
    rungs = [_rung("1n", 8, 800.0, wait=0.7), _rung("2n", 16, 1500.0, wait=0.72)]
    scaling = analyse("ml", "llm", rungs)
    assert scaling.bottleneck is not None and scaling.bottleneck.kind == "everywhere"
    assert "70%-72% of its time at every rung" in scaling.bottleneck.message


def test_text_has_every_column_and_the_settings() -> None:
    text = render([analyse("ml", "llm", LADDER, Settings(warmup=Warmup(steps=20, fraction=None)))])
    lines = text.splitlines()
    assert lines[0] == "ml/llm: measured scaling ladder"
    assert lines[1].split() == ["rung", "GPUs", "throughput", "speed-up", "efficiency", "data", "wait", "measured"]
    assert lines[3].split()[:8] == ["1n", "8", "760", "samples/s", "7.60x", "95%", "5%", "90"]
    assert "recommendation: 2n (16 GPUs)" in text
    assert "warm-up left out: the first 20 steps of each rank" in text


def test_json_has_every_column_of_every_rung() -> None:
    data = json.loads(render([analyse("ml", "llm", LADDER)], "json"))
    (ladder,) = data["ladders"]
    assert ladder["unit"] == "samples/s" and ladder["minEfficiency"] == 0.8 and ladder["maxDataWait"] == 0.2
    assert ladder["recommendation"]["rung"] == "2n" and ladder["bottleneck"] is None
    assert [r["efficiency"] for r in ladder["rungs"]] == [1.0, 0.95, 0.875, 0.75, 0.7656]
    keys = set(ladder["rungs"][0])
    assert {
        "rung",
        "worldSize",
        "gpus",
        "status",
        "throughput",
        "speedup",
        "efficiency",
        "dataWaitShare",
        "samplesPerSecond",
        "measuredSteps",
    } <= keys
    assert as_dict(analyse("ml", "llm", LADDER)) == ladder


def test_an_unsteady_rung_is_marked_and_explained() -> None:
    shaky = Measurement(
        (RankRate(0, 90, 9.0, 10.0, 800.0, None, 0.05, spread=0.37),), 1, 10.0, 800.0, None, 0.05, "counted"
    )
    rungs = [_rung("1n", 8, 760.0), _rung("2n", 16, 1500.0, measurement=shaky)]
    scaling = analyse("ml", "llm", rungs)
    text = render([scaling])
    assert "90 steps in 9 s, unsteady" in text
    assert "differ by more than 20% (2n 37%)" in text
    assert json.loads(render([scaling], "json"))["ladders"][0]["rungs"][1]["steady"] is False
