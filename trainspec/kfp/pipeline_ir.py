"""A ``Pipeline`` compiled to Kubeflow Pipelines IR with kfp's own compiler (``trainspec kfp``).

* parameters -> pipeline inputs of the same type and default (a run may override them);
* container steps -> container components (:mod:`trainspec.kfp.pipeline_components`) with the
  step's image, command and args, static env, cpu/memory/GPU limits, retries and caching;
* job steps -> the launcher, in the launcher image, building the run's TrainJob from the step's
  spec documents and the run's parameter values (:mod:`trainspec.kfp.pipeline_job_step`);
* a job step's checkpoint volume -> a claim per run (``CreatePVC`` before the step), mounted into
  the container steps that read its ``checkpoint`` (:mod:`trainspec.kfp.pipeline_claims`);
* ``after`` -> ``.after()``; outputs read by a later step -> artifact passing;
* ``when`` -> ``dsl.If``: a comparison of parameters and *value outputs* (an output a ``when``
  compares is an output parameter, typed after what it is compared with: a number -> float, a
  parameter -> its type, a boolean -> bool, text -> string); ``$(steps.s.status) == Succeeded``
  (or ``!= Failed``) is the order KFP keeps anyway: the step runs after s succeeded. A step
  under a condition and everything after it are in that ``dsl.If``, so they are skipped together.

What KFP cannot express is a located error before anything is written: a ``Failed`` status
condition, a run-time reference in an environment variable, a comparison of a job's checkpoint,
steps under two unrelated conditions, a per-run claim without a storage class.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity, format_path
from trainspec.dsl.spec.pipeline_refs import Condition, Ref, parse_condition, refs_in
from trainspec.dsl.spec.pipeline_spec import Pipeline, Step
from trainspec.kfp.job_pipeline import BUILD_HINT, KfpSpecError, image_problem
from trainspec.kfp.pipeline_claims import StepCheckpoint, step_checkpoint
from trainspec.kfp.pipeline_components import KFP_TYPES, StepComponent, container_component, job_component


def pick_graph(result: Any, name: str | None) -> Any:
    """The pipeline to compile: the one named ``name``, else the only one (None: there is none)."""
    graphs = list(result.pipelines)
    if name is not None:
        chosen = [g for g in graphs if g.pipeline.name == name]
        if not chosen:
            found = ", ".join(sorted(g.pipeline.name for g in graphs)) or "none"
            raise KfpSpecError(f"no pipeline named {name!r} among the inputs; found: {found}")
        return chosen[0]
    if len(graphs) > 1:
        found = ", ".join(sorted(g.pipeline.name for g in graphs))
        raise KfpSpecError(f"the inputs hold several pipelines ({found}): pick one with --pipeline NAME")
    return graphs[0] if graphs else None


class _Locator:
    """Where a field of the pipeline document is, for diagnostics."""

    def __init__(self, graph: Any) -> None:
        self.file = graph.file
        self.doc = None
        if os.path.isfile(graph.file):
            from trainspec.dsl.load.strict_yaml.stream import load_file

            docs, _ = load_file(graph.file)
            self.doc = next(
                (
                    d
                    for d in docs
                    if d.data.get("kind") == "Pipeline"
                    and (d.data.get("metadata") or {}).get("name") == graph.pipeline.name
                ),
                None,
            )

    def error(self, path: tuple, message: str, hint: str, code: Any = codes.PIPELINE_REFERENCE) -> Diagnostic:
        mark = self.doc.mark(path) if self.doc is not None else None
        return Diagnostic(
            code,
            message,
            Severity.ERROR,
            self.file,
            mark.line if mark else None,
            mark.column if mark else None,
            format_path(path),
            hint,
        )


class _Plan:
    """What the pipeline becomes, decided and checked before kfp is touched."""

    def __init__(self, result: Any, graph: Any, image: str | None, launcher: Mapping[str, Any]) -> None:
        self.result, self.graph, self.image, self.launcher = result, graph, image, launcher
        self.pipeline: Pipeline = graph.pipeline
        self.steps = {s.name: (i, s) for i, s in enumerate(self.pipeline.spec.steps)}
        self.where = _Locator(graph)
        self.problems: list[Diagnostic] = []
        self.conditions: dict[str, Condition] = {}  # steps under a dsl.If
        self.value_outputs: dict[tuple[str, str], str] = {}
        self.components: dict[str, StepComponent] = {}
        self.checkpoints: dict[str, StepCheckpoint] = {}

    def check(self) -> None:
        self.claims()
        for name, (i, step) in self.steps.items():
            for key, text in step.container.env.items() if step.container else ():
                if any(refs_in(text)):
                    self.problems.append(
                        self.where.error(
                            ("spec", "steps", i, "container", "env", key),
                            f"step {name!r}: Kubeflow Pipelines cannot put a run-time reference into an environment variable",
                            "pass it as an argument (args: [--x, $(params.x)]) instead",
                        )
                    )
            if step.when is not None:
                self.condition(i, step)
        if self.image is None and any(s.kind == "job" for s in self.graph.steps):
            self.problems.append(self._no_image())

    def claims(self) -> None:
        """Where each job step keeps its checkpoints; a per-run claim needs a storage class."""
        for graph_step in self.graph.steps:
            i, step = self.steps[graph_step.name]
            if step.container is not None:
                continue
            where = step_checkpoint(
                self.result, step.name, graph_step.job, step.job, create_pvc=self.launcher["create_pvc"]
            )
            if where is None:
                continue
            if where.per_run and not where.storage_class:
                storage_class = self.launcher["storage_class"]
                if not storage_class:
                    self.problems.append(
                        self.where.error(
                            ("spec", "steps", i, "job", "checkpoint") if step.job is not None else ("spec", "steps", i),
                            f"step {step.name!r}: each run gets a checkpoint claim of its own (CreatePVC), and "
                            "CreatePVC needs an explicit storage class (without one the claim binds only to a "
                            "pre-made volume)",
                            "set checkpoint.storageClass in the job, or pass --storage-class",
                            codes.PIPELINE_STEP,
                        )
                    )
                    continue
                where = replace(where, storage_class=storage_class)
            self.checkpoints[step.name] = where

    def condition(self, i: int, step: Step) -> None:
        assert step.when is not None
        path = ("spec", "steps", i, "when")
        cond = parse_condition(step.when)  # checked by the load pass
        sides = [cond.left, cond.right]
        if any(isinstance(s, Ref) and s.kind == "status" for s in sides):
            other = cond.right if isinstance(cond.left, Ref) else cond.left
            if (cond.op, other) in (("==", "Succeeded"), ("!=", "Failed")):
                return  # KFP runs a step after its upstream succeeded: the order says it already
            self.problems.append(
                self.where.error(
                    path,
                    f"step {step.name!r}: Kubeflow Pipelines runs a step only after its upstream steps succeeded; "
                    f"{step.when!r} cannot be expressed",
                    "use $(steps.s.status) == Succeeded, or run clean-up outside the pipeline",
                )
            )
            return
        if not any(isinstance(s, Ref) for s in sides):
            self.problems.append(
                self.where.error(
                    path, f"step {step.name!r}: the condition compares two constants", "compare a reference"
                )
            )
            return
        for side, other in ((cond.left, cond.right), (cond.right, cond.left)):
            if isinstance(side, Ref) and side.kind == "step-output":
                if self.steps[side.step][1].container is None:
                    self.problems.append(
                        self.where.error(
                            path,
                            f"step {step.name!r}: the output {side.name!r} of job step {side.step!r} is an artifact "
                            "and cannot be compared",
                            "compare an output of a container step (it writes the value to $(outputs.x))",
                        )
                    )
                    return
                self.value_outputs[(side.step, side.name)] = self._value_type(other)
        self.conditions[step.name] = cond

    def _value_type(self, other: Any) -> str:
        if isinstance(other, Ref):
            return KFP_TYPES[self.pipeline.spec.parameters[other.name].type] if other.kind == "param" else "String"
        if isinstance(other, bool):
            return "Boolean"
        return "Float" if isinstance(other, (int, float)) else "String"

    def _no_image(self) -> Diagnostic:
        i, step = next((i, s) for i, s in enumerate(self.pipeline.spec.steps) if s.container is None)
        project = (
            "the project file names none (spec.defaults.launcherImage)"
            if self.result.project_spec is not None
            else "no project file (trainspec.yaml) is in use"
        )
        return self.where.error(
            ("spec", "steps", i, "name"),
            f"pipeline {self.pipeline.name}: job step {step.name!r} runs in the Kubeflow Pipelines launcher, which "
            f"has no image: none was given (--image) and {project}; the step installs nothing when it starts",
            BUILD_HINT,
            codes.NO_LAUNCHER_IMAGE,
        )

    def build_components(self) -> None:
        for graph_step in self.graph.steps:
            _, step = self.steps[graph_step.name]
            if step.container is not None:
                self.components[step.name] = container_component(
                    self.pipeline, step, self.value_outputs, self.checkpoints
                )
                continue
            assert self.image is not None
            timeout = step.timeout.seconds if step.timeout is not None else self.launcher["timeout_seconds"]
            args = ["--trainer-api", str(self.launcher["trainer_api"]), "--timeout", str(timeout)]
            args += ["--poll-seconds", str(self.launcher["poll_seconds"])]
            if self.launcher["namespace"]:
                args += ["--namespace", self.launcher["namespace"]]
            self.components[step.name] = job_component(
                self.pipeline,
                step,
                job=graph_step.job,
                image=self.image,
                specs=self._specs(step, graph_step.job),
                value_outputs=self.value_outputs,
                launcher_args=args,
                per_run_claim=step.name in self.checkpoints and self.checkpoints[step.name].per_run,
            )

    def _specs(self, step: Step, job: str) -> str:
        """The documents the launcher compiles for a job step (see pipeline_job_step)."""
        import yaml

        from trainspec.dsl.spec.models import Runtime, TrainingJob
        from trainspec.kfp.pipeline_components import step_document

        docs: list[dict[str, Any]] = []
        project = self.result.project_spec
        if project is not None and project.doc is not None:
            docs.append(project.doc.data)
        docs += [s.doc.data for s in self.result.specs if isinstance(s.spec, Runtime) and s.doc is not None]
        if step.job is not None:
            docs.append(step_document(self.pipeline, step))
        else:
            docs += [
                s.doc.data
                for s in self.result.specs
                if isinstance(s.spec, TrainingJob) and s.name == job and not s.within and s.doc is not None
            ]
        return str(yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True))


def pipeline_function(
    specs: Any,
    graph: Any = None,
    *,
    project: Any = "discover",
    image: str | None = None,
    trainer_api: str = "2.3",
    timeout_seconds: int = 0,
    poll_seconds: float = 10.0,
    namespace: str = "",
    create_pvc: bool = True,
    storage_class: str | None = None,
) -> Any:
    """The ``@dsl.pipeline`` function of a ``Pipeline``: compile it, call it inside your own
    ``@dsl.pipeline`` as a sub-pipeline, or run it with ``kfp.local``'s DockerRunner (its steps
    are container components, which the SubprocessRunner refuses).

    ``specs`` is a path, a list of paths or spec objects (compiled here, the project file
    discovered as the CLI does unless ``project`` names one; None: none), or a compile that
    reached lowering; ``graph`` is the pipeline's name, its checked graph, or None for the only
    one. Raises :class:`KfpSpecError` with the compiler's diagnostics when the specs do not
    compile, :class:`KfpSpecError` with located
    diagnostics for what KFP cannot express and for a job step without a launcher image (TS450).
    A job step checkpointing to a new volume gets a claim per run (``create_pvc``; of
    ``storage_class`` when its spec names none); without ``create_pvc`` it uses the compiled
    claim, which must exist."""
    result = specs if hasattr(specs, "pipelines") else _compiled(specs, project)
    if graph is None or isinstance(graph, str):
        graph = pick_graph(result, graph)
        if graph is None:
            raise KfpSpecError("the inputs hold no Pipeline")
    chosen = image or result.project.spec.defaults.launcher_image
    if chosen:
        problem = image_problem(chosen)
        if problem is not None:
            raise KfpSpecError(f"launcher image: {problem}")
    launcher = {
        "trainer_api": trainer_api,
        "timeout_seconds": timeout_seconds,
        "poll_seconds": poll_seconds,
        "namespace": namespace,
        "create_pvc": create_pvc,
        "storage_class": storage_class,
    }
    plan = _Plan(result, graph, chosen or None, launcher)
    plan.check()
    if plan.problems:
        lines = "\n".join(f"{d.file}:{d.line}:{d.column}: [{d.code}] {d.message}" for d in plan.problems)
        raise KfpSpecError(f"the pipeline cannot run on Kubeflow Pipelines:\n{lines}", tuple(plan.problems))
    plan.build_components()
    from trainspec.kfp.pipeline_tasks import kfp_pipeline

    return kfp_pipeline(plan.pipeline, graph, plan.components, plan.conditions, plan.value_outputs, plan.checkpoints)


def _compiled(specs: Any, project: Any) -> Any:
    from trainspec.compiler.pipeline import DISCOVER, Options, Stop, run

    items = list(specs) if isinstance(specs, (list, tuple)) else [specs]
    result = run(items, Options(project=DISCOVER if project == "discover" else project, stop=Stop.LOWER))
    if not result.ok:
        errors = tuple(d for d in result.diagnostics if d.is_error)
        lines = "\n".join(f"{d.file}:{d.line}:{d.column}: [{d.code}] {d.message}" for d in errors)
        raise KfpSpecError(f"the specs do not compile:\n{lines}", errors)
    return result


def compile_pipeline_ir(result: Any, graph: Any, **options: Any) -> str:
    """The KFP IR YAML of ``graph``: :func:`pipeline_function` (same options) through kfp's
    compiler."""
    pipeline_func = pipeline_function(result, graph, **options)
    from kfp import compiler

    fd, tmp = tempfile.mkstemp(suffix=".yaml")
    os.close(fd)
    try:
        compiler.Compiler().compile(pipeline_func, package_path=tmp)
        with open(tmp, encoding="utf-8") as handle:
            return handle.read()
    finally:
        os.unlink(tmp)


__all__ = ["compile_pipeline_ir", "pick_graph", "pipeline_function"]
