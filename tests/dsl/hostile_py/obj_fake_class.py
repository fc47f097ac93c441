# corpus: TS112
"""An object that claims to be a TrainingJob through __class__."""

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


class Fake:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return TrainingJob


impostor = Fake()
