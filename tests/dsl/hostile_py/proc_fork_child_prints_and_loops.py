# corpus: TS122
"""os.fork(): the copy prints and loops; its output is not the gate's, the copy is killed."""

import os
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

if os.fork() == 0:
    while True:
        print("from the fork", flush=True)
        time.sleep(0.01)
