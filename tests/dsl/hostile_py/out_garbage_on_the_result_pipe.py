# corpus: TS120
"""Writes garbage to the result pipe, then ends normally: a result that is none."""

import json
import os
from pathlib import Path

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

request = json.loads(Path("/proc/self/cmdline").read_bytes().split(b"\0")[4])
os.write(request["result_fd"], b"garbage, not a frame\n" * 4)
