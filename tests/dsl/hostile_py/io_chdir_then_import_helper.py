# corpus: same
"""Changes the working directory, then imports a helper from its own directory."""

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

os.chdir("/")
import corpus_helper  # noqa: E402

assert corpus_helper.VALUE == 1
