# corpus: same TS116
"""100 MB to sys.stderr, a megabyte at a time."""

import sys

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

for _ in range(100):
    sys.stderr.write("y" * (1 << 20))
