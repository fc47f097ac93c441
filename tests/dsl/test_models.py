"""The spec models as a Python API, and their equivalence with YAML."""

from __future__ import annotations

import pytest

from trainspec import Checkpoint, ModelSize, Resources, Runtime, TrainingJob
from trainspec.dsl.framework.modeling import ValidationError
from trainspec.dsl.framework.types import Quantity
from trainspec.dsl.load.spec_sources import load_string
from trainspec.dsl.load.validation import _leaf

YAML = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {name: sft, namespace: team-nlp}
spec:
  runtime: trainspec-torch
  nodes: 2
  resourcesPerNode: {gpu: 8, memory: 1600Gi}
  checkpoint: {size: auto, model: {parameters: 70B}}
"""


def test_flat_python_construction_equals_yaml() -> None:
    python = TrainingJob(
        name="sft",
        namespace="team-nlp",
        runtime="trainspec-torch",
        nodes=2,
        resources_per_node=Resources(gpu=8, memory="1600Gi"),
        checkpoint=Checkpoint(size="auto", model=ModelSize(parameters="70B")),
    )
    (loaded,), problems = load_string(YAML)
    assert problems == []
    assert loaded.spec == python
    assert python.spec.resources_per_node.memory == Quantity.parse("1600Gi")


def test_python_api_rejects_bad_values_with_located_errors() -> None:
    with pytest.raises(ValidationError) as info:
        TrainingJob(name="Bad_Name", runtime="x", nodes=0, procs_per_nod=2)
    errors = {(e["type"], e["loc"]) for e in info.value.errors()}
    assert ("ts_name", ("metadata", "name")) in errors
    assert ("greater_than_equal", ("spec", "nodes")) in errors
    assert ("unknown_field", ("spec", "procs_per_nod")) in errors


def test_checkpoint_forms_are_exclusive() -> None:
    with pytest.raises(ValidationError, match="mutually exclusive"):
        Checkpoint(size="10Gi", claim_name="x")
    with pytest.raises(ValidationError, match="only apply to a new volume"):
        Checkpoint(uri="s3://b/p", storage_class="fast")
    with pytest.raises(ValidationError, match="needs one of"):
        Checkpoint()


def test_runtime_scope_and_namespace_agree() -> None:
    with pytest.raises(ValidationError, match=r"needs metadata\.namespace"):
        Runtime(name="r", framework="torch", image="i", scope="namespace")
    with pytest.raises(ValidationError, match="cluster-scoped runtime has no namespace"):
        Runtime(name="r", namespace="x", framework="torch", image="i")
    with pytest.raises(ValidationError, match="only for framework deepspeed or mpi"):
        Runtime(name="r", framework="torch", image="i", mpi={})


def test_counts_are_strict() -> None:
    for bad in ("2", 2.0, True):
        with pytest.raises(ValidationError):
            TrainingJob(name="a", runtime="b", nodes=bad)


def test_models_are_immutable() -> None:
    job = TrainingJob(name="a", runtime="b")
    with pytest.raises(ValidationError):
        job.spec.nodes = 3  # type: ignore[misc]


def test_leaf_annotation_lookup() -> None:
    assert _leaf(TrainingJob, ("spec", "image")) is str
    assert _leaf(TrainingJob, ("spec", "resourcesPerNode", "cpu")) is Quantity
    assert _leaf(TrainingJob, ("spec", "nope")) is None
