# corpus: same TS116
"""A subprocess that prints and is waited for: its output is a note."""

import subprocess
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

subprocess.run([sys.executable, "-c", "print(1)"], check=True)
