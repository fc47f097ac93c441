# corpus: same
"""Imports the API under other names."""

import trainspec as ts
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

from trainspec.dsl import models as m  # noqa: E402

assert ts.TrainingJob is m.TrainingJob is TrainingJob
