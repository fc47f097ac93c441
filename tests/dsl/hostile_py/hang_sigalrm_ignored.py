# corpus: TS115
"""SIGALRM ignored, then a loop (a time limit built on SIGALRM never fires)."""

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

signal.signal(signal.SIGALRM, signal.SIG_IGN)
while True:
    time.sleep(0.01)
