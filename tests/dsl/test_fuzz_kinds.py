"""Fuzz the keys that decide whether a document is a spec: a diagnostic, or the same objects.

An extension of ``tests/test_fuzz_specs.py`` for issue 10 item 4a. Valid example documents get
their ``apiVersion``/``kind`` keys and values mutated (renamed, deleted, replaced by near
misses or by other groups' values); loading must then either report an error or give exactly
the objects the original gives. A document may never silently drop out.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import EXAMPLES
from trainspec.dsl.diagnostics import CODES
from trainspec.dsl.load.loaded import ForeignDoc
from trainspec.dsl.load.spec_sources import load_string

SOURCES = [
    (EXAMPLES / name).read_text()
    for name in ("ddp-cpu.yaml", "jax.yaml", "deepspeed.yaml", "llama-sft/runtime.yaml", "llama-sft/job.yaml")
]
SOURCES.append(SOURCES[-2] + "---\n" + SOURCES[-1])

KEYS = {
    "apiVersion": [
        "apiVesion",
        "apiversion",
        "ApiVersion",
        "api_version",
        "apiVersions",
        "version",
        "x",
        "kind",
        "metadata",
    ],
    "kind": ["Kind", "kimd", "kinds", "type", "x", "apiVersion", "metadata"],
}
API_VERSIONS = [
    "",
    "~",
    "1",
    "[]",
    "{}",
    "v1",
    "apps/v1",
    "batch/v1",
    "trainspec.dev",
    "trainspec.dev/v1",
    "trainspec.dev/v1beta1",
    "trainspec.dv/v1alpha1",
    "Trainspec.dev/v1alpha1",
    "trainspec.io/v1alpha1",
    "trainer.kubeflow.org/v1alpha1",
    "kubeflow.org/v1",
    "trainspec.dev/v1alpha1",
    "'trainspec.dev/v1alpha1 '",
]
KINDS = [
    "",
    "~",
    "1",
    "[]",
    "TrainJob",
    "TrainingJob",
    "Runtime",
    "Project",
    "TrainingJobs",
    "trainingjob",
    "Runtim",
    "ClusterTrainingRuntime",
    "Deployment",
    "ConfigMap",
    "PersistentVolumeClaim",
]


def _objects(text: str) -> tuple[list[tuple[str, str]], list, list[ForeignDoc]]:
    foreign: list[ForeignDoc] = []
    specs, problems = load_string(text, "fuzz.yaml", foreign=foreign)
    return sorted((s.kind, s.name) for s in specs), problems, foreign


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(SOURCES), data=st.data())
def test_mutated_api_version_or_kind_never_drops_a_document(source: str, data: st.DataObject) -> None:
    original, original_problems, _ = _objects(source)
    assert original and not any(d.is_error for d in original_problems)
    lines = source.splitlines()
    targets = [i for i, line in enumerate(lines) if line.startswith(("apiVersion:", "kind:"))]
    for index in data.draw(st.lists(st.sampled_from(targets), min_size=1, max_size=4, unique=True)):
        key = lines[index].split(":", 1)[0]
        op = data.draw(st.sampled_from(["rename", "delete", "value", "both"]))
        if op == "delete":
            lines[index] = "#"
            continue
        new_key = data.draw(st.sampled_from(KEYS[key])) if op in ("rename", "both") else key
        choices = API_VERSIONS if key == "apiVersion" else KINDS
        value = data.draw(st.one_of(st.sampled_from(choices), st.text("abcdefgjkTv./", max_size=12)))
        new_value = value if op in ("value", "both") else lines[index].split(":", 1)[1].strip()
        lines[index] = f"{new_key}: {new_value}"
    objects, problems, foreign = _objects("\n".join(lines) + "\n")
    for diagnostic in problems:
        assert diagnostic.code in CODES and diagnostic.file == "fuzz.yaml"
    assert any(d.is_error for d in problems) or objects == original, (objects, original, foreign)
