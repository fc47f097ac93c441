# corpus: TS203
"""object.__setattr__ of a count to an integer too long to print."""

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

object.__setattr__(job.spec, "nodes", 10**5000)
