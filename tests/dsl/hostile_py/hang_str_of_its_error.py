# corpus: TS115
"""The error it raises hangs when trainspec describes it."""

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


class Stuck(Exception):
    def __str__(self) -> str:
        time.sleep(1e9)
        return "never"


raise Stuck
