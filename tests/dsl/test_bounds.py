"""Every number of a spec is bounded as the API server (or the component reading it) bounds it,
with a located diagnostic and in linear time (issue 10, item 3)."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import run_cli
from trainspec.dsl.kube_facts import INT32_MAX, INT64_MAX, MAX_CPU_MILLI, MAX_USER_ID, SEED_MAX
from trainspec.dsl.load.spec_sources import load_string
from trainspec.dsl.spec import models

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: sft, namespace: team-nlp}}
spec:
  runtime: trainspec-torch
{body}
"""

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {{name: rt}}
spec:
  framework: mpi
  image: example.com/mpi:1
{body}
"""


def codes(text: str) -> list[tuple[str, int | None]]:
    _, problems = load_string(text)
    return [(d.code, d.line) for d in problems]


# (document template, YAML body at the bound, the same just past it)
BOUNDS = [
    (JOB, "  nodes: 10000", "  nodes: 10001"),
    (JOB, "  procsPerNode: 256", "  procsPerNode: 257"),
    (JOB, "  resourcesPerNode: {gpu: 64}", "  resourcesPerNode: {gpu: 65}"),
    (JOB, "  checkpoint: {size: 1Ti, keep: 1000}", "  checkpoint: {size: 1Ti, keep: 1001}"),
    (JOB, f"  data: {{source: s3://b/d, seed: {SEED_MAX}}}", f"  data: {{source: s3://b/d, seed: {SEED_MAX + 1}}}"),
    # Kueue parses kueue.x-k8s.io/max-exec-time-seconds as an int32 and ignores it beyond.
    (JOB, f"  maxRunTime: {INT32_MAX}s", f"  maxRunTime: {INT32_MAX + 1}s"),
    (JOB, "  maxRunTime: 24855d", "  maxRunTime: 24856d"),
    # A quantity is at most 2^63-1 base units; CPU is read in milli-cores.
    (JOB, f"  resourcesPerNode: {{memory: '{INT64_MAX}'}}", f"  resourcesPerNode: {{memory: '{INT64_MAX + 1}'}}"),
    (JOB, f"  resourcesPerNode: {{memory: {INT64_MAX}}}", f"  resourcesPerNode: {{memory: {INT64_MAX + 1}}}"),
    (JOB, "  resourcesPerNode: {memory: 7Ei}", "  resourcesPerNode: {memory: 8Ei}"),
    (JOB, f"  resourcesPerNode: {{cpu: {MAX_CPU_MILLI}m}}", f"  resourcesPerNode: {{cpu: {MAX_CPU_MILLI + 1}m}}"),
    (
        JOB,
        f"  resourcesPerNode: {{extra: {{example.com/fpga: {INT64_MAX}}}}}",
        f"  resourcesPerNode: {{extra: {{example.com/fpga: {INT64_MAX + 1}}}}}",
    ),
    (JOB, "  resourcesPerNode: {memory: 0}", "  resourcesPerNode: {memory: -1}"),
    (JOB, "  checkpoint: {size: 1}", "  checkpoint: {size: 0}"),
    # 100T parameters is the most an auto-sized volume can hold below 2^63-1 bytes.
    (
        JOB,
        "  checkpoint: {size: auto, model: {parameters: 100T}}",
        "  checkpoint: {size: auto, model: {parameters: 100.000000000001T}}",
    ),
    (
        JOB,
        "  checkpoint: {size: auto, model: {parameters: 100000000000000}}",
        "  checkpoint: {size: auto, model: {parameters: 100000000000001}}",
    ),
    (RUNTIME, "  restarts: {max: 1000}", "  restarts: {max: 1001}"),
    (RUNTIME, f"  mpi: {{runAsUser: {MAX_USER_ID}}}", f"  mpi: {{runAsUser: {MAX_USER_ID + 1}}}"),
    (RUNTIME, "  mpi: {sshPort: 65535}", "  mpi: {sshPort: 65536}"),
    (
        RUNTIME,
        f"  scheduling: {{tolerations: [{{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: {INT64_MAX}}}]}}",
        f"  scheduling: {{tolerations: [{{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: {INT64_MAX + 1}}}]}}",
    ),
    (RUNTIME, "  scheduling: {gangTimeout: 596523h}", "  scheduling: {gangTimeout: 596524h}"),
]


@pytest.mark.parametrize(("template", "at_max", "past_max"), BOUNDS, ids=[b[2].strip() for b in BOUNDS])
def test_a_bound_takes_its_maximum_and_rejects_one_more(template: str, at_max: str, past_max: str) -> None:
    assert codes(template.format(body=at_max)) == []
    assert codes(template.format(body=past_max)) == [("TS203", 6 if template is JOB else 7)]


@pytest.mark.parametrize("value", ["1e5000", "1e3000000", "1e99999999999999", "'" + "9" * 100_000 + "'"])
def test_huge_quantities_are_located_range_errors(value: str) -> None:
    assert codes(JOB.format(body=f"  resourcesPerNode: {{memory: {value}}}")) == [("TS203", 6)]


@pytest.mark.parametrize(
    "body",
    [
        "  maxRunTime: " + "9" * 1_000_000 + "s",
        "  checkpoint: {size: auto, model: {parameters: " + "9" * 1_000_000 + "B}}",
        "  checkpoint: {size: auto, model: {parameters: 1." + "9" * 1_000_000 + "B}}",
    ],
)
def test_a_megabyte_of_digits_is_counted_not_converted(body: str) -> None:
    """With int/str conversions capped at their minimum, converting the digits would be an
    internal error (a ValueError); the checks read their length instead."""
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        found = codes(JOB.format(body=body))
    finally:
        sys.set_int_max_str_digits(previous)
    assert [code for code, _ in found] in (["TS203"], [])
    if "1." not in body:
        assert found == [("TS203", 6)]


def test_fractional_parameter_counts_keep_their_meaning() -> None:
    (loaded,), problems = load_string(JOB.format(body="  checkpoint: {size: auto, model: {parameters: 7.5B}}"))
    assert problems == [] and loaded.spec.spec.checkpoint.model.parameters.count == 7_500_000_000


def test_the_products_of_count_bounds_fit_int32() -> None:
    """nodes x procsPerNode is the world size and the shard count, nodes x gpu the GPUs of a job:
    all land in int32 fields and env values read as int32, so their bounds' products must fit."""
    job = models.TrainingJobSpec.model_fields
    runtime = models.RuntimeSpec.model_fields
    nodes = max(job["nodes"].le, runtime["nodes"].le, runtime["max_nodes"].le)
    procs = max(job["procs_per_node"].le, runtime["procs_per_node"].le)
    gpus = models.Resources.model_fields["gpu"].le
    assert nodes * procs <= INT32_MAX
    assert nodes * gpus <= INT32_MAX
    assert models.Restarts.model_fields["max"].le <= INT32_MAX
    assert models.Checkpoint.model_fields["keep"].le <= INT32_MAX


@pytest.mark.parametrize("value", ["1e5000", "1e3000000"])
@pytest.mark.parametrize("command", [["validate"], ["compile", "-o", "-", "--no-project"]])
def test_the_cli_reports_huge_quantities_and_exits_1(tmp_path, value: str, command: list[str]) -> None:
    spec = tmp_path / "job.yaml"
    spec.write_text(JOB.format(body=f"  resourcesPerNode: {{memory: {value}}}"))
    proc = run_cli(command[0], str(spec), *command[1:])
    assert proc.returncode == 1, proc.stderr
    output = proc.stdout + proc.stderr
    assert "job.yaml:6:" in output and "error[TS203]" in output and "spec.resourcesPerNode.memory" in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    "arguments",
    ["nodes=10**5000", "resources_per_node=Resources(memory=10**5000)", "resources_per_node=Resources(cpu=10**30)"],
)
def test_a_python_spec_with_a_huge_int_gets_a_range_error(tmp_path, arguments: str) -> None:
    """An int too long to print (more than 4300 digits) is described, never printed."""
    spec = tmp_path / "job.py"
    spec.write_text(
        "from trainspec import Resources, TrainingJob\n"
        f"job = TrainingJob(name='x', runtime='trainspec-torch', {arguments})\n"
    )
    proc = run_cli("validate", str(spec), "--no-project")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.count("error[TS203]") == 1 and "TS112" not in proc.stdout, proc.stdout
    assert len(proc.stdout) < 1000


def test_the_largest_auto_sized_checkpoint_is_a_quantity() -> None:
    """100T parameters, fp32 weights, 64 bytes of optimizer state each, keep 1000, +20%: the
    volume still fits 2^63-1 bytes, so the compiler can always write it as a quantity."""
    from trainspec.compiler.sizing import GI, checkpoint_size
    from trainspec.dsl.framework.quantity import Quantity
    from trainspec.dsl.spec.models import ModelSize

    fields = models.ModelSize.model_fields
    model = ModelSize(parameters="100T", dtype="fp32", optimizer_bytes_per_param=fields["optimizer_bytes_per_param"].le)
    size = checkpoint_size(model, keep=models.Checkpoint.model_fields["keep"].le)
    assert size.volume_gi * GI <= INT64_MAX
    assert Quantity.parse(f"{size.volume_gi}Gi").value == size.volume_gi * GI
