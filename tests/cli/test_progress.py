"""The progress line: drawn on a terminal only, throttled, erased on close, quiet when piped.

A fake TTY (a StringIO whose isatty() is True) and a fake clock stand in for the terminal and
time, so the tests count draws instead of timing anything.
"""

from __future__ import annotations

import io

from tests.conftest import run_cli
from trainspec.progress import ENV, Progress, enabled_for, pass_reporter


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def bar(stream: io.StringIO, clock: Clock, total: int | None = 10, **kw) -> Progress:
    return Progress("sharding", total, stream=stream, clock=clock, width=40, **kw)


def test_enabled_only_on_a_terminal_unless_forced() -> None:
    assert enabled_for(FakeTTY(), {}) is True
    assert enabled_for(io.StringIO(), {}) is False
    assert enabled_for(FakeTTY(), {"TERM": "dumb"}) is False
    assert enabled_for(FakeTTY(), {ENV: "0"}) is False
    assert enabled_for(io.StringIO(), {ENV: "1"}) is True
    closed = io.StringIO()
    closed.close()  # isatty() now raises ValueError
    assert enabled_for(closed, {}) is False


def test_nothing_is_written_when_not_a_tty(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    stream, clock = io.StringIO(), Clock()
    with bar(stream, clock) as progress:
        clock.now += 5
        for _ in range(10):
            progress.advance(detail="part-0001.parquet")
    assert stream.getvalue() == ""


def test_draws_count_percent_and_detail_then_erases(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    stream, clock = FakeTTY(), Clock()
    progress = bar(stream, clock)
    clock.now += 1  # past the initial delay
    progress.advance(3, detail="a.txt")
    assert stream.getvalue() == "\rsharding: 3/10 (30%) a.txt"
    progress.close()
    assert stream.getvalue().endswith("\r" + " " * len("sharding: 3/10 (30%) a.txt") + "\r")


def test_quick_work_draws_nothing(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    stream, clock = FakeTTY(), Clock()
    with bar(stream, clock) as progress:
        progress.advance()
        clock.now += 0.2  # still within the 0.5 s delay
        progress.advance()
    assert stream.getvalue() == ""


def test_redraws_are_throttled_so_a_tight_loop_draws_a_few_times(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    stream, clock = FakeTTY(), Clock()
    progress = bar(stream, clock, total=10_000)
    clock.now += 1
    for _ in range(10_000):
        progress.advance()
        clock.now += 0.001  # 10 s of work in all, 0.1 s between draws
    draws = stream.getvalue().count("\r")
    assert 90 <= draws <= 101
    assert len(stream.getvalue()) < 101 * 40  # bounded output, not one line per item


def test_a_shorter_line_covers_the_longer_one_before_it(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    stream, clock = FakeTTY(), Clock()
    progress = bar(stream, clock, interval=0)
    clock.now += 1
    progress.update(1, detail="a-long-file-name.txt")
    progress.update(2, detail="b")
    first, second = stream.getvalue().split("\r")[1:]
    assert len(second) == len(first) and second.rstrip() == "sharding: 2/10 (20%) b"


def test_long_lines_are_cut_to_the_width_so_they_never_wrap(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    progress = bar(FakeTTY(), Clock())
    progress.update(1, detail="x" * 200)
    assert len(progress.text()) == 40 and progress.text().endswith("...")


def test_without_a_total_it_spins(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    stream, clock = FakeTTY(), Clock()
    progress = Progress("waiting for admission", stream=stream, clock=clock, interval=0, width=60)
    clock.now += 1
    progress.update(detail="Pending: insufficient quota")
    progress.update()
    frames = stream.getvalue().split("\r")[1:]
    assert frames[0].startswith("waiting for admission | Pending")
    assert frames[1].startswith("waiting for admission / Pending")


def test_a_broken_terminal_stops_drawing_and_never_raises(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)

    class Broken(FakeTTY):
        def write(self, text: str) -> int:
            raise OSError("EIO")

    clock = Clock()
    progress = bar(Broken(), clock)
    clock.now += 1
    progress.advance()
    assert progress.enabled is False
    progress.close()


def test_pass_reporter_names_the_compiler_pass(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    stream, clock = FakeTTY(), Clock()
    progress = Progress("compiling", stream=stream, clock=clock, interval=0, delay=0, width=60)
    report = pass_reporter(progress, {"lower": "building objects"})
    report("lower", 5, 7)
    assert stream.getvalue() == "\rcompiling: 5/7 (71%) building objects"


def test_compile_reports_passes_on_a_terminal_and_nothing_when_piped() -> None:
    from trainspec.compiler.pipeline import Options, run

    seen: list[tuple[str, int, int]] = []
    run(["examples/ddp-cpu.yaml"], Options(project=None, progress=lambda *a: seen.append(a)))
    assert [name for name, _, _ in seen] == ["load", "project", "resolve", "plan", "rules", "lower"]
    assert [i for _, i, _ in seen] == list(range(6)) and {t for _, _, t in seen} == {7}
    # Piped (not a TTY): stderr holds no progress at all.
    proc = run_cli("compile", "examples/ddp-cpu.yaml", "-o", "-")
    assert proc.returncode == 0 and "\r" not in proc.stderr and proc.stderr == ""


def test_the_sharding_stage_draws_progress_by_bytes_on_a_terminal(tmp_path, monkeypatch) -> None:
    """Long work shows progress on a terminal: the stage reports the bytes it read."""
    import io
    import subprocess
    import sys

    data = tmp_path / "data.jsonl"
    data.write_text("".join(f'{{"i": {i}}}\n' for i in range(2000)))
    command = [
        sys.executable,
        "-m",
        "trainspec.stages.shard",
        "--source",
        str(data),
        "--format",
        "jsonl",
        "--num-shards",
        "4",
        "--output",
        str(tmp_path / "out"),
    ]
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("TRAINSPEC_")}
    quiet = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
    assert quiet.returncode == 0, quiet.stderr
    assert "\r" not in quiet.stderr + quiet.stdout  # not a terminal: no progress line
    from trainspec.progress import Progress
    from trainspec.stages.sources import resolve_source

    stream = io.StringIO()
    bar = Progress("sharding", total=data.stat().st_size, stream=stream, enabled=True, delay=0.0, interval=0.0)
    source = resolve_source(str(data), {}, exclude=tmp_path / "out")
    source.on_read = bar.advance
    with source.open(source.files[0]) as handle:
        while handle.read(4096):
            pass
    assert bar.done == data.stat().st_size and "sharding:" in stream.getvalue() and "(100%)" in stream.getvalue()
