# corpus: TS115
"""SIGSTOP to itself: stopped, never ends."""

import os
import signal

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

os.kill(os.getpid(), signal.SIGSTOP)
