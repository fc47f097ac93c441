"""The one entry point of the checker: a :class:`CheckRequest` in, a :class:`CheckReport` out.

``trainspec check`` only turns its arguments into a request and prints the report; the
library does the same::

    from trainspec.check import CheckRequest, run_check

    report = run_check(CheckRequest(["specs/"], cluster=["cluster/kueue"]))
    report.exit_code, report.diagnostics

What :func:`run_check` does, in order: compile the specs among the paths for the target (the
pipeline, stopped after lowering) and read the other YAML documents as manifests; load the
cluster's Kueue objects; check every manifest, and every cluster object, against the CRDs
(:mod:`.schema.crd_source`); apply the admission-webhook rules of Trainer and JobSet; run the Kueue
pre-flight. Findings are deduplicated and sorted.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainspec.check.schema.crd_source import CrdSource
from trainspec.dsl import codes
from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.record import replace

if TYPE_CHECKING:
    from trainspec.compiler.pipeline import CompileResult, Options
    from trainspec.dsl.diagnostics import Diagnostic

PathLike = str | os.PathLike[str]


class CheckUsageError(ValueError, TrainspecError):
    """The request itself is wrong (a ``--crds`` or ``--cluster`` path that does not exist):
    the CLI reports it as a usage error (exit 2), not as a finding."""


@dataclass(frozen=True)
class CheckRequest:
    """What to check, and against what.

    * ``paths``: spec files and folders, and/or YAML files of Kubernetes manifests;
    * ``crds``: CRD files or folders (the cluster's own); None: ``$TRAINSPEC_CRDS_DIR``, else
      the CRDs shipped for the target; ``()``: no CRD validation;
    * ``cluster``: folders or files of the cluster's Kueue objects (and runtimes, Namespaces);
    * ``target``: ``{"trainer": (2, 3), "kueue": (0, 19)}`` fields, over ``options.target``;
    * ``options``: the pipeline options (project file, values...); the check always stops the
      pipeline after lowering.
    """

    paths: Sequence[Any]
    crds: Sequence[PathLike] | None = None
    cluster: Sequence[PathLike] = ()
    target: Mapping[str, Any] | None = None
    options: Options | None = None
    #: The tree the cluster has now (a directory or file of manifests, or git ``REF:PATH``):
    #: every object on both sides is checked as an update (TS440-TS443).
    previous: str | None = None

    def __post_init__(self) -> None:
        # Accept lists (and a single path) from library callers; keep the request hashable-ish.
        for name in ("paths", "crds", "cluster"):
            value = getattr(self, name)
            if isinstance(value, (str, os.PathLike)):
                value = (value,)
            if value is not None:
                object.__setattr__(self, name, tuple(value))


@dataclass(frozen=True)
class CheckReport:
    """The outcome: every finding (sorted), how many files were read, which CRDs were used."""

    diagnostics: tuple[Diagnostic, ...]
    files: int
    crds: CrdSource = field(default_factory=CrdSource)
    result: CompileResult | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        """No errors (warnings allowed)."""
        return not any(d.is_error for d in self.diagnostics)

    @property
    def exit_code(self) -> int:
        """0 without errors, 1 with (the CLI's exit code)."""
        return 0 if self.ok else 1


def missing_paths(request: CheckRequest) -> list[str]:
    """``--crds PATH: no such file or directory`` lines for the request's paths that do not exist."""
    out = []
    for option, paths in (("--crds", request.crds or ()), ("--cluster", request.cluster)):
        # `--cluster -` is standard input (trainspec.kueue.located.read_inputs)
        out += [
            f"{option} {p}: no such file or directory"
            for p in paths
            if not Path(p).exists() and not (option == "--cluster" and p == "-")
        ]
    return out


def pipeline_options(request: CheckRequest) -> Options:
    """The pipeline options of a check: the request's, stopped after lowering, with its target."""
    from trainspec.compiler.pipeline import Options, Stop

    options = replace(request.options or Options(), stop=Stop.LOWER)
    return options if request.target is None else replace(options, target=dict(request.target))


def run_check(request: CheckRequest) -> CheckReport:
    """Check everything ``request`` names; raises :class:`CheckUsageError` for missing paths."""
    from trainspec.check.manifests import cluster_manifests, compiled_manifests, foreign_manifests
    from trainspec.check.passes import crd_findings, preflight_findings, webhook_findings
    from trainspec.check.schema.crd_source import resolve_crds
    from trainspec.compiler.pipeline import run
    from trainspec.dsl.diagnostics import Diagnostic

    problems = missing_paths(request)
    if problems:
        raise CheckUsageError("; ".join(problems))
    cluster = None
    if request.cluster:
        from trainspec.kueue.cluster_files import load_cluster

        cluster = load_cluster(list(request.cluster))
    if request.previous is None and all(isinstance(p, (str, os.PathLike)) for p in request.paths):
        # A repository of any size: its job files compiled and checked a batch at a time.
        from trainspec.check.batch_check import run_streamed_check

        streamed = run_streamed_check(
            [os.fspath(p) for p in request.paths], pipeline_options(request), request.crds, cluster
        )
        if streamed is not None:
            result, sink = streamed
            found = [*result.diagnostics, *(cluster.problems if cluster else ())]
            found += sink.check_crds(cluster_manifests(cluster))
            found += sink.finish()
            ordered = tuple(sorted(dict.fromkeys(found), key=Diagnostic.sort_key))
            count = result.files + (len({o.file for o in cluster.objects}) if cluster else 0)
            return CheckReport(ordered, count, sink.source or CrdSource(), result)
    result = run(list(request.paths), pipeline_options(request))
    target = result.target
    if target is None:  # the pipeline resolves one whenever it gets that far; else the default pair
        from trainspec.compiler.targets import Target

        target = Target()
    diagnostics: list[Diagnostic] = list(result.diagnostics)
    manifests = compiled_manifests(result)
    # The load pass already told trainspec's documents from the others (and parsed them).
    manifests += foreign_manifests(result)

    if cluster is not None:
        diagnostics += cluster.problems
    source = resolve_crds(request.crds, target)
    if source.files or source.other:  # other: the shipped data for another version says it was not used
        diagnostics += crd_findings([*manifests, *cluster_manifests(cluster)], source, target)
    diagnostics += webhook_findings(
        manifests, cluster, result.plans, jobset_gates=result.target.jobset_gates if result.target is not None else ()
    )
    diagnostics += preflight_findings(manifests, cluster, target)
    if request.previous is not None:
        diagnostics += _update_findings(request.previous, manifests, result)
    ordered = tuple(sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key))
    count = result.files + (len({o.file for o in cluster.objects}) if cluster else 0)
    return CheckReport(ordered, count, source, result)


def _update_findings(previous: str, manifests: list[Any], result: CompileResult) -> list[Diagnostic]:
    """The updates from ``previous`` to the checked manifests that the cluster would refuse."""
    from trainspec.check.day2 import manifest_updates, read_previous
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.dsl.spec.models import RunPolicy

    try:
        before = read_previous(previous)
    except ValueError as exc:
        return [
            Diagnostic(
                code=codes.PREVIOUS_TREE,
                message=f"--previous {previous}: {exc}",
                hint="give the directory the cluster's manifests are in, or a git REF:PATH such as origin/main:deploy",
            )
        ]
    replaced = {
        (plan.resolved.namespace, plan.resolved.name)
        for plan in result.plans
        if plan.resolved.job.spec.runs is RunPolicy.REPLACE
    }
    return manifest_updates(manifests, before, replaced)
