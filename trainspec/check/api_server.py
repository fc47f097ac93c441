"""What the API server says about manifests: each one's schema and CEL rules, and, for a set,
the admission webhooks over it.

The package's public entry points :func:`check_manifest` and :func:`check_manifests`
(re-exported by :mod:`trainspec.check`); :mod:`.passes` runs the same check per manifest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trainspec.check.cel.validations import CelEngine, check_cel
from trainspec.check.schema.core_kinds import CORE_KINDS
from trainspec.check.schema.crds import CrdRegistry, load_crds
from trainspec.check.webhooks.admission import check_webhooks
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.record import replace


def check_manifest(
    manifest: Any,
    registry: CrdRegistry,
    *,
    engine: CelEngine | None = None,
    old: Mapping[str, Any] | None = None,
) -> list[Diagnostic]:
    """Schema and CEL findings for one manifest (no file set; webhooks not included).

    Pass ``old`` (the object as it exists on the cluster) to evaluate transition rules
    (``oldSelf``) as for an update; by default the manifest is checked as a create.
    """
    if not isinstance(manifest, Mapping):
        return [
            Diagnostic(code=codes.CRD_SCHEMA, message=f"a manifest must be a mapping, got {type(manifest).__name__}")
        ]
    api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
    missing = [name for name, value in (("apiVersion", api_version), ("kind", kind)) if not isinstance(value, str)]
    if missing:
        return [Diagnostic(code=codes.CRD_SCHEMA, message=f"missing required field {m!r}", path=m) for m in missing]
    assert isinstance(api_version, str) and isinstance(kind, str)
    if (api_version, kind) in CORE_KINDS:  # schema and built-in rules of the core kind (.core_kinds)
        from trainspec.check.schema.core_kinds import check_core_kind

        return check_core_kind(manifest)

    crd = registry.lookup(api_version, kind)
    if crd is None:
        from trainspec.check.schema.podmonitor_schema import (
            check_hand_written,  # kinds without a shipped CRD (PodMonitor)
        )

        hand_written = check_hand_written(dict(manifest))
        if hand_written is not None:
            return hand_written
        group = api_version.rpartition("/")[0]
        served = registry.served_versions(group, kind) if group else []
        if served:
            return [
                Diagnostic(
                    code=codes.CRD_SCHEMA,
                    path="apiVersion",
                    message=f"{kind} is not served as {api_version}; served versions: "
                    + ", ".join(f"{group}/{v}" for v in served),
                )
            ]
        return [
            Diagnostic(
                code=codes.NO_CRD,
                severity=Severity.WARNING,
                message=f"no CRD known for {kind} ({api_version}); not checked",
                hint="point the checker at the CRD with --crds",
            )
        ]
    found = registry.validator(crd).validate(dict(manifest))
    found.extend(check_cel(dict(manifest), crd.schema, engine=engine, old=old))
    return sorted(found, key=lambda d: (d.path, d.code))


def check_manifests(
    manifests: Sequence[tuple[str | None, Any]],
    crd_dirs: Iterable[Path | str],
    *,
    known_runtimes: Iterable[str | Mapping[str, Any]] = (),
    engine: CelEngine | None = None,
    policy: bool = True,
) -> list[Diagnostic]:
    """Check ``(source file, manifest)`` pairs against the CRDs in ``crd_dirs`` and the webhooks.

    ``known_runtimes`` are runtimes TrainJobs may reference besides those among the manifests:
    names (``"torch-distributed"`` = ClusterTrainingRuntime, ``"ns/name"`` = TrainingRuntime)
    or runtime manifests (used for the TrainJob checks, not validated themselves).
    ``engine`` replaces the default cel-python engine. ``policy=False`` skips trainspec's own
    runtime policy (framework label, explicit mlPolicy, no ``webhook-validation: disabled``).
    Findings come per manifest in input order (schema and CEL, sorted by path), then the
    webhook findings; each carries its manifest's file.
    """
    registry = load_crds(crd_dirs)
    out: list[Diagnostic] = list(registry.problems)
    for file, manifest in manifests:
        out.extend(replace(d, file=file) for d in check_manifest(manifest, registry, engine=engine))
    out.extend(check_webhooks(manifests, known_runtimes=known_runtimes, policy=policy))
    return out
