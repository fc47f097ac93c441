"""Engines as dialects: one interface, one folder per engine, no engine reaching into another.

Every engine's dialect provides every member of :class:`Dialect`; no dialect inherits from
another; the engine folders import no other engine's modules and no private name of a shared
module; and the name budget (TS401) names the names the job's own engine derives.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from trainspec.compiler.engines import DIALECT_MODULES, Engine
from trainspec.compiler.lower.dialects import Dialect, dialect_for
from trainspec.compiler.pipeline import Options, Stop, run
from trainspec.compiler.targets import Target
from trainspec.dsl.load.spec_sources import load_string

LOWER = Path(__file__).resolve().parents[2] / "trainspec" / "compiler" / "lower"
FOLDERS = {engine: DIALECT_MODULES[engine].split(".")[-2] for engine in Engine}


def _members() -> set[str]:
    attributes = set(Dialect.__annotations__)
    methods = {name for name, value in vars(Dialect).items() if callable(value) and not name.startswith("_")}
    return attributes | methods


@pytest.mark.parametrize("engine", list(Engine))
def test_every_engine_implements_the_whole_interface(engine: Engine) -> None:
    dialect = dialect_for(Target(), engine)
    missing = sorted(name for name in _members() if not hasattr(dialect, name))
    assert not missing, f"{engine.value}: {missing}"
    assert dialect.name is engine
    assert type(dialect).__mro__[1:] == (object,), "dialects share code by functions, not by inheritance"


@pytest.mark.parametrize("engine", list(Engine))
def test_each_engine_folder_imports_no_other_engine_and_no_private_name(engine: Engine) -> None:
    others = tuple(f"trainspec.compiler.lower.{FOLDERS[e]}" for e in Engine if e is not engine)
    found = []
    for path in sorted((LOWER / FOLDERS[engine]).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith(others):
                    found.append(f"{path.name}: {node.module}")
                own = node.module.startswith(f"trainspec.compiler.lower.{FOLDERS[engine]}")
                found += [
                    f"{path.name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_") and not own
                ]
    assert not found


def test_the_trainer_version_chooses_the_shape_not_another_dialect() -> None:
    assert type(dialect_for(Target(trainer=(2, 1)), Engine.TRAINER)) is type(dialect_for(Target(), Engine.TRAINER))


def test_the_default_engine_is_the_targets() -> None:
    assert dialect_for(Target(engine=Engine.RAY)).name is Engine.RAY
    with pytest.raises(ValueError, match="engine must be one of trainer, ray, training-operator"):
        dialect_for(None, "slurm")


# -- the name budget is the engine's --------------------------------------------------------------

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {{name: rt}}
spec:
  engine: {engine}
  framework: torch
  image: img:1
  resourcesPerNode: {{cpu: 4, memory: 8Gi}}
"""
JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: {name}, namespace: ns}}
spec:
  runtime: rt
  nodes: {nodes}
  command: [python, train.py]
"""


def _name_problems(engine: Engine, name: str, nodes: int = 2) -> list[str]:
    text = textwrap.dedent(RUNTIME.format(engine=engine.value)) + "---\n" + JOB.format(name=name, nodes=nodes)
    specs, problems = load_string(text, "t.yaml")
    assert not [d for d in problems if d.is_error]
    result = run(specs, Options(project=None, stop=Stop.CHECK))
    return [d.message for d in result.diagnostics if d.code == "TS401"]


def test_a_long_ray_job_name_is_measured_against_kuberays_names() -> None:
    name = "r" + "a" * 49  # 50 characters
    (message,) = _name_problems(Engine.RAY, name)
    assert "RayJob named <name>-<run>" in message and "RayCluster <name>-<run>-xxxxx" in message
    assert "-node-" not in message and "pod names like" not in message  # no Trainer pod shapes
    assert message.endswith("it may have at most 40")


def test_a_long_training_operator_job_name_names_the_operators_pod() -> None:
    name = "t" + "a" * 49
    (message,) = _name_problems(Engine.TRAINING_OPERATOR, name)
    assert f"'{name}-xxxxxx-master-0'" in message and "-node-" not in message


def test_a_long_trainer_job_name_names_jobsets_pods() -> None:
    (message,) = _name_problems(Engine.TRAINER, "n" + "a" * 49)
    assert "pod names like <name>-<run>-node-0-1-xxxxx" in message


def test_a_name_within_kuberays_budget_passes_though_a_trainer_pod_would_not_fit() -> None:
    # 40 characters: a 101-node TrainJob's pods (<name>-<run>-node-0-100-xxxxx) need a shorter one.
    assert _name_problems(Engine.RAY, "r" + "a" * 39, nodes=101) == []
    assert _name_problems(Engine.TRAINER, "r" + "a" * 39, nodes=101) != []


@pytest.mark.parametrize(
    ("engine", "spec", "finished", "failed"),
    [
        (
            Engine.TRAINER,
            "examples/ddp-cpu.yaml",
            {"conditions": [{"type": "Suspended", "status": "False"}, {"type": "Complete", "status": "True"}]},
            {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]},
        ),
        (
            Engine.RAY,
            "examples/ray-train",
            {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"},
            {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED", "reason": "AppFailed"},
        ),
        (
            Engine.TRAINING_OPERATOR,
            "examples/elastic-pytorchjob.yaml",
            {"conditions": [{"type": "Running", "status": "False"}, {"type": "Succeeded", "status": "True"}]},
            {"conditions": [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed"}]},
        ),
    ],
)
def test_launch_facts_read_each_kinds_state_from_the_object_alone(
    engine: Engine, spec: str, finished: dict, failed: dict
) -> None:
    from trainspec.compiler.emit import manifest_dicts
    from trainspec.compiler.runs import suffix_length

    result = run([spec], Options(project=None, stop=Stop.LOWER))
    (plan,) = result.plans
    dialect = dialect_for(result.target, plan.engine)
    assert dialect.name is engine and dialect.kfp_step
    (job,) = [d for d in manifest_dicts(result.objects()) if d["kind"] in dialect.job_kinds]
    created = dialect.launch_facts(job)
    assert (created.phase, created.done) == ("Created", False)
    # The log pod is this object's (its name in the selector), not any run of the same job.
    assert job["metadata"]["name"] in created.log_selector.values() and created.log_container
    # The object-only name limit never allows more than the planner's (run suffix included).
    assert len(job["metadata"]["name"]) <= created.name_max
    assert created.name_max <= dialect.name_budget(plan).max_length + suffix_length(plan)
    assert dialect.launch_facts({**job, "status": finished}).phase == "Complete"
    gone = dialect.launch_facts({**job, "status": failed})
    assert gone.phase == "Failed" and gone.done and gone.reason


def test_a_retrying_rayjob_is_not_finished_though_its_last_ray_job_failed() -> None:
    ray = dialect_for(Target(), Engine.RAY)
    job = {"kind": "RayJob", "metadata": {"name": "r"}}
    assert ray.launch_facts({**job, "status": {"jobDeploymentStatus": "Retrying", "jobStatus": "FAILED"}}).phase == (
        "Running"
    )
    assert ray.launch_facts({**job, "status": {"jobDeploymentStatus": "Suspended"}}).phase == "Suspended"
