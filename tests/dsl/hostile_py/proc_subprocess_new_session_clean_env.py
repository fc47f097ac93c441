# corpus: TS122
"""A subprocess in a session of its own with an empty environment."""

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

subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True, env={})
