"""``trainspec migrate``: turn existing PyTorchJob, MPIJob, RayJob and TrainJob manifests into specs.

One reader per kind (:mod:`.pytorchjob`, :mod:`.mpijob`, :mod:`.rayjob`, :mod:`.trainjob`)
fills a :class:`~trainspec.migrate.draft.Draft`; every field a reader does not carry is a
located warning (:mod:`.source`); :mod:`.convert` validates and renders the specs and
:mod:`.writer` writes them. docs/migrate.md says what each field becomes.
"""

from __future__ import annotations

from trainspec.migrate.convert import TARGETS, MigratedFile, MigrateResult, migrate

__all__ = ["TARGETS", "MigrateResult", "MigratedFile", "migrate"]
