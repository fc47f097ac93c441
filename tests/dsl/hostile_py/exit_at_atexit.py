# corpus: same
"""os._exit(0) registered with atexit: the child never runs atexit handlers."""

import atexit
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

atexit.register(os._exit, 0)
