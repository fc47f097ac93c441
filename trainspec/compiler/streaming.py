"""Streamed runs: a repository of tens of thousands of job specs in flat memory.

The passes read the whole program at once (:mod:`trainspec.compiler.pipeline`), so every spec's
products stayed in memory to the end: 16 KB per spec for ``validate``, 29 KB for ``compile``.
Yet a job depends on few facts outside its own file: the runtimes it resolves against, the
project file, and the names no two specs may share (TS306). A streamed run:

1. finds the files as the load pass would, and tells the files that hold only jobs (or no spec
   at all, such as Kubernetes manifests): YAML with no ``kind: Runtime``, ``Project`` or
   ``Pipeline`` in it;
2. runs the passes over every other file first (runtimes, the project, Python specs, jobs beside
   them), exactly as a whole run would;
3. runs the same passes over the job-only files a batch at a time, against the runtimes step 2
   read (:attr:`Options.known_runtimes`), hands each batch's outputs to a sink (the caller
   renders and spills them) and keeps only summaries: each object's name and where it was first
   defined, the diagnostics, the foreign documents' positions, the spec files' names.

The answer is the whole run's, diagnostic for diagnostic (tests/compiler/test_streaming.py
compares them): the TS306 check is made across all batches with the whole run's idea of which
definition came first, and when any error is found nothing a later pass made after it is kept,
as a whole run lowers nothing once it has an error. A batch that turns out to hold a runtime, a
project or a pipeline after all (a kind spelled with an escape sequence in a quoted string), and
any input a batch cannot stand for (standard input, a pipeline, ``--ladder``, specs built in
Python), make the run a whole one: only the memory differs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any, Protocol

from trainspec.compiler.passes.options import Options, Stop
from trainspec.compiler.passes.products import Loaded, Lowered, Output, Product, Projected, Sources
from trainspec.compiler.pipeline import CompileResult, collector_tuned, result_of, run_passes, run_reaching
from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.dsl.load.loaded import ForeignDoc, LoadedSpec
from trainspec.dsl.record import replace

#: Job-only files per batch: enough to amortise a batch's fixed cost (the project file is read
#: again, the dialects are picked again), few enough that a batch's products stay a few MB.
BATCH_FILES = 256
#: A ``kind`` of another trainspec kind as YAML or JSON usually spells it (``kind: Runtime``,
#: ``"kind": "Pipeline"``, a tag before it). Any other spelling (an escape sequence, an alias) is
#: found when the batch is read, and the run starts over whole.
_OTHER_KIND = rb"""kind["']?\s*:\s*(?:![^\s]*\s+)?["']?(Runtime|Project|Pipeline)\b"""
#: A Kubeflow runtime manifest (a document's own ``kind``, at the start of a line): read whole, so
#: that ``check`` knows it when a TrainJob of any batch names it. A TrainJob's ``runtimeRef``
#: also says ``kind: ClusterTrainingRuntime``, indented.
_RUNTIME_MANIFEST = rb"""(?m)^["']?kind["']?[ \t]*:[ \t]*["']?(?:Cluster)?TrainingRuntime\b"""
#: Orders of specs for TS306 (a whole run's: runtimes first, then jobs by file, then within it).
_RUNTIMES_FIRST = 1 << 62
_PER_FILE = 1 << 20
#: Passes whose findings a whole run never reports once an earlier pass found an error.
_AFTER_CLEAN = frozenset({"lower", "emit"})


class Sink(Protocol):
    """Where a streamed run's outputs go as each batch is lowered."""

    def add(self, output: Output, gitops: str | None) -> None:
        """One output file's objects for ``gitops``'s tree (a runtime's repeated by every batch
        that uses it: keep one)."""

    def products(self, reached: list[Product]) -> bool | None:
        """What one run of the passes reached (the files read whole, a batch, or a whole run), for
        a sink that reads more than the outputs (``check`` reads the manifests among the inputs).

        False: the batch holds something other batches need (the run starts over whole).
        """

    def reset(self) -> None:
        """Forget every output: the run starts over as a whole one."""


def run_streamed(paths: Iterable[str], options: Options, sink: Sink | None = None) -> CompileResult:
    """:func:`~trainspec.compiler.pipeline.run` over ``paths``, job-only files a batch at a time.

    Outputs go to ``sink`` (the result's ``specs`` and ``plans`` are those of the files read
    whole, its ``outputs`` are empty; ``streamed`` counts the other specs); everything else is
    the whole run's. Where a batch
    cannot stand for the whole (see the module docstring) this is the whole run, and its
    outputs are also handed to ``sink``.
    """
    paths = [os.fspath(p) for p in paths]
    if "-" in paths or options.ladder or options.stop is Stop.EMIT:
        return _whole(paths, options, sink)
    from trainspec.dsl.load.discovery import discover

    found, walk_problems = discover(paths)
    if len(found) <= BATCH_FILES:
        return _whole(paths, options, sink)  # one batch at most: nothing to gain (pre-commit's usual few files)
    from trainspec.dsl.load.strict_yaml.limits import DEFAULT_LIMITS

    limit = (options.limits or DEFAULT_LIMITS).max_bytes
    # Each file with its place among those found (the whole run's order of specs, for TS306).
    whole_files: list[tuple[str, int]] = []
    job_files: list[tuple[str, int]] = []
    for place, path in enumerate(map(str, found)):
        kind = _file_kind(path, limit)
        if kind == "pipeline":
            return _whole(paths, options, sink)
        (job_files if kind == "jobs" else whole_files).append((path, place))
    del found  # a path object per file: the strings serve
    if not job_files:
        return _whole(paths, options, sink)
    with collector_tuned():
        state = _StreamedRun(options, sink)
        state.first(whole_files)
        for start in range(0, len(job_files), BATCH_FILES):
            if not state.batch(job_files[start : start + BATCH_FILES]):
                return _whole(paths, options, sink)
        return state.result(walk_problems)


def _whole(paths: list[str], options: Options, sink: Sink | None) -> CompileResult:
    if sink is not None:
        sink.reset()
    result, reached = run_reaching(paths, options)
    if sink is not None:
        sink.products(reached)
        for output in result.outputs:
            sink.add(output, result.gitops)
    return result


def _file_kind(path: str, limit: int) -> str:
    """``jobs`` (YAML that can hold no other trainspec kind), ``pipeline`` (may hold one) or ``other``."""
    from trainspec.dsl.load.safe_read import peek_file

    if not path.lower().endswith((".yaml", ".yml")):
        return "other"  # Python specs run once, with the runtimes
    # Opened without blocking and checked to be a regular file (a FIFO swapped in since the walk
    # must not hang the run); past the size cap it is the loader's to refuse (TS102).
    data = peek_file(path, limit + 1)
    if data is None or len(data) > limit:
        return "other"  # the loader says why
    # The patterns are compiled on the first streamed run (re caches them), not when a run of a few
    # files imports this module.
    kinds = {match.group(1) for match in re.finditer(_OTHER_KIND, data)}
    if b"Pipeline" in kinds:
        return "pipeline"
    if kinds or (b"TrainingRuntime" in data and re.search(_RUNTIME_MANIFEST, data)):
        return "other"
    return "jobs"


class _StreamedRun:
    """The state a streamed run keeps between batches: summaries only."""

    def __init__(self, options: Options, sink: Sink | None) -> None:
        self.options = replace(options, names_elsewhere=True)
        self.sink = sink
        self.names = _Names()
        self.found: list[tuple[str, Diagnostic]] = []  # (pass, diagnostic)
        self.failed = False  # an error so far: nothing more is lowered, nothing is kept
        self.foreign: list[tuple[int, ForeignDoc]] = []  # with its file's place: listed in the whole run's order
        self.streamed = 0
        self.files = 0
        self.first_run = CompileResult()

    def first(self, files: list[tuple[str, int]]) -> None:
        """The files read whole: runtimes, the project, Python specs, and the jobs beside them."""
        reached, ran = self._passes([f for f, _ in files], self.options)
        projected = _product(reached, Projected)
        if projected is not None:
            for index, runtime in enumerate(projected.runtimes):
                self.names.add(runtime, index - _RUNTIMES_FIRST, kept=True)  # runtimes before any job
            self._jobs(projected, _places(files), kept=True)
        self.first_run = result_of(reached, [d for _, d in self.found], ran)
        self._foreign(self.first_run.foreign, _places(files))
        project = self.first_run.project_spec
        self.options = replace(
            self.options,
            known_runtimes=tuple(self.first_run.runtimes),
            # The project file the first run used: batches need not look for it again.
            project=project.file if project is not None and project.file != "<python>" else self.options.project,
            progress=None,
        )
        if self.sink is not None:
            self.sink.products(reached)
        self._emit(reached)

    def batch(self, files: list[tuple[str, int]]) -> bool:
        """One batch of job-only files; False when it holds another kind after all."""
        reached, _ = self._passes([f for f, _ in files], self.options)
        loaded = _product(reached, Loaded)
        shown = _places(files)  # the batch's files as specs name them
        if (
            loaded is None
            or loaded.pipeline_specs
            or any(s.file in shown and s.kind != "TrainingJob" for s in loaded.specs)
        ):
            return False  # a runtime, project or pipeline after all: other batches may need it
        if self.sink is not None and self.sink.products(reached) is False:
            return False
        projected = _product(reached, Projected)
        if projected is not None:
            self._jobs(projected, shown, kept=False)
        self.streamed += sum(s.file in shown for s in loaded.specs)
        self.files += loaded.files
        self._foreign(loaded.foreign, shown)
        self._emit(reached)
        return True

    def _passes(self, files: list[str], options: Options) -> tuple[list[Product], tuple[str, ...]]:
        # Once an error is known a whole run would lower nothing: stop after the rules.
        stop = Stop.VALIDATE if self.failed else options.stop
        reached, found, ran = run_passes(Sources(paths=tuple(files)), replace(options, stop=stop))
        steps = [step for step, product in zip(ran, reached, strict=True) for _ in product.diagnostics]
        self.found += zip(steps, found, strict=True)
        self.failed = self.failed or any(d.is_error for d in found)
        return reached, ran

    def _foreign(self, docs: Iterable[ForeignDoc], place: dict[str, int]) -> None:
        # the parsed document: only check reads it, from the batch's own products
        self.foreign += [(place.get(doc.file, len(place)), replace(doc, doc=None)) for doc in docs]

    def _jobs(self, projected: Projected, place: dict[str, int], *, kept: bool) -> None:
        for seq, (job, _) in enumerate(projected.jobs):
            # a job's place in the whole run: its file's, then its own within the file
            order = place.get(job.file, len(place)) * _PER_FILE + seq
            self.failed = self.names.add(job, order, kept=kept) or self.failed

    def _emit(self, reached: list[Product]) -> None:
        lowered = _product(reached, Lowered)
        if lowered is None or self.sink is None or self.failed:
            return
        for output in lowered.outputs:
            self.sink.add(output, lowered.gitops)

    def result(self, walk_problems: list[Diagnostic]) -> CompileResult:
        """The whole run's result: every diagnostic, counts and foreign documents; no outputs."""
        found = [*walk_problems, *self.names.problems()]
        before_lowering = any(d.is_error for d in found) or any(
            d.is_error for step, d in self.found if step not in _AFTER_CLEAN
        )
        # A whole run lowers nothing after an error: a lowering's findings would not exist.
        found += [d for step, d in self.found if not (before_lowering and step in _AFTER_CLEAN)]
        if self.sink is not None and any(d.is_error for d in found):
            self.sink.reset()
        return replace(
            self.first_run,
            diagnostics=sorted(dict.fromkeys(found), key=Diagnostic.sort_key),
            files=self.first_run.files + self.files,
            foreign=[doc for _, doc in sorted(self.foreign, key=lambda pair: pair[0])],
            streamed=self.streamed,
            streamed_files=self.files,
            outputs=[],
        )


def _places(files: list[tuple[str, int]]) -> dict[str, int]:
    """Display name (as specs and documents name their file) -> place among the files found."""
    from trainspec.dsl.load.loaded import display_name

    return {display_name(f): i for f, i in files}


def _product(reached: list[Product], kind: type[Any]) -> Any:
    found = [p for p in reached if isinstance(p, kind)]
    return found[-1] if found else None


class _Names:
    """TS306 across batches from one small entry per object: where it was first defined.

    A whole run calls the first definition in its order (runtimes, then jobs in file order) the
    original and every later one the duplicate. Batches come in file order, but the files read
    whole came first, so a job in a batch may be earlier than one read whole: the duplicates
    among specs read whole are decided at the end (those specs are kept anyway).
    """

    def __init__(self) -> None:
        # key -> (order, file, line, column, the spec when it was read whole): a few small objects
        # per name, the file string shared with every other summary of the file.
        self.first: dict[tuple[str, str, str], tuple[int, str, int, int, LoadedSpec | None]] = {}
        self.found: list[Diagnostic] = []
        self.later_kept: list[tuple[tuple[str, str, str], LoadedSpec]] = []

    def add(self, loaded: LoadedSpec, order: int, *, kept: bool) -> bool:
        """Note ``loaded``'s objects; True when one of them was defined before."""
        from trainspec.compiler.passes.project_pass import NAME, duplicate, object_keys

        for key in object_keys(loaded):
            entry = self.first.get(key)
            if entry is None or (not kept and order < entry[0]):
                if entry is not None:  # earlier than the spec read whole that held the name: that one is the duplicate
                    assert entry[4] is not None
                    self.later_kept.append((key, entry[4]))
                mark = loaded.mark(NAME)
                self.first[key] = (order, loaded.file, mark.line, mark.column, loaded if kept else None)
                if entry is None:
                    continue
            elif kept:
                self.later_kept.append((key, loaded))
            else:
                self.found.append(duplicate(loaded, key, _related(entry)))
            return True
        return False

    def problems(self) -> list[Diagnostic]:
        """Every TS306, each pointing at the first definition."""
        from trainspec.compiler.passes.project_pass import duplicate

        return [
            *self.found,
            *(duplicate(loaded, key, _related(self.first[key])) for key, loaded in self.later_kept),
        ]


def _related(entry: tuple[int, str, int, int, LoadedSpec | None]) -> Related:
    """Where the first definition is (as ``related_at`` points at a spec's name)."""
    return Related(message="first defined here", file=entry[1], line=entry[2], column=entry[3])


__all__ = ["BATCH_FILES", "Sink", "run_streamed"]
