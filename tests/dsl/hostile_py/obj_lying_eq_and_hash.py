# corpus: same
"""A subclass whose __eq__ and __hash__ lie."""

import random

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


class Liar(TrainingJob):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return random.randint(0, 1 << 30)


job = Liar(
    name="corpus-job",
    namespace="corpus",
    runtime="trainspec-torch",
    image="example.com/train:1",
    command=["python", "train.py"],
    nodes=1,
    resources_per_node=Resources(cpu=1, memory="1Gi"),
)
