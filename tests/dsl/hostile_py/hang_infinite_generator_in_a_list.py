# corpus: TS115
"""A module-level list fed by an infinite generator."""

import itertools
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

jobs = [job, *(time.sleep(0.01) for _ in itertools.count())]
