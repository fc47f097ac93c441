"""Offline manifest checker: what an API server and admission webhooks would say.

For every emitted manifest (a dict parsed from YAML):

1. structural schema from the CRD, made strict like ``kubectl --validate=strict`` (TS500);
2. the CRD's CEL rules after schema defaulting (TS501 violated, TS502 not evaluable);
3. admission-webhook rules of Trainer and JobSet over the whole set (TS503);

kinds without a known CRD get a TS504 warning, except a few core kinds (PersistentVolumeClaim
has a small strict schema; ConfigMap, Secret, Namespace, ServiceAccount, Role and RoleBinding
are accepted unchecked).

Importing this package is cheap: jsonschema, PyYAML and cel-python are imported on first use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic, Severity

from .cel import CelCompileError, CelEngine, CelEvalError, CelPyEngine, check_cel, default_engine, iter_rules
from .core import CORE_KINDS
from .crds import CrdRegistry, CrdVersion, load_crds
from .webhook import RESERVED_ENV, check_webhooks

__all__ = [
    "CelCompileError",
    "CelEngine",
    "CelEvalError",
    "CelPyEngine",
    "CrdRegistry",
    "CrdVersion",
    "RESERVED_ENV",
    "check_cel",
    "check_manifest",
    "check_manifests",
    "check_webhooks",
    "default_crd_dirs",
    "default_engine",
    "iter_rules",
    "load_crds",
]

ENV_CRDS_DIR = "TRAINSPEC_CRDS_DIR"

_CORE_VALIDATORS: dict[tuple[str, str], Any] = {}
_CORE_LOCK = threading.Lock()


def default_crd_dirs() -> list[Path]:
    """Where the CRDs are: ``$TRAINSPEC_CRDS_DIR`` (``os.pathsep``-separated), else
    ``../shared/crds`` next to the project root (the folder with ``pyproject.toml``).
    Returns ``[]`` when neither exists."""
    configured = os.environ.get(ENV_CRDS_DIR)
    if configured:
        return [Path(p) for p in configured.split(os.pathsep) if p and Path(p).exists()]
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file():
            crds = parent.parent / "shared" / "crds"
            return [crds] if crds.is_dir() else []
    return []


def _core_validator(key: tuple[str, str]) -> Any:
    with _CORE_LOCK:
        if key not in _CORE_VALIDATORS:
            from .schema import StructuralValidator

            _CORE_VALIDATORS[key] = StructuralValidator(CORE_KINDS[key] or {}, converted=True)
        return _CORE_VALIDATORS[key]


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
            Diagnostic(code="TS500", message=f"a manifest must be a mapping, got {type(manifest).__name__}")
        ]
    api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
    missing = [
        name for name, value in (("apiVersion", api_version), ("kind", kind)) if not isinstance(value, str)
    ]
    if missing:
        return [Diagnostic(code="TS500", message=f"missing required field {m!r}", path=m) for m in missing]
    assert isinstance(api_version, str) and isinstance(kind, str)
    if (api_version, kind) in CORE_KINDS:
        if CORE_KINDS[(api_version, kind)] is None:
            return []
        return sorted(_core_validator((api_version, kind)).validate(dict(manifest)), key=lambda d: d.path)

    crd = registry.lookup(api_version, kind)
    if crd is None:
        group = api_version.rpartition("/")[0]
        served = registry.served_versions(group, kind) if group else []
        if served:
            return [
                Diagnostic(
                    code="TS500",
                    path="apiVersion",
                    message=f"{kind} is not served as {api_version}; served versions: "
                    + ", ".join(f"{group}/{v}" for v in served),
                )
            ]
        return [
            Diagnostic(
                code="TS504",
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
