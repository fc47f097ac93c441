"""A checked pipeline's tasks, added to a kfp pipeline definition (needs ``kfp``).

:func:`kfp_pipeline` returns the ``@dsl.pipeline`` function of a Pipeline: its inputs are the
parameters (the signature kfp reads is set from them, since a pipeline's parameters are known only
from the spec), and its body creates one task per step in run order, each step under a condition
inside its ``dsl.If`` together with everything that runs after it. A job step with a per-run
checkpoint claim is preceded by its ``CreatePVC`` task (under the same condition); a container
step reading a job's checkpoint mounts that claim.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Mapping
from typing import Any

from trainspec.dsl.spec.pipeline_refs import Condition, Ref
from trainspec.dsl.spec.pipeline_spec import ParamType, Pipeline, Step
from trainspec.kfp.job_pipeline import KfpSpecError
from trainspec.kfp.pipeline_claims import StepCheckpoint, mount_path
from trainspec.kfp.pipeline_components import StepComponent

_PY_TYPES = {ParamType.STRING: str, ParamType.INT: int, ParamType.FLOAT: float, ParamType.BOOL: bool}
_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class _Builder:
    """The body of the pipeline function: tasks created in run order, under their conditions."""

    def __init__(
        self,
        pipeline: Pipeline,
        graph: Any,
        components: Mapping[str, StepComponent],
        conditions: Mapping[str, Condition],
        channels: Mapping[str, Any],
        checkpoints: Mapping[str, StepCheckpoint],
    ) -> None:
        import yaml
        from kfp import components as kfp_components

        self.pipeline, self.graph, self.conditions, self.channels = pipeline, graph, conditions, channels
        self.checkpoints = checkpoints
        self.mounts = {name: c.mounts for name, c in components.items()}
        self.claims: dict[str, Any] = {}  # job step -> its claim's name (a CreatePVC output, or the claim's)
        self.steps: dict[str, Step] = {s.name: s for s in pipeline.spec.steps}
        self.order = [s.name for s in graph.steps]
        self.needs = {s.name: set(s.needs) for s in graph.steps}
        self.factories = {
            name: kfp_components.load_component_from_text(yaml.safe_dump(c.spec, sort_keys=False))
            for name, c in components.items()
        }
        self.feeds = {name: c.feeds for name, c in components.items()}
        self.tasks: dict[str, Any] = {}
        self.guards = {name: self._guards(name) for name in self.order}

    def _guards(self, name: str) -> frozenset[str]:
        """The conditional steps strictly upstream of ``name`` (their dsl.If must hold it)."""
        seen: set[str] = set()
        stack = list(self.needs[name])
        while stack:
            other = stack.pop()
            if other not in seen:
                seen.add(other)
                stack += self.needs[other]
        return frozenset(s for s in seen if s in self.conditions)

    def build(self) -> None:
        self._emit(frozenset())
        missing = [name for name in self.order if name not in self.tasks]
        if missing:
            raise KfpSpecError(
                f"pipeline {self.pipeline.name}: steps {', '.join(missing)} run after steps under different "
                "conditions (when:) that do not follow one another; Kubeflow Pipelines nests conditions, so "
                "give them one chain of conditional steps"
            )

    def _emit(self, open_guards: frozenset[str]) -> None:
        from kfp import dsl

        for name in self.order:
            if name in self.tasks or self.guards[name] != open_guards:
                continue
            if name in self.conditions:
                with dsl.If(self._condition(self.conditions[name]), name=f"when-{name}"):
                    self._task(name)
                    self._emit(open_guards | {name})
            else:
                self._task(name)

    def _operand(self, side: Any) -> Any:
        if isinstance(side, Ref):
            return self.channels[side.name] if side.kind == "param" else self.tasks[side.step].outputs[side.name]
        return side

    def _condition(self, cond: Condition) -> Any:
        left, right = self._operand(cond.left), self._operand(cond.right)
        return _OPERATORS[cond.op](left, right)

    def _claim(self, name: str) -> None:
        """The claim job step ``name`` checkpoints to: made for this run, or the one named."""
        where = self.checkpoints.get(name)
        if where is None or where.claim_name is None:
            return
        if not where.per_run:
            self.claims[name] = where.claim_name
            return
        from kfp import kubernetes as k8s

        pvc = k8s.CreatePVC(
            pvc_name_suffix=f"-{where.claim_name}",
            access_modes=list(where.access_modes),
            size=where.size,
            storage_class_name=where.storage_class,
        )
        pvc.set_caching_options(False)  # a cached claim name would point at an earlier run's claim
        pvc.set_display_name(f"{name} checkpoint PVC")
        self.claims[name] = pvc.outputs["name"]

    def _task(self, name: str) -> None:
        step = self.steps[name]
        if step.container is None:
            self._claim(name)
        arguments: dict[str, Any] = {}
        for input_name, feed in self.feeds[name].items():
            if feed[0] == "param":
                arguments[input_name] = self.channels[feed[1]]
            elif feed[0] == "output":
                arguments[input_name] = self.tasks[feed[1]].outputs[feed[2]]
            elif feed[0] == "claim":
                arguments[input_name] = self.claims[feed[1]]
            else:
                arguments[input_name] = feed[1]
        if step.container is None:
            from kfp import dsl

            arguments["run_id"] = dsl.PIPELINE_JOB_ID_PLACEHOLDER
        task = self.factories[name](**arguments)
        task.set_display_name(name)
        for other in sorted(self.needs[name]):
            task.after(self.tasks[other])
        if step.retries:
            task.set_retry(step.retries)
        task.set_caching_options(bool(step.cache))
        if step.container is not None:
            _container_settings(task, step)
            for job in sorted(self.mounts[name]):
                from kfp import kubernetes as k8s

                k8s.mount_pvc(task, pvc_name=self.claims[job], mount_path=mount_path(job))
        self.tasks[name] = task


def _container_settings(task: Any, step: Step) -> None:
    assert step.container is not None
    for key, value in sorted(step.container.env.items()):
        task.set_env_variable(key, value)
    if step.timeout is not None:
        from kfp import kubernetes as k8s

        # The pod's activeDeadlineSeconds: the kubelet stops it and the task fails. (A job step's
        # timeout is the launcher's own, which deletes the job before failing the step.)
        k8s.set_timeout(task, max(1, int(step.timeout.seconds)))
    resources = step.container.resources
    if resources is None:
        return
    if resources.cpu is not None:
        task.set_cpu_request(str(resources.cpu)).set_cpu_limit(str(resources.cpu))
    if resources.memory is not None:
        task.set_memory_request(str(resources.memory)).set_memory_limit(str(resources.memory))
    if resources.gpu:
        task.set_accelerator_type("nvidia.com/gpu").set_accelerator_limit(resources.gpu)


def kfp_pipeline(
    pipeline: Pipeline,
    graph: Any,
    components: Mapping[str, StepComponent],
    conditions: Mapping[str, Condition],
    value_outputs: Mapping[tuple[str, str], str],
    checkpoints: Mapping[str, StepCheckpoint] | None = None,
) -> Any:
    """The ``@dsl.pipeline`` function of ``pipeline`` (compile it with ``kfp.compiler``);
    ``checkpoints``: where each job step keeps its checkpoints."""
    from kfp import dsl

    signature = signature_of(pipeline)
    names = list(signature.parameters)

    def body(*values):  # type: ignore[no-untyped-def]  # no annotations: KFP would read "-> None" as an output
        channels = dict(zip(names, values, strict=True))
        _Builder(pipeline, graph, components, conditions, channels, checkpoints or {}).build()

    body.__signature__ = signature  # type: ignore[attr-defined]  # kfp reads the inputs from it
    described = [f"    {n}: {p.description}" for n, p in pipeline.spec.parameters.items() if p.description]
    body.__doc__ = f"Pipeline {pipeline.name}." + ("\n\nArgs:\n" + "\n".join(described) if described else "")
    body.__name__ = pipeline.name.replace("-", "_")
    return dsl.pipeline(
        name=pipeline.name, description=f"trainspec pipeline {pipeline.name}: {len(graph.steps)} steps"
    )(body)


def signature_of(pipeline: Pipeline) -> inspect.Signature:
    """The pipeline inputs, as the signature kfp reads: one per parameter, typed, with its default."""
    return inspect.Signature(
        [
            inspect.Parameter(
                name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=p.default, annotation=_PY_TYPES[p.type]
            )
            for name, p in pipeline.spec.parameters.items()
        ]
    )


__all__ = ["kfp_pipeline", "signature_of"]
