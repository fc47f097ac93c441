"""``trainspec check``: what the cluster would say, offline.

The specs among the PATHs are compiled (for the target versions) and any Kubernetes
manifests among them (TrainJob, runtimes, PVCs, Kueue objects...) are read as they are. Then:

* with ``--crds DIR`` (or ``$TRAINSPEC_CRDS_DIR``): every manifest, and every object under
  ``--cluster``, against its CRD (strict schema and every CEL rule), for any kind with a CRD;
* always: the admission-webhook rules of Trainer and JobSet;
* with ``--cluster DIR``: the Kueue pre-flight of every TrainJob against the Kueue objects.

Findings on compiled manifests point at the job or runtime spec that produced them (the
field that decides it when known, else the spec's document start), with the manifest in the
message; findings on manifests read from files point at the exact field.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from trainspec.cli.common import add_input_options

_PATH_PART = re.compile(r"\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")
_RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument("--crds", metavar="DIR", action="append", default=[],
                        help="CRD files or folders (repeat; `kubectl get crd -o yaml` output works); "
                             "default: $TRAINSPEC_CRDS_DIR, else no CRD validation")
    parser.add_argument("--cluster", metavar="DIR", action="append", default=[],
                        help="Kueue objects of the cluster (ClusterQueues, LocalQueues, ResourceFlavors, "
                             "WorkloadPriorityClasses, Cohorts, Topologies, Namespaces) for the pre-flight")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing when everything is valid")


@dataclass(frozen=True)
class Manifest:
    """One manifest to check, and where its findings should point."""

    key: str  # unique; stands in for the file name inside the checker
    data: dict[str, Any]
    located: Any = None  # kueue.located.Located, for manifests read from files
    sources: Any = None  # compiler.provenance.FieldSources of a compiled manifest
    label: str = ""  # "compiled TrainJob team-nlp/llama-sft (team-nlp/llama-sft.yaml)"

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", ""))


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from trainspec.cli import report
    from trainspec.cli.common import compile_args, report_foreign
    from trainspec.compiler.pipeline import Stop
    from trainspec.dsl.diagnostics import Diagnostic, has_errors

    for option, paths in (("--crds", args.crds), ("--cluster", args.cluster)):
        for path in paths:
            if not Path(path).exists():
                print(f"trainspec check: {option} {path}: no such file or directory", file=sys.stderr)
                return 2
    result = compile_args(args, Stop.LOWER)
    report_foreign(result, args, sys.stdout)
    target = result.target
    # The load pass already told trainspec's documents from the others: read those as manifests.
    files = sorted({Path(doc.file) for doc in result.foreign}, key=lambda p: p.as_posix())
    diagnostics: list[Diagnostic] = list(result.diagnostics)
    manifests = _compiled(result)
    read, found = _read(files)
    manifests += read
    diagnostics += found

    cluster = None
    if args.cluster:
        from trainspec.kueue.cluster import load_cluster

        cluster = load_cluster(args.cluster)
        diagnostics += cluster.problems
    crd_dirs = args.crds or [p for p in os.environ.get("TRAINSPEC_CRDS_DIR", "").split(os.pathsep) if p]
    if crd_dirs:  # the cluster files are custom resources too
        objects = cluster.objects if cluster is not None else []
        cluster_manifests = [Manifest(f"#c{i}", o.data, located=o) for i, o in enumerate(objects)]
        diagnostics += _crd_findings([*manifests, *cluster_manifests], crd_dirs, target)
    diagnostics += _webhook_findings(manifests, cluster, result.plans)
    diagnostics += _preflight_findings(manifests, cluster, target)
    diagnostics = sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key)
    count = result.files + (len({o.file for o in cluster.objects}) if cluster else 0)
    report.write(diagnostics, sys.stdout, args.format, files=count, quiet=args.quiet)
    return 1 if has_errors(diagnostics) else 0


# -- inputs ---------------------------------------------------------------------------------------


def _compiled(result: Any) -> list[Manifest]:
    """The compiled objects, each with the provenance lowering recorded for its fields."""
    from trainspec.compiler.emit import manifest_dicts

    out: list[Manifest] = []
    for output in result.outputs:
        for data, sources in zip(manifest_dicts(output.objects), output.provenance):
            meta = data.get("metadata") or {}
            kind, name = data.get("kind"), meta.get("name")
            where = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
            label = f"compiled {kind} {where} ({output.path})"
            out.append(Manifest(f"#m{len(out)}", data, sources=sources, label=label))
    return out


def _read(files: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """Kubernetes manifests (not trainspec specs) in the input YAML files."""
    from trainspec.kueue.located import read_objects

    objects, problems = read_objects(list(files))  # load problems repeat the compile pass's: deduplicated later
    # A kustomization (as `trainspec compile -o DIR` writes one) configures the build; it is never applied.
    objects = [o for o in objects if not o.api_version.startswith("kustomize.config.k8s.io/")]
    return [Manifest(f"#r{i}", o.data, located=o) for i, o in enumerate(objects)], problems


# -- locating findings ----------------------------------------------------------------------------


def parse_path(text: str) -> tuple:
    """``spec.a[2]['x.y/z']`` -> ``("spec", "a", 2, "x.y/z")`` (the checker's rendered paths)."""
    parts: list[Any] = []
    for match in _PATH_PART.finditer(text):
        name, index, quoted = match.groups()
        parts.append(name if name is not None else int(index) if index is not None
                     else re.sub(r"\\(.)", r"\1", quoted))
    return tuple(parts)


def _place(manifest: Manifest, diagnostic: Any, path: tuple) -> Any:
    """``diagnostic`` located at ``path`` of ``manifest``'s source (spec line or manifest line)."""
    from trainspec.dsl.diagnostics import format_path

    if manifest.located is not None:
        mark = manifest.located.mark(path)
        if diagnostic.message.startswith("unknown field") and path in manifest.located.doc.keys:
            mark = manifest.located.doc.keys[path]  # the offending key, as validate's TS200 does
        return replace(diagnostic, file=manifest.located.file, line=mark.line, column=mark.column)
    ref = manifest.sources.lookup(path) if manifest.sources is not None else None
    if ref is None:
        return replace(diagnostic, file=None, message=f"{diagnostic.message} [{manifest.label}]")
    where = ref.location()
    field = f", field {diagnostic.path}" if diagnostic.path else ""
    return replace(diagnostic, file=where.file, line=where.line, column=where.column,
                   path=format_path(ref.path), message=f"{diagnostic.message} [{manifest.label}{field}]")


def _relocate(diagnostics: Iterable[Any], by_key: dict[str, Manifest]) -> list[Any]:
    """Findings whose ``file`` is a manifest key, placed where users can read them."""
    out = []
    for diagnostic in diagnostics:
        related = tuple(_related(r, by_key) for r in diagnostic.related)
        diagnostic = replace(diagnostic, related=related)
        manifest = by_key.get(diagnostic.file or "")
        out.append(diagnostic if manifest is None else _place(manifest, diagnostic, parse_path(diagnostic.path)))
    return out


def _related(related: Any, by_key: dict[str, Manifest]) -> Any:
    manifest = by_key.get(related.file or "")
    if manifest is None:
        return related
    if manifest.located is not None:
        start = manifest.located.doc.start
        return replace(related, file=manifest.located.file, line=start.line, column=start.column)
    ref = manifest.sources.default if manifest.sources is not None else None
    where = ref.location() if ref is not None else None
    return replace(related, file=where.file if where else None, line=where.line if where else None,
                   column=where.column if where else None, message=f"{related.message} [{manifest.label}]")


# -- the checks -----------------------------------------------------------------------------------


def _crd_findings(manifests: list[Manifest], crd_dirs: list[str], target: Any) -> list[Any]:
    from trainspec.check import check_manifest
    from trainspec.dsl.diagnostics import Diagnostic, Severity
    from trainspec.check.cache import CachedCelEngine, CachedCrdRegistry, VerdictCache, crd_files, default_cache

    cache = default_cache()
    registry = CachedCrdRegistry(crd_files(crd_dirs), cache)
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
    from trainspec.k8s.wellknown import TRAINER_API_VERSION

    trainjob_crd = registry.lookup(TRAINER_API_VERSION, "TrainJob")
    skip_trainjobs = False
    if trainjob_crd is not None:
        fields = ((trainjob_crd.schema.get("properties") or {}).get("spec") or {}).get("properties") or {}
        if ("runtimePatches" in fields) != target.runtime_patches:
            skip_trainjobs = True
            out.append(Diagnostic(code="TS524", severity=Severity.WARNING, file=trainjob_crd.source,
                                  message=f"the TrainJob CRD here is for Trainer "
                                          f"{'2.2+' if 'runtimePatches' in fields else '2.1'} but the target is "
                                          f"{target}: TrainJobs are not checked against it",
                                  hint="pass the CRDs of the target Trainer version with --crds"))
    by_key = {m.key: m for m in manifests}
    for manifest in manifests:
        if skip_trainjobs and manifest.kind == "TrainJob":
            continue
        found = verdicts.get(manifest.data) if verdicts is not None else None
        if found is None:
            found = check_manifest(manifest.data, registry, engine=engine())
            if verdicts is not None:
                verdicts.put(manifest.data, found)
        out.extend(_relocate([replace(d, file=manifest.key) for d in found], by_key))
    for flushable in (*engines, verdicts):
        if flushable is not None:
            flushable.flush()
    return out


def _webhook_findings(manifests: list[Manifest], cluster: Any, plans: Iterable[Any] = ()) -> list[Any]:
    from trainspec.check import check_webhooks
    from trainspec.check.runtime_rules import check_runtime
    from trainspec.compiler.external import external_runtime_names

    known: list[Any] = [o.data for o in cluster.objects if o.kind in _RUNTIME_KINDS] if cluster else []
    # External runtimes are the cluster's: known by name; a definition from --cluster wins over the name.
    known += external_runtime_names(plans)
    pairs = [(m.key, m.data) for m in manifests]
    found = check_webhooks(pairs, known_runtimes=known, policy=False)
    for m in manifests:  # trainspec's own runtime policy applies to what it compiled, not to user files
        if m.located is None and m.kind in _RUNTIME_KINDS:
            plain = set(check_runtime(m.data, m.key, policy=False))
            found += [d for d in check_runtime(m.data, m.key, policy=True) if d not in plain]
    return _relocate(found, {m.key: m for m in manifests})


def _preflight_findings(manifests: list[Manifest], cluster: Any, target: Any) -> list[Any]:
    """Kueue's label rules for every TrainJob; with ``--cluster``, the whole pre-flight."""
    from trainspec.check._paths import render_path
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.kueue.preflight import kueue_label_problems, preflight

    runtimes = [m.data for m in manifests if m.kind in _RUNTIME_KINDS]
    runtimes += [o.data for o in cluster.objects if o.kind in _RUNTIME_KINDS] if cluster is not None else []
    out = []
    for manifest in manifests:
        if manifest.kind != "TrainJob" or not str(manifest.data.get("apiVersion", "")).startswith("trainer."):
            continue
        findings = kueue_label_problems(manifest.data)
        if cluster is not None:
            findings += preflight(cluster, manifest.data, _runtime_of(manifest.data, runtimes),
                                  merge_resources=target.trainer >= (2, 3))
        for finding in findings:
            diagnostic = Diagnostic(code=finding.code, message=finding.message, severity=finding.severity,
                                    path=render_path(finding.path), hint=finding.hint, related=finding.related)
            out.append(_place(manifest, diagnostic, finding.path))
    return out


def _runtime_of(trainjob: dict[str, Any], runtimes: list[dict[str, Any]]) -> dict[str, Any] | None:
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    kind = ref.get("kind", "ClusterTrainingRuntime")
    namespace = (trainjob.get("metadata") or {}).get("namespace")
    for runtime in runtimes:
        meta = runtime.get("metadata") or {}
        if runtime.get("kind") == kind and meta.get("name") == ref.get("name") and (
                kind == "ClusterTrainingRuntime" or meta.get("namespace") in (None, namespace)):
            return runtime
    return None
