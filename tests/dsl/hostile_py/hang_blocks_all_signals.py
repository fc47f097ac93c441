# corpus: TS115
"""Every signal blocked, then a loop (SIGKILL cannot be blocked)."""

import signal
import time

from trainspec import Resources, TrainingJob

job = TrainingJob(
    name="corpus-job",
    namespace="corpus",
    runtime="trainspec-torch",
    image="example.com/train:1",
    command=["python", "train.py"],
    nodes=1,
    resources_per_node=Resources(cpu=1, memory="1Gi"),
)

signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
while True:
    time.sleep(0.01)
