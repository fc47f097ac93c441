"""The Ray head's size (``ray.headResources`` of a runtime or a job) on the ray target.

The default stays what the head always had (2 CPUs, 8Gi, no GPU); a set size reaches the head
container's requests and limits, a GPU head keeps Ray's training workers off its GPUs, bad values
are located errors, what Kueue counts for the head PodSet follows the new size, and the RayJob
still passes the KubeRay CRD.
"""

from __future__ import annotations

import pytest

from tests.compiler.test_ray import RUNTIME, _check, compile_text, job, rayjob_of
from trainspec.compiler.lower.ray.ray_job import HEAD_RESOURCES, HEAD_START_PARAMS
from trainspec.dsl.load.spec_sources import load_string
from trainspec.kueue.podsets import pod_requests


def head_of(rayjob: dict) -> dict:
    """The head group of a compiled RayJob."""
    group: dict = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]
    return group


def resources_of(group: dict) -> dict:
    """The head container's resources."""
    found: dict = group["template"]["spec"]["containers"][0]["resources"]
    return found


def runtime_with(ray: str) -> str:
    """The test runtime with a ``ray:`` block."""
    return RUNTIME + f"  ray: {ray}\n"


def test_without_the_field_the_head_keeps_its_default_size() -> None:
    head = head_of(rayjob_of(compile_text(RUNTIME, job())))
    assert resources_of(head) == {"requests": HEAD_RESOURCES, "limits": HEAD_RESOURCES}
    assert head["rayStartParams"] == HEAD_START_PARAMS


def test_a_runtime_head_size_reaches_requests_and_limits_and_missing_keys_keep_the_default() -> None:
    head = head_of(rayjob_of(compile_text(runtime_with("{headResources: {cpu: 4}}"), job())))
    assert resources_of(head) == {"requests": {"cpu": 4, "memory": "8Gi"}, "limits": {"cpu": 4, "memory": "8Gi"}}
    assert head["rayStartParams"] == {"num-cpus": "0"}  # still no Ray CPUs: workers never land on the head


def test_the_jobs_head_size_is_merged_over_the_runtimes() -> None:
    runtime = runtime_with("{headResources: {cpu: 4, memory: 16Gi}}")
    result = compile_text(runtime, job("ray: {headResources: {memory: 32Gi}}\n"))
    size = {"cpu": 4, "memory": "32Gi"}
    assert resources_of(head_of(rayjob_of(result))) == {"requests": size, "limits": size}
    (out,) = result.outputs
    ref = out.provenance[-1].lookup(
        ("spec", "rayClusterSpec", "headGroupSpec", "template", "spec", "containers", 0, "resources")
    )
    assert ref is not None and ref.path == ("spec", "ray", "headResources")


def test_a_gpu_head_gets_the_runtimes_gpu_resource_and_no_ray_gpus() -> None:
    rayjob = rayjob_of(compile_text(runtime_with("{headResources: {cpu: 8, memory: 64Gi, gpu: 1}}"), job()))
    head = head_of(rayjob)
    size = {"cpu": 8, "memory": "64Gi", "nvidia.com/gpu": 1}
    assert resources_of(head) == {"requests": size, "limits": size}
    # The head's GPU is the driver's: Ray must not place a training worker on it.
    assert head["rayStartParams"] == {"num-cpus": "0", "num-gpus": "0"}
    assert _check([rayjob]) == []


def test_gpu_zero_is_no_gpu_at_all() -> None:
    head = head_of(rayjob_of(compile_text(runtime_with("{headResources: {gpu: 0}}"), job())))
    assert resources_of(head)["limits"] == HEAD_RESOURCES
    assert head["rayStartParams"] == HEAD_START_PARAMS


@pytest.mark.parametrize(
    ("ray", "code", "path"),
    [
        ("{headResources: {cpu: 0}}", "TS203", "spec.ray"),
        ("{headResources: {memory: 0}}", "TS203", "spec.ray"),
        ("{headResources: {gpu: -1}}", "TS203", "spec.ray.headResources.gpu"),
        ("{headResources: {memory: lots}}", "TS204", "spec.ray.headResources.memory"),
        ("{headResorces: {cpu: 1}}", "TS200", "spec.ray.headResorces"),
    ],
)
def test_invalid_head_sizes_are_located_errors(ray: str, code: str, path: str) -> None:
    _, problems = load_string(runtime_with(ray), "t.yaml")
    assert [(d.code, d.path, d.line) for d in problems if d.is_error] == [(code, path, 9)]


def test_kueue_counts_the_head_podset_at_its_new_size() -> None:
    """Kueue's head PodSet is one pod of the head template: what it reserves quota for."""
    default = head_of(rayjob_of(compile_text(RUNTIME, job("queue: q\n"))))
    sized = head_of(rayjob_of(compile_text(runtime_with("{headResources: {cpu: 4, gpu: 1}}"), job("queue: q\n"))))
    assert {k: str(v) for k, v in pod_requests(default["template"]["spec"]).items()} == {
        "cpu": "2",
        "memory": str(8 * 2**30),
    }
    assert {k: str(v) for k, v in pod_requests(sized["template"]["spec"]).items()} == {
        "cpu": "4",
        "memory": str(8 * 2**30),
        "nvidia.com/gpu": "1",
    }


@pytest.mark.parametrize("ray", ["{headResources: {cpu: 500m, memory: 2Gi}}", "{headResources: {gpu: 2}}"])
def test_a_sized_head_passes_the_kuberay_crd(ray: str) -> None:
    rayjob = rayjob_of(compile_text(runtime_with(ray), job("nodes: 2\nqueue: q\n")))
    assert _check([rayjob]) == []


def test_the_head_size_on_another_engine_is_an_error_naming_it(tmp_path) -> None:
    """A Ray head size on a job that runs on Trainer or the Training Operator has nothing to size."""
    from trainspec.compiler.pipeline import Options, Stop, run

    spec = tmp_path / "job.yaml"
    spec.write_text(
        "apiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: j, namespace: n}\n"
        "spec:\n  runtime: trainspec-torch\n  command: [x]\n  ray: {headResources: {cpu: 4}}\n"
    )
    for engine in ("trainer", "training-operator"):
        result = run([str(spec)], Options(project=None, target={"engine": engine}, stop=Stop.CHECK))
        found = [d for d in result.diagnostics if d.code == "TS521"]
        assert found and found[0].path == "spec.ray" and engine in found[0].message, engine
    ray = run([str(spec)], Options(project=None, target={"engine": "ray"}, stop=Stop.CHECK))
    assert not [d for d in ray.diagnostics if d.code == "TS521"]
