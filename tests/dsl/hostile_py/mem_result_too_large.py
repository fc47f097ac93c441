# corpus: TS121
"""Hands back more than 32 MiB of specs."""

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

jobs = [
    TrainingJob(name=f"big-{i}", runtime="trainspec-torch", image="example.com/train:1", args=["x" * 900_000])
    for i in range(40)
]
