# corpus: same
"""Replaces trainspec.dsl.diagnostics internals in its own process."""

import trainspec.dsl.diagnostics as d
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

d.CODES.clear()
d.has_errors = lambda diagnostics: False
d.Diagnostic = None
