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

from trainspec.cli.common import add_input_options, load_values, project_file
from trainspec.compiler.targets import add_target_option

_OTHER_API = re.compile(r"^apiVersion:[ \t]*[\"']?(?!trainspec\.dev/)[A-Za-z0-9]", re.MULTILINE)
_PATH_PART = re.compile(r"\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")
_QUEUE, _PRIORITY, _MAX_EXEC = ("kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class",
                                "kueue.x-k8s.io/max-exec-time-seconds")
_RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
#: TrainJob manifest field -> job spec fields to point at (the first the spec writes wins).
_JOB_FIELDS: tuple[tuple[tuple, tuple[tuple, ...]], ...] = (
    (("metadata", "labels", _QUEUE), (("spec", "queue"),)),
    (("metadata", "labels", _PRIORITY), (("spec", "priority"),)),
    (("metadata", "labels", _MAX_EXEC), (("spec", "maxRunTime"),)),
    (("metadata", "namespace"), (("metadata", "namespace"), ("spec", "queue"))),
    (("metadata",), (("metadata", "name"),)),
    (("spec", "activeDeadlineSeconds"), (("spec", "maxRunTime"),)),
    (("spec", "runtimeRef"), (("spec", "runtime"),)),
    (("spec", "initializer"), (("spec", "data"),)),
    (("spec", "trainer", "numNodes"), (("spec", "nodes"), ("spec", "runtime"))),
    (("spec", "trainer", "numProcPerNode"), (("spec", "procsPerNode"),)),
    (("spec", "trainer", "resourcesPerNode"), (("spec", "resourcesPerNode"), ("spec", "runtime"))),
    (("spec", "trainer", "image"), (("spec", "image"),)),
    (("spec", "trainer", "command"), (("spec", "command"),)),
    (("spec", "trainer", "args"), (("spec", "args"),)),
    (("spec", "trainer", "env"), (("spec", "env"), ("spec", "secretEnv"))),
)
_RUNTIME_FIELDS: tuple[tuple[tuple, tuple[tuple, ...]], ...] = (
    (("metadata",), (("metadata", "name"),)),
    (("spec", "mlPolicy"), (("spec", "framework"),)),
    (("spec", "podGroupPolicy"), (("spec", "gang"),)),
    (("spec", "template", "spec", "volumeClaimPolicies"), (("spec", "dataSharding"),)),
    (("spec", "template", "spec", "failurePolicy"), (("spec", "restarts"),)),
)
_BUILTIN_FIELDS: tuple[tuple[tuple, tuple[tuple, ...]], ...] = (((), (("spec", "runtime"),)),)
_CLAIM_FIELDS: tuple[tuple[tuple, tuple[tuple, ...]], ...] = (((), (("spec", "checkpoint"),)),)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument("--crds", metavar="DIR", action="append", default=[],
                        help="CRD files or folders (repeat; `kubectl get crd -o yaml` output works); "
                             "default: $TRAINSPEC_CRDS_DIR, else no CRD validation")
    parser.add_argument("--cluster", metavar="DIR", action="append", default=[],
                        help="Kueue objects of the cluster (ClusterQueues, LocalQueues, ResourceFlavors, "
                             "WorkloadPriorityClasses, Cohorts, Topologies, Namespaces) for the pre-flight")
    add_target_option(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing when everything is valid")


@dataclass(frozen=True)
class Manifest:
    """One manifest to check, and where its findings should point."""

    key: str  # unique; stands in for the file name inside the checker
    data: dict[str, Any]
    located: Any = None  # kueue.located.Located, for manifests read from files
    spec: Any = None  # dsl.sources.LoadedSpec the manifest was compiled from
    fields: tuple = ()  # _JOB_FIELDS or _RUNTIME_FIELDS for compiled manifests
    label: str = ""  # "compiled TrainJob team-nlp/llama-sft (team-nlp/llama-sft.yaml)"

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", ""))


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from trainspec.cli import report
    from trainspec.compiler.pipeline import compile_paths
    from trainspec.compiler.targets import resolve_target, retarget
    from trainspec.dsl.diagnostics import Diagnostic, has_errors
    from trainspec.dsl.sources import discover

    for option, paths in (("--crds", args.crds), ("--cluster", args.cluster)):
        for path in paths:
            if not Path(path).exists():
                print(f"trainspec check: {option} {path}: no such file or directory", file=sys.stderr)
                return 2
    values, problems = load_values(args.values)
    if problems:
        report.write(problems, sys.stdout, args.format)
        return 1
    files, _ = discover(args.paths)
    result = retarget(compile_paths(args.paths, values=values, project=project_file(args)), args.target)
    target, _ = resolve_target(result, args.target)
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
    diagnostics += _webhook_findings(manifests, cluster)
    diagnostics += _preflight_findings(manifests, cluster, target)
    diagnostics = sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key)
    count = len(files) + (len({o.file for o in cluster.objects}) if cluster else 0)
    report.write(diagnostics, sys.stdout, args.format, files=count, quiet=args.quiet)
    return 1 if has_errors(diagnostics) else 0


# -- inputs ---------------------------------------------------------------------------------------


def _compiled(result: Any) -> list[Manifest]:
    """The compiled objects, each tied to the spec it came from."""
    from trainspec.compiler.emit import manifest_dicts
    from trainspec.dsl.models import Runtime

    # The compiler writes each job's objects to <namespace>/<name>.yaml (compiler.pipeline._lower).
    jobs = {f"{p.resolved.namespace}/{p.resolved.name}.yaml": p.resolved.loaded for p in result.plans}
    runtimes: dict[str, Any] = {}
    for loaded in result.specs:
        if isinstance(loaded.spec, Runtime):
            runtimes.setdefault(loaded.name, loaded)
            runtimes.setdefault(loaded.name + "-sharded", loaded)
    users = {p.runtime_name: p.resolved.loaded for p in reversed(result.plans)}  # first job using it
    out: list[Manifest] = []
    for output in result.outputs:
        for data in manifest_dicts(output.objects):
            meta = data.get("metadata") or {}
            kind, name = data.get("kind"), meta.get("name")
            where = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
            label = f"compiled {kind} {where} ({output.path})"
            key = f"#m{len(out)}"
            if kind in _RUNTIME_KINDS and name in runtimes:
                out.append(Manifest(key, data, spec=runtimes[name], fields=_RUNTIME_FIELDS, label=label))
            elif kind in _RUNTIME_KINDS:  # a built-in runtime: point at a job that uses it
                out.append(Manifest(key, data, spec=users.get(name), fields=_BUILTIN_FIELDS, label=label))
            else:
                fields = _JOB_FIELDS if kind == "TrainJob" else _CLAIM_FIELDS
                out.append(Manifest(key, data, spec=jobs.get(output.path), fields=fields, label=label))
    return out


def _read(files: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """Kubernetes manifests (not trainspec specs) in the input YAML files."""
    from trainspec.kueue.located import read_objects

    candidates = []
    for path in files:
        if path.suffix in (".yaml", ".yml"):
            try:
                if _OTHER_API.search(path.read_text(encoding="utf-8", errors="replace")):
                    candidates.append(path)
            except OSError:
                continue  # the compile pass already reported it
    objects, problems = read_objects(candidates)  # load problems repeat the compile pass's: deduplicated later
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


def _spec_path(manifest: Manifest, path: tuple) -> tuple:
    """The spec field to point at for a finding at ``path`` of a compiled manifest (``()``: the document)."""
    candidates: tuple[tuple, ...] = ()
    if path[:2] in (("spec", "runtimePatches"), ("spec", "podTemplateOverrides")):
        topology = any(isinstance(p, str) and ("-topology" in p or p.endswith("slice-size")) for p in path)
        candidates = ((("spec", "topology", "level"),) if topology else ()) + (
            ("spec", "checkpoint"), ("spec", "podLabels"), ("spec", "podAnnotations"))
    else:
        for prefix, options in manifest.fields:
            if path[:len(prefix)] == prefix:
                candidates = options
                break
    return next((c for c in candidates if manifest.spec.has(c)), ())


def _place(manifest: Manifest, diagnostic: Any, path: tuple) -> Any:
    """``diagnostic`` located at ``path`` of ``manifest``'s source (spec line or manifest line)."""
    from trainspec.dsl.diagnostics import format_path

    if manifest.located is not None:
        mark = manifest.located.mark(path)
        if diagnostic.message.startswith("unknown field") and path in manifest.located.doc.keys:
            mark = manifest.located.doc.keys[path]  # the offending key, as validate's TS200 does
        return replace(diagnostic, file=manifest.located.file, line=mark.line, column=mark.column)
    if manifest.spec is None:
        return replace(diagnostic, file=None, message=f"{diagnostic.message} [{manifest.label}]")
    spec_path = _spec_path(manifest, path)
    mark = manifest.spec.mark(spec_path)
    field = f", field {diagnostic.path}" if diagnostic.path else ""
    return replace(diagnostic, file=manifest.spec.file, line=mark.line, column=mark.column,
                   path=format_path(spec_path), message=f"{diagnostic.message} [{manifest.label}{field}]")


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
    where = manifest.located.doc.start if manifest.located is not None else (
        manifest.spec.mark(()) if manifest.spec is not None else None)
    file = manifest.located.file if manifest.located is not None else (manifest.spec.file if manifest.spec else None)
    return replace(related, file=file, line=where.line if where else None, column=where.column if where else None,
                   message=related.message if manifest.located is not None else f"{related.message} [{manifest.label}]")


# -- the checks -----------------------------------------------------------------------------------


def _crd_findings(manifests: list[Manifest], crd_dirs: list[str], target: Any) -> list[Any]:
    from trainspec.compiler.check import check_manifest
    from trainspec.dsl.diagnostics import Diagnostic, Severity
    from trainspec.compiler.check.cache import CachedCelEngine, CachedCrdRegistry, VerdictCache, crd_files, default_cache

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
    trainjob_crd = registry.lookup("trainer.kubeflow.org/v1alpha1", "TrainJob")
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


def _webhook_findings(manifests: list[Manifest], cluster: Any) -> list[Any]:
    from trainspec.compiler.check import check_webhooks
    from trainspec.compiler.check.runtime_rules import check_runtime

    known = [o.data for o in cluster.objects if o.kind in _RUNTIME_KINDS] if cluster else []
    pairs = [(m.key, m.data) for m in manifests]
    found = check_webhooks(pairs, known_runtimes=known, policy=False)
    for m in manifests:  # trainspec's own runtime policy applies to what it compiled, not to user files
        if m.located is None and m.kind in _RUNTIME_KINDS:
            plain = set(check_runtime(m.data, m.key, policy=False))
            found += [d for d in check_runtime(m.data, m.key, policy=True) if d not in plain]
    return _relocate(found, {m.key: m for m in manifests})


def _preflight_findings(manifests: list[Manifest], cluster: Any, target: Any) -> list[Any]:
    """Kueue's label rules for every TrainJob; with ``--cluster``, the whole pre-flight."""
    from trainspec.compiler.check._paths import render_path
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
