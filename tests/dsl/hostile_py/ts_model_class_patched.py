# corpus: TS201
"""Makes the model class report no fields: the document handed back is validated again."""

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

TrainingJob._fields = classmethod(lambda cls: ())
