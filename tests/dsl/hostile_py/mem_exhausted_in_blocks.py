# corpus: TS112
"""Maps 64 MiB blocks until its address space runs out."""

import mmap

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

blocks = []
while True:
    blocks.append(mmap.mmap(-1, 1 << 26))
