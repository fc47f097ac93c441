"""Findings on compiled manifests land where the value came from, as lowering recorded it.

No command keeps a reverse table from manifest fields to spec fields: lowering records, for each
field it sets, the spec field behind it (``compiler.provenance.FieldSources``), and ``check``
places findings with that record. A value the job inherits from its runtime is located at the
runtime's line, not at the job's.
"""

from __future__ import annotations

from tests.checkcmd.conftest import RUNTIME_SPEC, check, line_of
from tests.checkcmd.test_checkcmd_crds import FAKE_TRAINJOB_CRD
from trainspec.compiler.pipeline import Options, run
from trainspec.compiler.provenance import FieldSources, Origin, SpecRef

JOB_WITHOUT_NODES = """
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata:
  name: llm-pretrain
  namespace: team-a
spec:
  runtime: torch-h100
  command: [torchrun, train.py]
  queue: gpu
"""


def test_a_value_from_the_runtime_is_located_in_the_runtime(write) -> None:
    crd_dir = write("crds/trainjob.yaml", FAKE_TRAINJOB_CRD).parent
    runtime = write(
        "specs/runtime.yaml", RUNTIME_SPEC.replace("  framework: torch\n", "  framework: torch\n  nodes: 8\n")
    )
    write("specs/job.yaml", JOB_WITHOUT_NODES)
    status, found = check(str(runtime.parent), "--crds", str(crd_dir))
    assert status == 1
    at = {
        (d["code"], d["file"], d["line"], d["column"], d["path"])
        for d in found
        if "numNodes" in d["message"] or d["path"] == "spec.nodes"
    }
    line, column = line_of(runtime, "  nodes: 8", "8")
    assert ("TS500", str(runtime), line, column, "spec.nodes") in at


def test_every_compiled_object_carries_its_provenance() -> None:
    result = run(["examples/"], Options(project=None))
    assert result.ok
    for output in result.outputs:
        assert len(output.provenance) == len(output.objects)
        for sources in output.provenance:
            assert sources.default is not None
            where = sources.default.location()
            assert where.file and where.line


def test_lookup_takes_the_longest_written_prefix() -> None:
    result = run(["examples/llama-sft"], Options(project=None))
    [job_output] = [o for o in result.outputs if o.path.endswith("llama-sft.yaml")]
    sources = job_output.provenance[-1]
    assert isinstance(sources, FieldSources)
    queue = sources.lookup(("metadata", "labels", "kueue.x-k8s.io/queue-name"))
    assert queue is not None and queue.path == ("spec", "queue")
    env = sources.lookup(("spec", "trainer", "env", 0, "value"))
    assert env is not None and env.path[:2] in {
        ("spec", "env"),
        ("spec", "secretEnv"),
        ("spec", "checkpoint"),
        ("spec", "data"),
    }
    # A field nobody recorded falls back to the document.
    assert sources.lookup(("spec", "nothing", "here")) == sources.default


def test_sourced_values_know_their_spec() -> None:
    result = run(["examples/llama-sft"], Options(project=None))
    [plan] = result.plans
    nodes = plan.resolved.nodes
    assert nodes.origin is Origin.JOB and isinstance(nodes.ref, SpecRef)
    location = nodes.location()
    assert location is not None and location.file.endswith("job.yaml") and location.path == "spec.nodes"
    inherited = [v for v in plan.resolved.resources.values() if v.origin is Origin.RUNTIME]
    assert inherited and all(v.location().file.endswith("runtime.yaml") for v in inherited)
