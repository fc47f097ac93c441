"""How a pipeline's steps fit together, checked and located, and its job steps as TrainingJobs.

:func:`expand` takes a loaded ``Pipeline`` and the TrainingJobs among the inputs and returns

* the pipeline's graph (:class:`PipelineGraph`: steps in run order, who waits for whom, which
  TrainingJob each job step runs), for the commands that compile or run it;
* each inline job step as a located ``TrainingJob`` spec, named ``<pipeline>-<step>`` in the
  pipeline's namespace, with the parameters' defaults in place of ``$(params.x)``; these go
  through the whole compile pipeline like any other job (every rule, check, the Kueue pre-flight,
  explain), and each of their diagnostics points at the pipeline file's line;
* every problem at once: a step that is not exactly one kind, two steps of one name, a
  reference to a step, parameter, output or TrainingJob that does not exist, a cycle, a parameter
  without a default or with one not of its type.

A reference to another step's output inside a job's fields (``data.source:
$(steps.prep.outputs.dataset)``) is checked with a stand-in URI of the artifact store
(:data:`ARTIFACT_STAND_IN`): the real URI exists only when the run does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Related, Severity, format_path
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.load.strict_yaml import Mark, SourceDoc
from trainspec.dsl.record import Record, TupleRecord, replace
from trainspec.dsl.spec.pipeline_spec import IDENTIFIER, REFERENCE, ParamType, Pipeline, Step

#: The outputs every job step has: where its checkpoints are (a URI later steps may read).
JOB_OUTPUTS = ("checkpoint",)
#: What a step-output reference inside a job's fields is checked with.
ARTIFACT_STAND_IN = "s3://trainspec-pipeline-artifacts/{pipeline}/{step}/{output}"
_PYTHON_TYPES: dict[ParamType, tuple[type, ...]] = {
    ParamType.STRING: (str,),
    ParamType.INT: (int,),
    ParamType.FLOAT: (int, float),
    ParamType.BOOL: (bool,),
}


class GraphStep(TupleRecord):
    """One step of a checked pipeline."""

    name: str
    kind: str  # "job" or "container"
    #: The steps it waits for (``after`` and every step whose output or status it reads), sorted.
    needs: tuple[str, ...]
    #: The TrainingJob a job step runs ("" for a container step).
    job: str


class PipelineGraph(Record):
    """A pipeline whose steps fit together: what the commands that compile or run it read."""

    pipeline: Pipeline
    file: str
    #: Steps in run order (each after everything it needs; ties in the order written).
    steps: tuple[GraphStep, ...]
    #: Where the pipeline document starts.
    at: Mark = Mark(1, 1)


def expand(
    loaded: LoadedSpec, jobs: Mapping[str, LoadedSpec]
) -> tuple[PipelineGraph | None, list[LoadedSpec], list[Diagnostic]]:
    """Check ``loaded`` (a Pipeline) against itself and ``jobs`` (the input TrainingJobs by name);
    return its graph (None when a problem leaves no order), its inline jobs, and every problem."""
    return _Expansion(loaded, jobs).run()


class _Expansion:
    def __init__(self, loaded: LoadedSpec, jobs: Mapping[str, LoadedSpec]) -> None:
        self.loaded, self.jobs = loaded, jobs
        self.pipeline: Pipeline = loaded.spec
        self.steps = list(self.pipeline.spec.steps)
        self.problems: list[Diagnostic] = []
        self.by_name: dict[str, int] = {}

    def run(self) -> tuple[PipelineGraph | None, list[LoadedSpec], list[Diagnostic]]:
        self.names()
        self.parameters()
        needs = {step.name: set(step.after) for step in self.steps}
        for i, step in enumerate(self.steps):
            self.kind(i, step)
            for k, other in enumerate(step.after):
                if other not in self.by_name:
                    self.unknown(("spec", "steps", i, "after", k), f"step {other!r}", self._step_names())
            for path, text in _strings(step, i):
                needs[step.name] |= self.references(i, step, path, text)
            if step.when is not None:
                self.condition(i, step.when)
        order = self.order(needs)
        inline = [self.job(i, step) for i, step in enumerate(self.steps) if step.job is not None]
        found = [job for job in inline if job is not None]
        if order is None or any(p.is_error for p in self.problems):
            return None, found, self.problems
        graph = tuple(
            GraphStep(
                name,
                "container" if self.steps[self.by_name[name]].container is not None else "job",
                tuple(sorted(needs[name] & set(self.by_name))),
                self._job_name(self.steps[self.by_name[name]]),
            )
            for name in order
        )
        return PipelineGraph(self.pipeline, self.loaded.file, graph, self.loaded.mark(())), found, self.problems

    # -- the checks -------------------------------------------------------------------------------

    def names(self) -> None:
        for i, step in enumerate(self.steps):
            for k, output in enumerate(step.outputs):
                if not re.match(IDENTIFIER, output):
                    self.add(
                        codes.PIPELINE_STEP,
                        ("spec", "steps", i, "outputs", k),
                        f"output name {output!r} is not a letter followed by letters, digits or _",
                        "rename it (it becomes a Kubeflow Pipelines output, read as $(steps.STEP.outputs.NAME))",
                    )
            first = self.by_name.setdefault(step.name, i)
            if first != i:
                mark = self.loaded.mark(("spec", "steps", first, "name"))
                self.add(
                    codes.PIPELINE_STEP,
                    ("spec", "steps", i, "name"),
                    f"two steps are named {step.name!r}",
                    "give each step its own name",
                    (Related("the first", self.loaded.file, mark.line, mark.column),),
                )

    def parameters(self) -> None:
        for name, parameter in self.pipeline.spec.parameters.items():
            path = ("spec", "parameters", name)
            if not re.match(IDENTIFIER, name):
                self.add(
                    codes.PIPELINE_PARAMETER,
                    path,
                    f"parameter name {name!r} is not a letter followed by letters, digits or _",
                    "rename it (it becomes a Kubeflow Pipelines input of the same name, read as $(params.NAME))",
                )
            if parameter.default is None:
                self.add(
                    codes.PIPELINE_PARAMETER,
                    path,
                    f"parameter {name!r} has no default",
                    "give it a default: every step is checked with it before the pipeline runs",
                )
            elif not _has_type(parameter.default, parameter.type):
                self.add(
                    codes.PIPELINE_PARAMETER,
                    (*path, "default"),
                    f"parameter {name!r} is of type {parameter.type.value}, but its default "
                    f"{parameter.default!r} is not",
                    f"write a default of type {parameter.type.value}, or change the type",
                )

    def kind(self, i: int, step: Step) -> None:
        given = [k for k, v in (("job", step.job), ("jobRef", step.job_ref), ("container", step.container)) if v]
        if len(given) != 1:
            what = "none of" if not given else "more than one of"
            self.add(
                codes.PIPELINE_STEP,
                ("spec", "steps", i, "name"),
                f"step {step.name!r} has {what} job, jobRef and container ({', '.join(given) or 'none'})",
                "give the step exactly one: job (an inline TrainingJob), jobRef (one among the inputs) or container",
            )
        if step.job_ref is not None and step.job_ref not in self.jobs:
            self.unknown(("spec", "steps", i, "jobRef"), f"TrainingJob {step.job_ref!r}", sorted(self.jobs))

    def references(self, i: int, step: Step, path: tuple, text: str) -> set[str]:
        """Check each ``$(...)`` of ``text`` (at ``path``); return the steps it makes this one wait for."""
        waits: set[str] = set()
        for match in REFERENCE.finditer(text):
            parts = match.group(1).split(".")
            head = parts[0]
            if head == "params" and len(parts) == 2:
                if parts[1] not in self.pipeline.spec.parameters:
                    self.unknown(path, f"parameter {parts[1]!r}", sorted(self.pipeline.spec.parameters))
            elif head == "outputs" and len(parts) == 2:
                if step.container is None or path[3] == "when":
                    self.misplaced(path, match.group(0), "$(outputs.x) is where a container step writes its output x")
                elif parts[1] not in step.outputs:
                    self.unknown(path, f"output {parts[1]!r} of this step", list(step.outputs))
            elif head == "steps" and len(parts) in (3, 4):
                other = parts[1]
                if other not in self.by_name:
                    self.unknown(path, f"step {other!r}", self._step_names())
                    continue
                if other == step.name:
                    self.misplaced(path, match.group(0), "a step reads its own outputs as $(outputs.x)")
                    continue
                waits.add(other)
                self.step_field(path, other, parts[2:], match.group(0))
            else:
                self.misplaced(
                    path,
                    match.group(0),
                    "references are $(params.x), $(outputs.x), $(steps.s.outputs.x) and $(steps.s.status)",
                )
        return waits

    def condition(self, i: int, when: str) -> None:
        from trainspec.dsl.spec.pipeline_refs import parse_condition

        try:
            parse_condition(when)
        except ValueError as exc:
            self.add(
                codes.PIPELINE_REFERENCE,
                ("spec", "steps", i, "when"),
                str(exc),
                "e.g. when: $(steps.train.status) == Succeeded",
            )

    def step_field(self, path: tuple, other: str, rest: list[str], written: str) -> None:
        target = self.steps[self.by_name[other]]
        if rest == ["status"]:
            if path[3] != "when":
                self.misplaced(path, written, "a step's status is for when: conditions")
        elif len(rest) == 2 and rest[0] == "outputs":
            produced = list(JOB_OUTPUTS) if target.container is None else list(target.outputs)
            if rest[1] not in produced:
                self.unknown(path, f"output {rest[1]!r} of step {other!r}", produced)
        else:
            self.misplaced(path, written, "a step is read as $(steps.s.outputs.x) or $(steps.s.status)")

    def order(self, needs: dict[str, set[str]]) -> list[str] | None:
        """The steps in run order, or None (with a diagnostic) when they wait for each other."""
        pending = {name: {n for n in needs[name] if n in self.by_name} for name in self.by_name}
        order: list[str] = []
        while pending:
            ready = [name for name in self.by_name if name in pending and not pending[name] - set(order)]
            if not ready:
                cycle = _cycle(pending)
                self.add(
                    codes.PIPELINE_CYCLE,
                    ("spec", "steps", self.by_name[cycle[0]], "name"),
                    f"steps wait for each other in a cycle: {' -> '.join(cycle)}",
                    "remove one of these dependencies (after:, or an output read from a later step)",
                )
                return None
            for name in ready:
                order.append(name)
                del pending[name]
        return order

    def job(self, i: int, step: Step) -> LoadedSpec | None:
        """The inline job of step ``i`` as a located TrainingJob spec (None: it does not validate)."""
        from trainspec.dsl.load.validation import build_spec

        prefix = ("spec", "steps", i, "job")
        typed: dict[tuple, str] = {}
        data = {
            "apiVersion": self.pipeline.api_version,
            "kind": "TrainingJob",
            "metadata": {"name": self._job_name(step), **_namespace(self.pipeline)},
            "spec": _substituted(step.job, self.pipeline, self._defaults(), ("spec",), typed),
        }
        doc = _rerooted(self.loaded, prefix, ("spec", "steps", i, "name"), data)
        spec, problems = build_spec(doc)
        # `args: ["$(params.epochs)"]`: a whole-scalar reference takes its parameter's type, unless
        # the field holds text; such a field is given the text and the job is validated again.
        as_text = {path for path in typed if any(_is_text_error(p, path) for p in problems)}
        if as_text:
            for path in as_text:
                _set(data, path, typed[path])
            spec, problems = build_spec(doc)
        job = LoadedSpec(spec=spec, file=self.loaded.file, doc=doc, within=prefix)
        self.problems.extend(replace(p, path=_shown_path(p.path, prefix)) for p in problems)
        return job if spec is not None else None

    # -- helpers -----------------------------------------------------------------------------------

    def _defaults(self) -> dict[str, Any]:
        return {name: p.default for name, p in self.pipeline.spec.parameters.items()}

    def _job_name(self, step: Step) -> str:
        if step.job_ref is not None:
            return step.job_ref
        return f"{self.pipeline.name}-{step.name}" if step.job is not None else ""

    def _step_names(self) -> list[str]:
        return list(self.by_name)

    def add(self, code: Code, path: tuple, message: str, hint: str, related: tuple[Related, ...] = ()) -> None:
        mark = self.loaded.mark(path)
        self.problems.append(
            Diagnostic(
                code,
                message,
                Severity.ERROR,
                self.loaded.file,
                mark.line,
                mark.column,
                format_path(path),
                hint,
                related,
            )
        )

    def unknown(self, path: tuple, what: str, known: Iterable[str]) -> None:
        names = sorted(known)
        self.add(
            codes.PIPELINE_REFERENCE,
            path,
            f"{what} does not exist",
            f"known: {', '.join(names)}" if names else "there is none to name",
        )

    def misplaced(self, path: tuple, written: str, hint: str) -> None:
        self.add(codes.PIPELINE_REFERENCE, path, f"{written} cannot be used here", hint)


def _shown_path(path: str, prefix: tuple) -> str:
    """A diagnostic's field path of the job document, as written in the pipeline document."""
    if path == "spec" or path.startswith(("spec.", "spec[")):
        return format_path(prefix) + path[len("spec") :]
    if path.startswith("metadata"):
        return format_path((*prefix[:-1], "name"))
    return path


def _has_type(value: Any, kind: ParamType) -> bool:
    if kind is not ParamType.BOOL and isinstance(value, bool):
        return False  # YAML's yes/no are booleans, never numbers or text
    return isinstance(value, _PYTHON_TYPES[kind])


def _namespace(pipeline: Pipeline) -> dict[str, str]:
    return {"namespace": pipeline.namespace} if pipeline.namespace else {}


def _strings(step: Step, i: int) -> Iterable[tuple[tuple, str]]:
    """Every string of a step that may hold references, with its path in the document."""
    base = ("spec", "steps", i)
    if step.when is not None:
        yield (*base, "when"), step.when
    if step.container is not None:
        for k, text in enumerate(step.container.command):
            yield (*base, "container", "command", k), text
        for k, text in enumerate(step.container.args):
            yield (*base, "container", "args", k), text
        for name, text in step.container.env.items():
            yield (*base, "container", "env", name), text
    if step.job is not None:
        yield from _walk_strings(step.job, (*base, "job"))


def _walk_strings(value: Any, path: tuple) -> Iterable[tuple[tuple, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk_strings(item, (*path, key))
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _walk_strings(item, (*path, k))


def _substituted(
    value: Any, pipeline: Pipeline, defaults: Mapping[str, Any], path: tuple, typed: dict[tuple, str]
) -> Any:
    """``value`` with every parameter reference replaced by its default (a whole-scalar reference
    keeps the default's type: its path and text go into ``typed``) and every step output by its
    stand-in URI."""
    if isinstance(value, dict):
        return {key: _substituted(item, pipeline, defaults, (*path, key), typed) for key, item in value.items()}
    if isinstance(value, list):
        return [_substituted(item, pipeline, defaults, (*path, k), typed) for k, item in enumerate(value)]
    if not isinstance(value, str) or "$(" not in value:
        return value
    whole = REFERENCE.fullmatch(value.strip())
    if whole is not None:
        parts = whole.group(1).split(".")
        if parts[0] == "params" and len(parts) == 2 and defaults.get(parts[1]) is not None:
            default = defaults[parts[1]]
            if not isinstance(default, str):
                typed[path] = _text(default)
            return default

    def replace(match: Any) -> str:
        parts = match.group(1).split(".")
        if parts[0] == "params" and len(parts) == 2 and defaults.get(parts[1]) is not None:
            return _text(defaults[parts[1]])
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return ARTIFACT_STAND_IN.format(pipeline=pipeline.name, step=parts[1], output=parts[3])
        return match.group(0)  # reported where it is read

    return REFERENCE.sub(replace, value)


def _text(value: Any) -> str:
    """A parameter's value inside text, as a run passes it (booleans as true/false)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _is_text_error(problem: Diagnostic, path: tuple) -> bool:
    return problem.code == codes.WRONG_TYPE and problem.path == format_path(path) and "string" in problem.message


def _set(data: dict[str, Any], path: tuple, value: Any) -> None:
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _rerooted(loaded: LoadedSpec, prefix: tuple, name_path: tuple, data: dict[str, Any]) -> SourceDoc:
    """A document for the job at ``prefix`` of the pipeline: its ``spec`` is the job's fields, its
    name the step's; every position is the pipeline file's."""
    source = loaded.doc
    start = loaded.mark(prefix)
    if source is None:  # a pipeline built in Python: everything points at its constructor
        return SourceDoc(loaded.file, 0, data, start, {(): start}, {}, {})
    n = len(prefix)

    def moved(marks: Mapping[tuple, Mark]) -> dict[tuple, Mark]:
        return {("spec", *path[n:]): mark for path, mark in marks.items() if path[:n] == prefix}

    values, keys = moved(source.values), moved(source.keys)
    name_mark = loaded.mark(name_path)
    values.update({(): start, ("metadata",): name_mark, ("metadata", "name"): name_mark})
    keys[("metadata", "name")] = source.keys.get(name_path, name_mark)
    plain = {("spec", *path[n:]): text for path, text in source.plain.items() if path[:n] == prefix}
    return SourceDoc(loaded.file, source.index, data, start, values, keys, plain, source.templated)


def _cycle(pending: Mapping[str, set[str]]) -> list[str]:
    """One cycle among the steps left (each waits for another of them), first step repeated last."""
    start = min(pending)
    path, seen = [start], {start}
    current = start
    while True:
        current = min(n for n in pending[current] if n in pending)
        if current in seen:
            return [*path[path.index(current) :], current]
        path.append(current)
        seen.add(current)


__all__ = ["ARTIFACT_STAND_IN", "JOB_OUTPUTS", "GraphStep", "PipelineGraph", "expand"]
