"""``trainspec diff``: what two sets of specs mean differently, keyed by job and runtime.

``snapshot`` reduces a compile to comparable facts, ``compare`` finds the changes, ``render``
prints them, ``gitref`` exports the specs of a git ref for ``--git``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainspec.diff.compare import Change, DiffReport, compare
from trainspec.diff.snapshot import Snapshot, snapshot

if TYPE_CHECKING:
    from trainspec.compiler.pipeline import CompileResult

__all__ = ["Change", "DiffReport", "Snapshot", "compare", "diff_results", "snapshot"]


def diff_results(old: CompileResult, new: CompileResult) -> DiffReport:
    """Compare two :class:`~trainspec.compiler.pipeline.CompileResult` by meaning.

    A job whose run object changes (a new run replaces the old one on the cluster) gets a
    ``run`` change saying which run replaces which and where it resumes from.
    """
    from trainspec.check.day2 import new_runs
    from trainspec.compiler.emit import manifest_dicts
    from trainspec.diff.pipeline_changes import pipeline_changes

    report = compare(snapshot(old), snapshot(new))
    if old.pipelines or new.pipelines:
        report = DiffReport((*report.changes, *pipeline_changes(old, new)))
    previous = [d for output in old.outputs for d in manifest_dicts(output.objects)]
    runs = dict(new_runs(new, previous, details=False))
    if not runs:
        return report
    changes = list(report.changes)
    # Each new run right after the last change of its job (a job's changes are contiguous).
    for key, message in sorted(runs.items()):
        at = max((i for i, c in enumerate(changes) if c.scope == "job" and c.key == key), default=None)
        run = Change("job", key, "run", message)
        if at is None:
            changes.append(run)
        else:
            changes.insert(at + 1, run)
    return DiffReport(tuple(changes))
