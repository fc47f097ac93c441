"""The three passes of a check over its manifests: CRDs, admission webhooks, Kueue pre-flight.

Each takes the manifests (:mod:`.manifests`) and returns diagnostics already placed where
users can read them (:mod:`.locate`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trainspec.check.locate import place, relocate
from trainspec.check.manifests import RUNTIME_KINDS, Manifest, runtime_of
from trainspec.check.schema.crd_source import CrdSource
from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.record import replace


def crd_findings(manifests: list[Manifest], source: CrdSource, target: Any) -> list[Any]:
    """Schema and CEL findings of every manifest against the CRDs of ``source``.

    Uses the on-disk cache (:mod:`.crd_cache`) for parsed CRDs, CEL parse trees and verdicts.
    Manifests of a group that only shipped data for another version covers are not checked;
    one TS524 warning per such bundle says so.
    """
    from trainspec.check.api_server import check_manifest
    from trainspec.check.crd_cache import CachedCelEngine, CachedCrdRegistry, VerdictCache, default_cache
    from trainspec.dsl.diagnostics import Diagnostic, Severity
    from trainspec.k8s.wellknown import TRAINER_API_VERSION

    cache = default_cache()
    registry = CachedCrdRegistry(source.files, cache)
    verdicts = VerdictCache(cache, registry) if cache is not None else None
    engines: list[Any] = []

    def engine() -> Any:  # built on first need: a warm verdict cache never imports cel-python
        if not engines:
            try:
                engines.append(CachedCelEngine(cache))
            except ImportError:
                engines.append(None)  # check_cel then says once that the rules were not evaluated
        return engines[0]

    out: list[Diagnostic] = list(registry.problems)
    trainjob_crd = registry.lookup(TRAINER_API_VERSION, "TrainJob")
    skip_trainjobs = False
    if trainjob_crd is not None:
        fields = ((trainjob_crd.schema.get("properties") or {}).get("spec") or {}).get("properties") or {}
        if ("runtimePatches" in fields) != target.runtime_patches:
            skip_trainjobs = True
            out.append(
                Diagnostic(
                    code=codes.CRDS_TARGET_MISMATCH,
                    severity=Severity.WARNING,
                    file=trainjob_crd.source,
                    message=f"the TrainJob CRD here is for Trainer "
                    f"{'2.2+' if 'runtimePatches' in fields else '2.1'} but the target is "
                    f"{target}: TrainJobs are not checked against it",
                    hint="pass the CRDs of the target Trainer version with --crds",
                )
            )
    skipped = source.skipped_groups
    by_key = {m.key: m for m in manifests}
    unchecked: dict[str, set[str]] = {}  # group -> kinds left alone
    for manifest in manifests:
        if skip_trainjobs and manifest.kind == "TrainJob":
            continue
        if manifest.group in skipped:
            unchecked.setdefault(manifest.group, set()).add(manifest.kind)
            continue
        found = verdicts.get(manifest.data) if verdicts is not None else None
        if found is None:
            found = check_manifest(manifest.data, registry, engine=engine())
            if verdicts is not None:
                verdicts.put(manifest.data, found)
        out.extend(relocate([replace(d, file=manifest.key) for d in found], by_key))
    for flushable in (*engines, verdicts):
        if flushable is not None:
            flushable.flush()
    return out + _other_version_warnings(source, unchecked, target)


def _other_version_warnings(source: CrdSource, unchecked: dict[str, set[str]], target: Any) -> list[Any]:
    from trainspec.dsl.diagnostics import Diagnostic, Severity

    out = []
    for bundle in source.other:
        kinds = sorted(kind for group in bundle.groups for kind in unchecked.get(group, ()))
        if not kinds:
            continue  # nothing of this bundle's groups was there to check: nothing to say
        out.append(
            Diagnostic(
                code=codes.CRDS_TARGET_MISMATCH,
                severity=Severity.WARNING,
                file="--crds",
                message=f"the CRDs shipped with trainspec are {bundle}'s but the target is {target}: "
                f"{', '.join(kinds)} manifests are not checked against a CRD",
                hint="pass the cluster's own CRDs with --crds DIR (`kubectl get crd -o yaml` output works)",
            )
        )
    return out


def webhook_findings(
    manifests: list[Manifest], cluster: Any, plans: Iterable[Any] = (), jobset_gates: Iterable[str] = ()
) -> list[Any]:
    """The admission-webhook rules of Trainer and JobSet, and trainspec's runtime policy for what it compiled.

    ``jobset_gates``: the JobSet feature gates the target says the cluster turned on.
    """
    from trainspec.check.webhooks.admission import check_webhooks
    from trainspec.check.webhooks.runtime_rules import check_runtime
    from trainspec.compiler.external import external_runtime_names

    known: list[Any] = [o.data for o in cluster.objects if o.kind in RUNTIME_KINDS] if cluster else []
    # External runtimes are the cluster's: known by name; a definition from --cluster wins over the name.
    known += external_runtime_names(plans)
    pairs = [(m.key, m.data) for m in manifests]
    found = check_webhooks(pairs, known_runtimes=known, policy=False, jobset_gates=tuple(jobset_gates))
    for m in manifests:  # trainspec's own runtime policy applies to what it compiled, not to user files
        if m.located is None and m.kind in RUNTIME_KINDS:
            plain = set(check_runtime(m.data, m.key, policy=False))
            found += [d for d in check_runtime(m.data, m.key, policy=True) if d not in plain]
    return relocate(found, {m.key: m for m in manifests})


def preflight_findings(manifests: list[Manifest], cluster: Any, target: Any) -> list[Any]:
    """Kueue's label rules for every TrainJob; with a cluster, the whole pre-flight."""
    from trainspec.check._paths import render_path
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.kueue.preflight import kueue_label_problems, preflight

    runtimes = [m.data for m in manifests if m.kind in RUNTIME_KINDS]
    runtimes += [o.data for o in cluster.objects if o.kind in RUNTIME_KINDS] if cluster is not None else []
    out = []
    for manifest in manifests:
        if manifest.kind != "TrainJob" or not str(manifest.data.get("apiVersion", "")).startswith("trainer."):
            continue
        findings = kueue_label_problems(manifest.data)
        if cluster is not None:
            findings += preflight(
                cluster,
                manifest.data,
                runtime_of(manifest.data, runtimes),
                merge_resources=target.trainer >= (2, 3),
                kueue_version=target.kueue,
            )
        for finding in findings:
            diagnostic = Diagnostic(
                code=finding.code,
                message=finding.message,
                severity=finding.severity,
                path=render_path(finding.path),
                hint=finding.hint,
                related=(*finding.related, *(_note_at(manifest, finding.code, text, at) for text, at in finding.notes)),
            )
            out.append(place(manifest, diagnostic, finding.path))
    return out


def _note_at(manifest: Manifest, code: Code, text: str, path: tuple) -> Any:
    """A note at ``path`` of ``manifest`` itself, placed as its findings are (spec line or manifest line)."""
    from trainspec.dsl.diagnostics import Diagnostic, Related

    where = place(manifest, Diagnostic(code=code, message=""), path)  # only its place is used
    return Related(message=text, file=where.file, line=where.line, column=where.column)
