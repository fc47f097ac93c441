# corpus: same
"""A non-daemon thread that sleeps forever: the specs still come back, the thread dies with the child."""

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

threading.Thread(target=time.sleep, args=(1e9,)).start()
