"""What the in-pod timers and the progress reporter cost a training loop, per step.

Runs an empty loop, then the same loop with ``step()`` + ``data_wait()`` timers, then with a
``report()`` call per step as well (rate-limited, to a sink that discards), and prints the
added time per step (median of 9 rounds of 200,000 steps). Also the import time of
``trainspec.stages`` in a fresh interpreter (median of 9).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from trainspec.stages import ProgressReporter, StepMetrics
from trainspec.stages.trainer_status import Update

STEPS = 200_000
ROUNDS = 9


class Discard:
    blocking = False

    def send(self, update: Update) -> bool:
        return True


def _loop(timed: bool, reported: bool) -> float:
    meter = StepMetrics()
    reporter = ProgressReporter(Discard(), metrics=meter, interval=10.0, env={})
    start = time.perf_counter()
    if not timed:
        for _ in range(STEPS):
            pass
    elif not reported:
        for _ in range(STEPS):
            with meter.step(), meter.data_wait():
                pass
    else:
        for i in range(STEPS):
            with meter.step(), meter.data_wait():
                pass
            reporter.report(i + 1, STEPS)
    return time.perf_counter() - start


def _import_ms() -> float:
    code = "import time; t = time.perf_counter(); import trainspec.stages; print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # cached, as installed
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    return float(out) * 1000


def main() -> None:
    base = statistics.median(_loop(False, False) for _ in range(ROUNDS))
    timed = statistics.median(_loop(True, False) for _ in range(ROUNDS))
    reported = statistics.median(_loop(True, True) for _ in range(ROUNDS))
    print(f"step() + data_wait() timers: {(timed - base) / STEPS * 1e6:.2f} us per step")
    print(f"timers + report() each step:  {(reported - base) / STEPS * 1e6:.2f} us per step")
    print(f"import trainspec.stages:      {statistics.median(_import_ms() for _ in range(ROUNDS)):.1f} ms")


if __name__ == "__main__":
    main()
