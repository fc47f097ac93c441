# corpus: same TS116
"""100 MB written to descriptor 1 directly."""

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

chunk = b"z" * (1 << 20)
for _ in range(100):
    os.write(1, chunk)
