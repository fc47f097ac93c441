# corpus: TS120
"""A thread ends the process while the module still runs."""

import os
import threading
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

threading.Thread(target=lambda: (time.sleep(0.05), os._exit(0))).start()
time.sleep(5)
