"""Target versions: the matrix, Trainer 2.1 output (podTemplateOverrides), what 2.1 cannot run,
and the project file's spec.target."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml

from tests.checkcmd.conftest import RUNTIME_SPEC, check, job_spec, line_of
from tests.conftest import run_cli
from trainspec.cli.main import main
from trainspec.compiler.lower.trainer.trainer_v21 import trainjob_v21
from trainspec.compiler.targets import MATRIX, Target, matrix_problems, parse_target_option


def compile_stream(*args: str) -> tuple[int, list[dict], str]:
    """``trainspec compile ARGS -o -`` in-process: (exit code, objects, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["compile", *args, "-o", "-"])
    return code, [d for d in yaml.safe_load_all(out.getvalue()) if d], err.getvalue()


def trainjobs(objects: list[dict]) -> dict[str, dict]:
    """TrainJobs by the job they run (``<job>-<run id>`` carries ``trainspec.dev/job: <job>``)."""
    return {o["metadata"]["labels"]["trainspec.dev/job"]: o for o in objects if o["kind"] == "TrainJob"}


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("trainer=2.3,kueue=0.19", {"trainer": (2, 3), "kueue": (0, 19)}),
        ("kueue=none", {"kueue": None}),
        (" trainer = v2.1.0 ", {"trainer": (2, 1)}),
    ],
)
def test_parse_target_option(text: str, fields: dict) -> None:
    assert parse_target_option(text) == fields


@pytest.mark.parametrize("text", ["trainer", "trainer=latest", "jobset=0.12", "trainer=none"])
def test_bad_target_options_are_usage_errors(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected trainer=|is not a version"):
        parse_target_option(text)
    proc = run_cli("compile", "examples/ddp-cpu.yaml", "-o", "-", "--target", text)
    assert proc.returncode == 2 and "--target" in proc.stderr


@pytest.mark.parametrize(
    ("trainer", "kueue", "found"),
    [
        ((2, 3), (0, 19), []),
        ((2, 2), (0, 17), []),
        ((2, 1), (0, 16), []),
        ((2, 1), (0, 15), []),
        ((2, 3), None, []),
        ((2, 1), (0, 19), [("TS520", "error")]),
        ((2, 1), (0, 17), [("TS520", "error")]),
        ((2, 2), (0, 16), [("TS520", "error")]),
        ((2, 3), (0, 14), [("TS520", "error")]),
        ((2, 1), (0, 14), [("TS520", "warning")]),
        ((2, 3), (0, 13), [("TS520", "error")]),
        ((2, 0), (0, 14), [("TS523", "error")]),
        ((2, 4), None, [("TS523", "error")]),
        ((2, 3), (0, 20), [("TS523", "warning")]),
    ],
)
def test_version_matrix(trainer, kueue, found) -> None:
    problems = matrix_problems(Target(trainer=trainer, kueue=kueue))
    assert [(code, severity.value) for code, severity, _, _ in problems] == found


def test_trainer_21_with_kueue_019_is_refused_naming_the_matrix() -> None:
    proc = run_cli("compile", "examples/ddp-cpu.yaml", "-o", "-", "--target", "trainer=2.1,kueue=0.19")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "--target: error[TS520]: Trainer 2.1 with Kueue 0.19 is a pairing known to fail" in proc.stderr
    assert MATRIX in proc.stderr and "admitted but never start" in proc.stderr
    status, found = check("examples/ddp-cpu.yaml", "--target", "trainer=2.1,kueue=0.19")
    assert status == 1 and [(d["code"], d["file"]) for d in found if d["severity"] == "error"] == [
        ("TS520", "--target")
    ]


def test_trainer_21_output_uses_pod_template_overrides(write) -> None:
    write("runtime.yaml", RUNTIME_SPEC)
    job = write(
        "job.yaml",
        job_spec(
            2,
            extra="""
        maxRunTime: 12h
        topology: {mode: preferred, level: topology.example.com/rack}
        podLabels: {team: nlp}
        checkpoint: {size: 100Gi, path: /ckpt}
        """,
        ),
    )
    status, objects, err = compile_stream(str(job.parent), "--target", "trainer=2.1,kueue=0.16")
    assert status == 0
    spec = trainjobs(objects)["llm-pretrain"]["spec"]
    assert "runtimePatches" not in spec and "activeDeadlineSeconds" not in spec
    assert spec["podTemplateOverrides"] == [
        {
            "targetJobs": [{"name": "node"}],
            "metadata": {
                "labels": {
                    "team": "nlp",
                    "trainspec.dev/job": "llm-pretrain",
                    "trainspec.dev/namespace": "team-a",
                    "trainspec.dev/run": trainjobs(objects)["llm-pretrain"]["metadata"]["labels"]["trainspec.dev/run"],
                    "trainspec.dev/runtime": "torch-h100",
                    "trainspec.dev/team": "team-a",
                },
                "annotations": {"kueue.x-k8s.io/podset-preferred-topology": "topology.example.com/rack"},
            },
            "spec": {
                "volumes": [
                    {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "llm-pretrain-checkpoints"}}
                ],
                "containers": [{"name": "node", "volumeMounts": [{"name": "checkpoints", "mountPath": "/ckpt"}]}],
            },
        }
    ]
    # Kueue still enforces the run time; Trainer 2.1 cannot.
    labels = trainjobs(objects)["llm-pretrain"]["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/max-exec-time-seconds"] == "43200"
    line, col = line_of(job, "maxRunTime: 12h", "12h")
    assert f"{job}:{line}:{col}: warning[TS522]: spec.maxRunTime: maxRunTime cannot be enforced by Trainer 2.1" in err


def test_identical_overrides_share_one_entry() -> None:
    status, objects, _ = compile_stream("examples/deepspeed.yaml", "--target", "trainer=2.1,kueue=0.16")
    assert status == 0
    [override] = trainjobs(objects)["bert-zero3"]["spec"]["podTemplateOverrides"]
    assert override["targetJobs"] == [{"name": "launcher"}, {"name": "node"}]


def test_trainer_21_rejects_jax_and_data_sharding() -> None:
    status, objects, err = compile_stream(
        "examples/jax.yaml", "examples/llama-sft", "--target", "trainer=2.1,kueue=0.16"
    )
    assert status == 1 and objects == []
    assert ("examples/jax.yaml:12:12: error[TS521]: spec.runtime: runtime trainspec-jax is a JAX runtime") in err
    assert "examples/llama-sft/job.yaml:24:3: error[TS521]: spec.data" in err
    assert "examples/llama-sft/runtime.yaml:26:3: error[TS521]: spec.dataSharding" in err


def test_user_jax_runtime_is_rejected_at_its_framework(write) -> None:
    runtime = write("rt.yaml", RUNTIME_SPEC.replace("framework: torch", "framework: jax"))
    status, _, err = compile_stream(str(runtime), "--target", "trainer=2.1,kueue=0.15")
    assert status == 1
    assert f"{runtime}:6:14: error[TS521]: spec.framework: framework jax needs Trainer 2.2+" in err


def test_trainer_22_and_23_emit_the_same() -> None:
    newest = compile_stream("examples/", "--target", "trainer=2.3,kueue=0.19")
    older = compile_stream("examples/", "--target", "trainer=2.2,kueue=0.17")
    assert newest[0] == older[0] == 0 and newest[1] == older[1]
    assert newest == compile_stream("examples/")  # the default target


PROJECT = """
apiVersion: trainspec.dev/v1alpha1
kind: Project
spec:
  target:
    trainer: "2.1"
    kueue: "{kueue}"
"""


def test_project_target_is_honoured(write) -> None:
    project = write("trainspec.yaml", PROJECT.format(kueue="0.16"))
    status, objects, _ = compile_stream("examples/ddp-cpu.yaml", "--project", str(project))
    assert status == 0
    assert "activeDeadlineSeconds" not in trainjobs(objects)["ddp-cpu"]["spec"]
    # The command line wins over the project file, field by field.
    status, objects, _ = compile_stream("examples/ddp-cpu.yaml", "--project", str(project), "--target", "trainer=2.3")
    assert status == 1  # trainer 2.3 with the project's Kueue 0.16
    status, objects, _ = compile_stream(
        "examples/ddp-cpu.yaml", "--project", str(project), "--target", "trainer=2.3,kueue=0.19"
    )
    assert status == 0 and trainjobs(objects)["ddp-cpu"]["spec"]["activeDeadlineSeconds"] == 1800


def test_project_target_pairing_is_located_in_the_project_file(write) -> None:
    project = write("trainspec.yaml", PROJECT.format(kueue="0.19"))
    _status, found = check("examples/ddp-cpu.yaml", "--project", str(project))
    [d] = [d for d in found if d["severity"] == "error"]
    assert (d["code"], d["file"], d["path"]) == ("TS520", str(project), "spec.target.kueue")
    assert (d["line"], d["column"]) == line_of(project, 'kueue: "0.19"', '"0.19"')


def test_typed_transform_refuses_what_21_cannot_express() -> None:
    from trainspec.k8s import (
        JobSetSpecPatch,
        JobSetTemplatePatch,
        JobTemplatePatch,
        MetadataPatch,
        ObjectMeta,
        ReplicatedJobPatch,
        RuntimePatch,
        RuntimeRef,
        TrainingRuntimeSpecPatch,
        TrainJob,
        TrainJobSpec,
    )

    patch = RuntimePatch(
        manager="trainspec.dev/compiler",
        training_runtime_spec=TrainingRuntimeSpecPatch(
            template=JobSetTemplatePatch(
                metadata=MetadataPatch(labels={"a": "b"}),
                spec=JobSetSpecPatch(
                    replicated_jobs=[
                        ReplicatedJobPatch(
                            name="node", template=JobTemplatePatch(metadata=MetadataPatch(labels={"job": "level"}))
                        )
                    ]
                ),
            )
        ),
    )
    job = TrainJob(
        metadata=ObjectMeta(name="x"), spec=TrainJobSpec(runtime_ref=RuntimeRef(name="r"), runtime_patches=[patch])
    )
    with pytest.raises(ValueError, match="Job-level metadata"):
        trainjob_v21(job)
    jobset_only = TrainJob(
        metadata=ObjectMeta(name="x"),
        spec=TrainJobSpec(
            runtime_ref=RuntimeRef(name="r"),
            runtime_patches=[
                RuntimePatch(
                    manager="trainspec.dev/compiler",
                    training_runtime_spec=TrainingRuntimeSpecPatch(
                        template=JobSetTemplatePatch(metadata=MetadataPatch(labels={"a": "b"}))
                    ),
                ),
                RuntimePatch(manager="kueue.x-k8s.io/manager"),
            ],
        ),
    )
    converted = trainjob_v21(jobset_only)
    assert converted.spec.labels == {"a": "b"} and converted.spec.pod_template_overrides is None


def test_podsets_read_pod_template_overrides() -> None:
    """A Trainer 2.1 TrainJob read from a file: its overrides place the pods like runtimePatches do."""
    from trainspec.kueue.podsets import trainjob_podsets

    runtime = {
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "nodeSelector": {"pool": "a"},
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "resources": {
                                                        "requests": {"cpu": "8"},
                                                        "limits": {"nvidia.com/gpu": 8},
                                                    },
                                                }
                                            ],
                                        }
                                    }
                                },
                            },
                        }
                    ]
                }
            },
        }
    }
    job = {
        "spec": {
            "trainer": {"numNodes": 3, "resourcesPerNode": {"requests": {"cpu": "16"}}},
            "podTemplateOverrides": [
                {
                    "targetJobs": [{"name": "node"}],
                    "metadata": {"annotations": {"k": "v"}},
                    "spec": {"nodeSelector": {"zone": "z1"}},
                }
            ],
        }
    }
    [merged] = trainjob_podsets(job, runtime)
    assert (merged.count, merged.node_selector, merged.annotations) == (3, {"pool": "a", "zone": "z1"}, {"k": "v"})
    assert {k: int(v) for k, v in merged.requests.items()} == {"cpu": 16, "nvidia.com/gpu": 8}  # 2.3: merged
    [replaced] = trainjob_podsets(job, runtime, merge_resources=False)
    assert {k: int(v) for k, v in replaced.requests.items()} == {"cpu": 16}  # 2.1/2.2: replaced


def test_check_reads_the_target_for_compiled_output(write: object, tmp_path: Path) -> None:
    status, found = check("examples/ddp-cpu.yaml", "--target", "trainer=2.1,kueue=0.16")
    # TS524: the CRDs shipped with trainspec are Trainer 2.3's, so the 2.1 output is not CRD-checked.
    assert status == 0 and {d["code"] for d in found} == {"TS522", "TS524"}
