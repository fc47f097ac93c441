"""Emitted dicts must only use key paths, types and enum values the real CRDs declare."""

from __future__ import annotations

from typing import Any

import pytest

from k8s import samples
from k8s.crd_schema import check, crd_schema, missing_reason
from trainspec.k8s import (
    ClusterTrainingRuntime,
    JobSetSpec,
    Resource,
    TrainingRuntime,
    TrainJob,
    to_dict,
)

pytestmark = pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or "")


def problems_of(obj: Resource) -> list[str]:
    return check(to_dict(obj), crd_schema(obj.kind))


@pytest.mark.parametrize(
    "factory",
    [samples.patched_trainjob, samples.torch_runtime, samples.mpi_runtime],
    ids=lambda f: f.__name__,
)
def test_realistic_objects_match_their_crd(factory: Any) -> None:
    assert problems_of(factory()) == []


def test_realistic_jobset_specs_match_the_jobset_crd() -> None:
    schema = crd_schema("JobSet")["properties"]["spec"]
    for runtime in (samples.torch_runtime(), samples.mpi_runtime()):
        assert check(to_dict(runtime.spec.template.spec), schema, ".spec") == []


@pytest.mark.parametrize("cls", [TrainJob, ClusterTrainingRuntime, TrainingRuntime], ids=lambda c: c.__name__)
def test_every_field_of_every_model_exists_in_the_crd(cls: type) -> None:
    # Maximal instances set every field of every reachable model, so this checks every wire
    # name (and every Literal value where the CRD has an enum) against the schema.
    for variant in range(samples.max_options(cls)):
        obj = samples.maximal(cls, variant)
        assert problems_of(obj) == [], f"variant {variant}"


def test_every_jobset_field_exists_in_the_jobset_crd() -> None:
    schema = crd_schema("JobSet")["properties"]["spec"]
    for variant in range(samples.max_options(JobSetSpec)):
        assert check(to_dict(samples.maximal(JobSetSpec, variant)), schema, ".spec") == []


def test_checker_reports_unknown_fields_types_enums_and_required() -> None:
    # The checker itself must catch what the tests above rely on it to catch.
    job = to_dict(samples.patched_trainjob())
    job["spec"]["trainer"]["numProcPerNodee"] = 1
    job["spec"]["trainer"]["numNodes"] = "4"
    del job["spec"]["runtimePatches"][0]["manager"]
    assert sorted(check(job, crd_schema("TrainJob"))) == [
        ".spec.runtimePatches[0]: missing required field 'manager'",
        ".spec.trainer.numNodes: expected integer, got str",
        ".spec.trainer: unknown field 'numProcPerNodee'",
    ]
    runtime = to_dict(samples.torch_runtime())
    runtime["spec"]["template"]["spec"]["replicatedJobs"][1]["dependsOn"][0]["status"] = "Done"
    runtime["spec"]["mlPolicy"]["torch"]["numProcPerNode"] = "auto"  # removed in Trainer v2.2
    assert sorted(check(runtime, crd_schema("ClusterTrainingRuntime"))) == [
        ".spec.mlPolicy.torch: unknown field 'numProcPerNode'",
        (".spec.template.spec.replicatedJobs[1].dependsOn[0].status: 'Done' is not one of ['Ready', 'Complete']"),
    ]
