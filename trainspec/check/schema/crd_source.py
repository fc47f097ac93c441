"""Which CRDs a check uses: the user's, ``$TRAINSPEC_CRDS_DIR``, or the data shipped in the package.

In that order: ``--crds DIR`` (the cluster's own CRDs) replaces everything else, then the
environment variable, then the shipped bundles whose version is the target's (Trainer 2.3
with its JobSet, Kueue 0.19). A bundle shipped for another version than the target is not
used: its groups are left unchecked, and the check says so once (TS524), instead of judging,
say, a Trainer 2.1 TrainJob by the 2.3 schema.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainspec.check.schema.vendored import Bundle, describe, shipped_for

ENV_CRDS_DIR = "TRAINSPEC_CRDS_DIR"


@dataclass(frozen=True)
class CrdSource:
    """The CRD files of a check and where they came from."""

    files: tuple[Path, ...] = ()
    origin: str = "none"  # "option", "environment", "shipped" or "none"
    shipped: tuple[Bundle, ...] = ()  # the bundles used, when origin == "shipped"
    other: tuple[Bundle, ...] = ()  # shipped for another target version: their groups go unchecked

    @property
    def skipped_groups(self) -> frozenset[str]:
        """API groups no CRD check covers because the shipped data is for another version."""
        return frozenset(group for bundle in self.other for group in bundle.groups)

    def describe(self) -> str:
        """For messages: ``the CRDs shipped with trainspec (Kubeflow Trainer 2.3, ...)``."""
        if self.origin == "shipped":
            return f"the CRDs shipped with trainspec ({describe(list(self.shipped))})"
        if self.origin == "none":
            return "no CRDs"
        return f"the CRDs of {'--crds' if self.origin == 'option' else '$' + ENV_CRDS_DIR}"


def resolve_crds(crds: Sequence[str | os.PathLike[str]] | None, target: Any) -> CrdSource:
    """The CRDs for a check: ``crds`` when given (``()``: none at all), else ``$TRAINSPEC_CRDS_DIR``,
    else the shipped bundles matching ``target``."""
    from trainspec.check.schema.crds import expand_crd_paths

    if crds is not None:
        return CrdSource(tuple(expand_crd_paths(crds)), "option" if crds else "none")
    configured = [p for p in os.environ.get(ENV_CRDS_DIR, "").split(os.pathsep) if p]
    if configured:
        return CrdSource(tuple(expand_crd_paths(configured)), "environment")
    used, other = shipped_for(target)
    files = tuple(path for bundle in used for path in bundle.files if path.is_file())
    return CrdSource(files, "shipped" if used else "none", tuple(used), tuple(other))
