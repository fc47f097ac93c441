"""``trainspec migrate``: manifests in, specs out, with a located warning for whatever is not carried.

:func:`migrate` reads every object of the given files, turns each job (PyTorchJob, MPIJob,
RayJob, TrainJob with its runtime) into a Runtime and a TrainingJob, validates the result with
the compiler's own passes (what ``trainspec validate`` would say; an error is reported at the
manifest field it came from, TS544) and renders one YAML stream per input file.

The engine of the result (``target``): ``trainer`` (the default, as the issue asks) writes specs
that compile to Kubeflow Trainer, except where Trainer cannot run the job as it is (elastic
training, a Ray program): those keep their engine in the runtime's ``spec.engine`` (TS546).
``source`` records every job's own engine; ``ray`` or ``training-operator`` records that one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainspec.compiler.engines import DEFAULT_ENGINE, ENGINE_NAMES, Engine
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity, format_path, has_errors
from trainspec.k8s.wellknown import KUBEFLOW_V1_API_VERSION, MPI_API_VERSION, RAY_API_VERSION, TRAINER_API_VERSION
from trainspec.migrate import mpijob, pytorchjob, rayjob, trainjob
from trainspec.migrate.draft import Draft
from trainspec.migrate.pod_template import MigrationError
from trainspec.migrate.source import Source
from trainspec.migrate.writer import render, with_header

#: ``--target source``: every job keeps its own engine.
SOURCE = "source"
#: What ``target`` takes: the default engine, ``source``, or another engine.
TARGETS = (DEFAULT_ENGINE.value, SOURCE, *(name for name in ENGINE_NAMES if name != DEFAULT_ENGINE.value))

_READERS: dict[tuple[str, str], Callable[[Source], Draft]] = {
    (KUBEFLOW_V1_API_VERSION, pytorchjob.KIND): pytorchjob.read,
    (MPI_API_VERSION, mpijob.KIND): mpijob.read,
    (RAY_API_VERSION, rayjob.KIND): rayjob.read,
}


@dataclass
class MigratedFile:
    """The specs one input file became."""

    source: str
    #: The output file's name under ``-o DIR``.
    name: str
    documents: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""


@dataclass
class MigrateResult:
    files: list[MigratedFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)

    def to_yaml(self) -> str:
        """Every file's specs as one stream (what ``trainspec migrate FILE...`` prints)."""
        return "---\n".join(f.text for f in self.files if f.documents)


def migrate(paths: Iterable[str | os.PathLike[str]], *, target: str = DEFAULT_ENGINE.value) -> MigrateResult:
    """Migrate the manifests under ``paths``; ``target`` is one of :data:`TARGETS`."""
    from trainspec.kueue.located import read_inputs

    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    result = MigrateResult()
    objects, problems = read_inputs(paths)  # `-`: standard input
    result.diagnostics.extend(problems)
    sources = [Source(obj) for obj in objects]
    runtimes = {
        trainjob.runtime_key(s): s
        for s in sources
        if s.obj.api_version == TRAINER_API_VERSION and s.obj.kind in trainjob.RUNTIME_KINDS
    }
    used_runtimes: set[int] = set()
    by_file: dict[str, list[Draft]] = {}
    for src in sources:
        draft = _read(src, runtimes, result.diagnostics)
        if draft is None:
            continue
        used_runtimes.update(id(s) for s in draft.extra)
        by_file.setdefault(src.file, []).append(draft)
    for src in sources:
        if (
            src.obj.kind in trainjob.RUNTIME_KINDS
            and id(src) not in used_runtimes
            and src.obj.api_version == TRAINER_API_VERSION
        ):
            result.diagnostics.append(
                src.diagnostic(
                    codes.NOT_MIGRATED,
                    (),
                    f"{src.obj.describe()} is not migrated: a runtime is read with the TrainJobs that use it",
                    hint="give a TrainJob that refers to it too",
                )
            )
    names = _output_names(sorted(by_file))
    for file, drafts in sorted(by_file.items()):
        migrated = _render(file, names[file], drafts, target, result.diagnostics)
        if migrated is not None:
            result.files.append(migrated)
    _cross_file_duplicates(result)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _read(src: Source, runtimes: dict, diagnostics: list[Diagnostic]) -> Draft | None:
    key = (src.obj.api_version, src.obj.kind)
    reader = _READERS.get(key)
    if src.obj.api_version == TRAINER_API_VERSION and src.obj.kind in trainjob.RUNTIME_KINDS:
        return None  # read with the TrainJobs that use it
    if reader is None and key != (TRAINER_API_VERSION, trainjob.KIND):
        diagnostics.append(
            src.diagnostic(
                codes.NOT_MIGRATED,
                ("kind",),
                f"{src.obj.describe() or src.obj.kind} ({src.obj.api_version}) is not migrated: "
                "migrate reads PyTorchJob (kubeflow.org/v1), MPIJob (kubeflow.org/v2beta1), RayJob (ray.io/v1) and "
                "TrainJob with its runtime",
                hint="keep this manifest as it is next to the specs",
            )
        )
        return None
    try:
        draft = reader(src) if reader is not None else trainjob.read(src, runtimes)
    except MigrationError as exc:
        diagnostics.append(exc.diagnostic)
        return None
    for one in (src, *draft.extra):
        diagnostics.extend(one.diagnostics)
        diagnostics.extend(one.leftovers())
        one.diagnostics = []
    return draft


def engine_for(draft: Draft, target: str) -> Engine | None:
    """The engine recorded in the draft's runtime (None: the default, Trainer)."""
    if target == SOURCE:
        return draft.engine if draft.engine is not DEFAULT_ENGINE else None
    if target != DEFAULT_ENGINE:
        return Engine(target)
    if draft.needs_engine is not None and draft.engine is not DEFAULT_ENGINE:
        draft.source.diagnostics.append(
            draft.source.diagnostic(
                codes.ENGINE_KEPT,
                ("kind",),
                f"the specs keep engine {draft.engine.value} (the runtime's spec.engine): Kubeflow "
                f"Trainer cannot run this job as it is: {draft.needs_engine}",
                hint="drop spec.engine from the runtime to move it to Trainer once the job can run there",
            )
        )
        return draft.engine
    return None


def _render(
    file: str, name: str, drafts: list[Draft], target: str, diagnostics: list[Diagnostic]
) -> MigratedFile | None:
    documents: list[dict[str, Any]] = []
    owners: list[tuple[Draft, str]] = []
    seen_runtimes: dict[str, dict] = {}
    for draft in drafts:
        for doc in draft.documents(engine_for(draft, target)):
            if doc["kind"] == "Runtime":
                if seen_runtimes.get(doc["metadata"]["name"]) == doc:
                    continue  # two TrainJobs of one file share their runtime
                seen_runtimes[doc["metadata"]["name"]] = doc
            documents.append(doc)
            owners.append((draft, doc["kind"]))
        diagnostics.extend(draft.source.diagnostics)
        draft.source.diagnostics = []
    body = render(documents)
    problems = _validate(body, file, owners)
    diagnostics.extend(problems)
    if has_errors(problems):
        return None
    return MigratedFile(source=file, name=name, documents=documents, text=with_header(file, body))


def _validate(body: str, file: str, owners: list[tuple[Draft, str]]) -> list[Diagnostic]:
    """What the compiler's checks say about the specs, placed at the manifest fields they came from.

    Only errors: the warnings of a valid spec are what ``trainspec validate`` shows on the result.
    A runtime a TrainJob refers to by name is expected to be in the cluster (TS547 says so).
    """
    from trainspec.compiler.pipeline import Options, Stop, run
    from trainspec.dsl.load.spec_sources import load_string

    display = f"<migrated {file}>"
    specs, problems = load_string(body, display)
    if not has_errors(problems):
        problems = [*problems, *run(specs, Options(project=None, stop=Stop.VALIDATE)).diagnostics]
    starts = _document_lines(body)
    out: list[Diagnostic] = []
    seen: set[tuple] = set()
    for diag in problems:
        if not diag.is_error or diag.code == codes.RUNTIME_NOT_FOUND:
            continue
        index = max((i for i, line in enumerate(starts) if line <= (diag.line or 1)), default=0)
        draft, kind = owners[min(index, len(owners) - 1)]
        placed = _placed(diag, draft, kind)
        # One manifest field can become several spec fields (a name names the job and its runtime):
        # one error at that field says it.
        where = (placed.file, placed.line, placed.column)
        if where not in seen:
            seen.add(where)
            out.append(placed)
    return out


def _document_lines(body: str) -> list[int]:
    """The first line of each document of a stream written by :func:`render`."""
    starts = [1]
    for number, line in enumerate(body.splitlines(), 1):
        if line == "---":
            starts.append(number + 1)
    return starts


def _placed(diag: Diagnostic, draft: Draft, kind: str) -> Diagnostic:
    """TS544 at the manifest field a spec field came from (the nearest one that has an origin)."""
    by_path = {format_path(path[1:]): origin for path, origin in draft.origins.items() if path[0] == kind}
    name = (draft.source, ("metadata", "name") if draft.source.has(("metadata", "name")) else ("metadata",))
    by_path.setdefault("metadata.name", name)
    if draft.runtime_ref is None and draft.runtime_own_name is None:
        by_path.setdefault("spec.runtime", name)  # the runtime is named after the job
    path = diag.path
    while path and path not in by_path:
        path = path[: max(path.rfind("."), path.rfind("["), 0)]
    src, where = by_path.get(
        path, (draft.source, ("metadata", "name") if diag.path.startswith("metadata.name") else ())
    )
    placed = src.diagnostic(
        codes.MIGRATED_INVALID,
        where,
        f"the migrated {kind} is not valid: {diag.message} ({diag.code} at {diag.path or 'the document'})",
        hint=diag.hint,
        severity=Severity.ERROR,
    )
    return placed


def _output_names(files: list[str]) -> dict[str, str]:
    """Each input file's output name: its own name (``a.yaml``), with its directories when two clash."""
    names: dict[str, str] = {}
    taken: dict[str, str] = {}
    for file in files:
        base = Path(file).name
        stem = base.rsplit(".", 1)[0]
        name = f"{stem}.yaml"
        if name in taken:
            name = Path(file).with_suffix(".yaml").as_posix().lstrip("/").replace("../", "")
        taken[name] = file
        names[file] = name
    return names


def _cross_file_duplicates(result: MigrateResult) -> None:
    """Two files that migrate to the same object would fail compiling together (TS306): say so now."""
    seen: dict[tuple[str, str, str], str] = {}
    for migrated in result.files:
        for doc in migrated.documents:
            meta = doc["metadata"]
            key = (doc["kind"], meta.get("namespace") or "", meta["name"])
            if key in seen and seen[key] != migrated.source:
                result.diagnostics.append(
                    Diagnostic(
                        code=codes.MIGRATE_COLLISION,
                        severity=Severity.WARNING,
                        file=migrated.source,
                        line=1,
                        column=1,
                        message=f"{migrated.source} and {seen[key]} both migrate to {doc['kind']} {meta['name']}: "
                        "compiling the two results together would define it twice (TS306)",
                        hint="rename one of the jobs (metadata.name) in its spec",
                    )
                )
            seen.setdefault(key, migrated.source)


__all__ = ["MigrateResult", "MigratedFile", "TARGETS", "engine_for", "migrate"]
