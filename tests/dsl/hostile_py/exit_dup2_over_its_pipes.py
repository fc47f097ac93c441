# corpus: TS120
"""Points descriptors 3 and up at its stdout: the result lands in the output."""

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

for fd in range(3, 64):
    os.dup2(1, fd)
