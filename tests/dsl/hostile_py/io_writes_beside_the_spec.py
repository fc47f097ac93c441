# corpus: same
"""Writes a spec and a module next to itself (not read by this run)."""

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

here = Path(__file__).parent
(here / "written_by_module.txt").write_text("apiVersion: nope")
