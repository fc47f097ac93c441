# corpus: TS112
"""sys.exit(0): SystemExit is an error of the module, not the gate's status."""

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

sys.exit(0)
