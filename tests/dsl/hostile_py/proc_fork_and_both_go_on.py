# corpus: TS122
"""os.fork() and both copies finish the module: one result, no duplicate output."""

import os

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

os.fork()
print("after the fork")
