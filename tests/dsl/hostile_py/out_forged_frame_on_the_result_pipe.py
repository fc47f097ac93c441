# corpus: TS117
"""Writes a result of its own to the result pipe and exits: it hands back what it says, checked like any."""

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
body = json.dumps({"specs": [], "error": None, "output": {"pieces": [], "dropped": 0}}).encode()
os.write(request["result_fd"], b"trainspec-result %d\n" % len(body) + body)
os._exit(0)
