# corpus: same TS116
"""Prints what looks like trainspec's result: stdout is never read as one."""

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

print("trainspec-child 1 ready")
print("trainspec-result 2")
print("{}")
