# corpus: TS115
"""signal.alarm(0) and a zero interval timer, then a loop."""

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

signal.alarm(0)
signal.setitimer(signal.ITIMER_REAL, 0)
while True:
    time.sleep(0.01)
