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
    """Compare two :class:`~trainspec.compiler.pipeline.CompileResult` by meaning."""
    return compare(snapshot(old), snapshot(new))
