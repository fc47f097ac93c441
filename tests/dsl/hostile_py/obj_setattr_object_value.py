# corpus: TS200|TS201|TS202
"""object.__setattr__ of a field to an arbitrary object."""

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

object.__setattr__(job.spec, "nodes", object())
