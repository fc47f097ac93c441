"""The *load* pass: values files, spec files (YAML and Python), the project file, specs given in code."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from trainspec.compiler.passes.options import DISCOVER, Options
from trainspec.compiler.passes.products import Loaded, Sources
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.spec.project import Project

if TYPE_CHECKING:
    from trainspec.dsl.load.pipeline_steps import PipelineGraph


def load(sources: Sources, options: Options) -> Loaded:
    """Read every input strictly; documents that are not trainspec's are counted, not read."""
    from trainspec.dsl.load.discovery import split_stdin
    from trainspec.dsl.load.loaded import DEFAULT_PYTHON_TIMEOUT, ForeignDoc, spec_problems
    from trainspec.dsl.load.spec_sources import discover, load_files
    from trainspec.dsl.load.values_files import load_values

    found: list[Diagnostic] = []
    values, problems = load_values(options.values_files)
    found += problems
    if options.values is not None:
        values = {**(values or {}), **options.values}
    paths, stdin, problems = split_stdin(list(sources.paths))  # `-`: YAML from standard input, read once
    found += problems
    files, problems = discover(paths)
    found += problems
    project_file, project_obj = _project_choice(options)
    extra = [project_file] if project_file and not _among(project_file, files) else []
    timeout = options.python_timeout if options.python_timeout is not None else DEFAULT_PYTHON_TIMEOUT
    foreign: list[ForeignDoc] = []
    specs, problems = load_files(
        [*files, *extra],
        values=values,
        foreign=foreign,
        python_timeout=timeout or None,
        limits=options.limits,
        python=options.python,
        project=project_obj,
        project_file=project_file,
        stdin=stdin,
    )
    found += problems
    for given in sources.objects:  # specs built in Python and handed over: the same single-spec checks
        found += spec_problems(given)
    given_project = (LoadedSpec(spec=project_obj, file="<python>"),) if project_obj is not None else ()
    specs = [*specs, *sources.objects]
    graphs, inline, problems = _pipelines(specs)
    found += problems
    return Loaded(
        specs=(*(s for s in specs if not _is_pipeline(s)), *inline, *given_project),
        files=len(files) + stdin,
        foreign=tuple(foreign),
        diagnostics=tuple(found),
        pipelines=tuple(graphs),
        pipeline_specs=sum(map(_is_pipeline, specs)),
    )


def _among(file: str, files: list[str]) -> bool:
    """Whether ``file`` is one of ``files`` (by identity: a link to it, or a second name, is it)."""
    try:
        st = os.stat(file)
    except OSError:
        return False  # the loader reports it
    wanted = (st.st_dev, st.st_ino)
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == wanted:
            return True
    return False


def _is_pipeline(spec: LoadedSpec) -> bool:
    # By its kind: a run with no Pipeline in it never imports the pipeline models.
    return spec.kind == "Pipeline"


def _pipelines(specs: list[LoadedSpec]) -> tuple[list[PipelineGraph], list[LoadedSpec], list[Diagnostic]]:
    """Each Pipeline checked and its inline job steps as TrainingJobs (which every later pass
    treats like any other job); job steps by name resolve against the input TrainingJobs."""
    pipelines = [s for s in specs if _is_pipeline(s)]
    if not pipelines:
        return [], [], []
    from trainspec.dsl.load.pipeline_steps import expand
    from trainspec.dsl.spec.models import TrainingJob

    jobs = {s.name: s for s in specs if isinstance(s.spec, TrainingJob)}
    graphs: list[PipelineGraph] = []
    inline: list[LoadedSpec] = []
    problems: list[Diagnostic] = []
    for pipeline in pipelines:
        graph, found, diagnostics = expand(pipeline, jobs)
        inline += found
        problems += diagnostics
        if graph is not None:
            graphs.append(graph)
    return graphs, inline, problems


def _project_choice(options: Options) -> tuple[str | None, Project | None]:
    """(project file to load, project object given in code)."""
    choice = options.project
    if choice is None:
        return None, None
    if isinstance(choice, Project):
        return None, choice
    if choice is DISCOVER:
        from trainspec.dsl.spec.project import find_project_file

        return find_project_file(options.cwd or os.curdir), None
    return os.fspath(choice), None
