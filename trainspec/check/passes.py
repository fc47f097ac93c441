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
    check = CrdCheck(source, target)
    return [*check.check(manifests), *check.finish()]


class CrdCheck:
    """:func:`crd_findings` over manifests given a batch at a time (a streamed check): the CRDs
    are read and the CEL engine built once, and what concerns all batches is said once at the end."""

    def __init__(self, source: CrdSource, target: Any) -> None:
        from trainspec.check.crd_cache import CachedCrdRegistry, VerdictCache, default_cache
        from trainspec.dsl.diagnostics import Diagnostic, Severity
        from trainspec.k8s.wellknown import TRAINER_API_VERSION

        self.source, self.target = source, target
        self.cache = default_cache()
        self.registry = CachedCrdRegistry(source.files, self.cache)
        self.verdicts = VerdictCache(self.cache, self.registry) if self.cache is not None else None
        self.engines: list[Any] = []
        self.first: list[Diagnostic] = list(self.registry.problems)
        self.unchecked: dict[str, set[str]] = {}  # group -> kinds left alone
        trainjob_crd = self.registry.lookup(TRAINER_API_VERSION, "TrainJob")
        self.skip_trainjobs = False
        if trainjob_crd is not None:
            fields = ((trainjob_crd.schema.get("properties") or {}).get("spec") or {}).get("properties") or {}
            if ("runtimePatches" in fields) != target.runtime_patches:
                self.skip_trainjobs = True
                self.first.append(
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

    def _engine(self) -> Any:  # built on first need: a warm verdict cache never imports cel-python
        from trainspec.check.crd_cache import CachedCelEngine

        if not self.engines:
            try:
                self.engines.append(CachedCelEngine(self.cache))
            except ImportError:
                self.engines.append(None)  # check_cel then says once that the rules were not evaluated
        return self.engines[0]

    def check(self, manifests: list[Manifest]) -> list[Any]:
        """The findings of ``manifests``, placed."""
        from trainspec.check.api_server import check_manifest

        skipped = self.source.skipped_groups
        by_key = {m.key: m for m in manifests}
        out: list[Any] = []
        for manifest in manifests:
            if self.skip_trainjobs and manifest.kind == "TrainJob":
                continue
            if manifest.group in skipped:
                self.unchecked.setdefault(manifest.group, set()).add(manifest.kind)
                continue
            found = self.verdicts.get(manifest.data) if self.verdicts is not None else None
            if found is None:
                found = check_manifest(manifest.data, self.registry, engine=self._engine())
                if self.verdicts is not None:
                    self.verdicts.put(manifest.data, found)
            out.extend(relocate([replace(d, file=manifest.key) for d in found], by_key))
        return out

    def finish(self) -> list[Any]:
        """What concerns every manifest checked (the CRDs' own problems, versions); the caches written."""
        for flushable in (*self.engines, self.verdicts):
            if flushable is not None:
                flushable.flush()
        return [*self.first, *_other_version_warnings(self.source, self.unchecked, self.target)]


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
