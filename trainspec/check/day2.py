"""Day 2: a compile against the tree it replaces (the previous output directory, or a git ref).

Every object that exists on both sides is an *update* for the cluster: the update rules decide
(CRD transition rules, PersistentVolumeClaim rules, the controllers' update webhooks;
:mod:`trainspec.check.updates`) and a refusal is a diagnostic at the spec field that changed. A
job whose run object was renamed (a new run, :mod:`trainspec.compiler.runs`) is not an update:
the new run is created, the old one pruned, and a note says so and where it resumes from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import yaml

from trainspec.compiler.outtree.marker import LARGEST_FILE, MARKER, ownership
from trainspec.compiler.runs import RUN_DEFINING_LABELS, RUN_KINDS
from trainspec.dsl import codes
from trainspec.dsl.record import replace
from trainspec.dsl.spec.models import RunPolicy
from trainspec.k8s.wellknown import JOB_LABEL, PRIORITY_CLASS_LABEL, RUN_LABEL

if TYPE_CHECKING:
    from trainspec.check.manifests import Manifest
    from trainspec.compiler.pipeline import CompileResult
    from trainspec.dsl.diagnostics import Diagnostic

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: Leaf changes a new-run note lists before it says "and N more".
_SHOWN = 3


def identity(data: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(API group, kind, namespace, name): what the API server knows an object by
    (:func:`trainspec.check.updates.object_key`; an object without a name gets empty parts)."""
    from trainspec.check.updates import object_key

    return object_key(data) or ("", str(data.get("kind", "")), "", "")


def parse_objects(texts: Iterable[bytes | str]) -> list[dict[str, Any]]:
    """The objects of YAML streams (files of a previous tree); what does not parse is skipped.

    The previous tree is what the cluster has: a file that does not parse was never applied as
    such (the GitOps sync would have failed on it), so it contributes no object to compare.
    """
    out: list[dict[str, Any]] = []
    for text in texts:
        try:
            docs = list(yaml.load_all(text, Loader=_Loader))  # a safe loader: CSafeLoader or SafeLoader
        except yaml.YAMLError:
            continue
        out.extend(d for d in docs if isinstance(d, dict) and d.get("kind"))
    return out


#: A previous tree is a GitOps directory: a file this large is not one of its manifests.
MAX_PREVIOUS_FILE = LARGEST_FILE


def read_previous(location: str, cwd: str | None = None) -> list[dict[str, Any]]:
    """The objects of a previous tree: a directory or file of manifests, or ``REF:PATH`` of git.

    A directory is walked for ``*.yaml``/``*.yml`` files (symbolic links are not followed).
    Raises ``ValueError`` naming what cannot be read.
    """
    import os
    from pathlib import Path

    base = Path(cwd or os.getcwd())
    path = base / location
    if not path.exists() and ":" in location:
        return _read_git(location, base)
    if path.is_file():
        return parse_objects([_read_small(path)])
    if not path.is_dir():
        raise ValueError(f"{location}: no such file or directory (nor a git REF:PATH)")
    from trainspec.dsl.load.discovery import YAML_SUFFIXES, discover

    # The one walker, as `check --cluster DIR` walks; links to files are not read (see discover).
    found, problems = discover([str(path)], YAML_SUFFIXES, file_links=False)
    unreadable = [p for p in problems if p.is_error]
    if unreadable:  # a part of the tree that cannot be read would hide its objects' updates
        raise ValueError(f"{unreadable[0].file}: {unreadable[0].message}")
    return parse_objects([_read_small(full) for full in found])


def _read_small(path: Any) -> bytes:
    from trainspec.dsl.load.safe_read import FileTooLarge, read_file

    try:
        return read_file(path, MAX_PREVIOUS_FILE, follow_symlinks=False)
    except FileTooLarge:
        raise ValueError(f"{path}: larger than {MAX_PREVIOUS_FILE} bytes: not a manifest file") from None


def _read_git(location: str, base: Any) -> list[dict[str, Any]]:
    from trainspec.compiler.outtree.gitref import GitError, export_ref

    ref, _, rel = location.partition(":")
    try:
        with export_ref(ref, [rel or "."], base) as exported:
            found = exported.paths[0]
            if found is None:
                return []  # the path did not exist at the ref: everything is a create
            return read_previous(str(found))
    except GitError as exc:
        raise ValueError(str(exc)) from None


def previous_tree(output: str, files: Mapping[str, str]) -> list[dict[str, Any]]:
    """The objects of the output directory's current files that the new tree writes differently.

    Only those can be updates: a file the new tree no longer writes is pruned, a new one created,
    and a file that stays byte for byte the same holds the same objects (most of a tree, most of
    the time: it is not parsed). Symbolic links are never followed; what cannot be read or parsed
    holds no object.
    """
    return parse_objects(list(changed_files(output, files).values()))


def changed_files(output: str, files: Mapping[str, str]) -> dict[str, bytes]:
    """Relative path -> current bytes of the output directory's files that ``files`` writes differently.

    A file edited by hand since trainspec sealed it is left out: it is not what trainspec last
    wrote (the tree plan says TS411 of it, and --force discards the edit). An older trainspec's
    tree has no seals: its central marker says what it wrote, and every file counts.
    """
    import os
    from pathlib import Path

    from trainspec.dsl.load.safe_read import read_file

    root = Path(os.path.realpath(output))
    sealed = not os.path.lexists(root / MARKER)
    changed: dict[str, bytes] = {}
    for rel, text in files.items():
        try:
            current = read_file(root / rel, max(MAX_PREVIOUS_FILE, len(text)), follow_symlinks=False)
        except OSError:  # FileTooLarge among them: not a file trainspec wrote (the tree plan says so)
            continue  # absent (a new file), a symlink, or unreadable: the tree's own checks say so
        if current != text.encode("utf-8") and not (sealed and ownership(current) == "edited"):
            changed[rel] = current
    return changed


def update_diagnostics(
    result: CompileResult, previous: Iterable[Mapping[str, Any]], manifests: list[Manifest] | None = None
) -> list[Diagnostic]:
    """The updates of ``result``'s objects over ``previous`` that the cluster would refuse, located.

    ``manifests``: ``compiled_manifests(result)`` when the caller has them already.
    """
    from trainspec.check.manifests import compiled_manifests

    found = manifests if manifests is not None else compiled_manifests(result)
    return manifest_updates(found, previous, _replaced_jobs(result))


def manifest_updates(
    manifests: Iterable[Manifest],
    previous: Iterable[Mapping[str, Any]],
    replaced: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset(),
) -> list[Diagnostic]:
    """The updates of ``manifests`` (compiled or read from files) over ``previous`` that the
    cluster would refuse, each at the spec field or manifest line that made it. ``replaced`` are
    the ``(namespace, name)`` of run objects the GitOps controller recreates (``runs: replace``)."""
    from trainspec.check.locate import parse_path, place
    from trainspec.check.manifests import RUNTIME_KINDS
    from trainspec.check.updates import update_problems

    before = {identity(obj): obj for obj in previous}
    found: list[Diagnostic] = []
    for manifest in manifests:
        key = identity(manifest.data)
        old = before.get(key)
        if old is None:
            continue  # a create (a new run among them), never an update
        if old == manifest.data:
            continue  # the same object: the apply changes nothing (most of a tree, most of the time)
        if manifest.kind in RUN_KINDS and key[2:] in replaced:
            continue  # runs: replace: the GitOps controller deletes and recreates it
        for problem in update_problems(old, manifest.data):
            if problem.code == codes.PVC_CHANGE_REFUSED:
                problem = replace(problem, hint=_claim_way_out(old))
            elif (
                problem.code == codes.UPDATE_TRANSITION_RULE and manifest.kind in RUNTIME_KINDS
            ):  # jobs reference them by name
                problem = replace(problem, hint=_runtime_way_out(old))
            found.append(place(manifest, problem, parse_path(problem.path)))
    return found


def _runtime_way_out(old: Mapping[str, Any]) -> str:
    """What a spec can do when a runtime's field cannot change: a runtime under another name."""
    from trainspec.compiler.plan import SHARDED_SUFFIX

    name = str((old.get("metadata") or {}).get("name") or "").removesuffix(SHARDED_SUFFIX)
    return (
        f"runtime {name} keeps this field as it was created (running jobs reference it by name): revert the "
        f"change, or define the changed runtime under a new name (e.g. {name}-v2) and move the jobs to it "
        "(each moved job gets a new run)"
    )


def _claim_way_out(old: Mapping[str, Any]) -> str:
    """What a spec can do when its checkpoint claim cannot change: in the spec's own words."""
    name = str((old.get("metadata") or {}).get("name") or "")
    spec = old.get("spec") or {}
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    keep = f"checkpoint.size: {size}" if size else "the claim's settings"
    return (
        f"keep the claim as it is ({keep}), or mount it as it is with checkpoint.claimName: {name} (it stays on "
        "the cluster with its checkpoints); a volume with other settings needs a new claim name: give the job "
        "a new name, or create the claim yourself and point checkpoint.claimName at it"
    )


def _replaced_jobs(result: CompileResult) -> set[tuple[str, str]]:
    return {
        (plan.resolved.namespace, plan.resolved.name)
        for plan in result.plans
        if plan.resolved.job.spec.runs is RunPolicy.REPLACE
    }


def run_notes(
    result: CompileResult, previous: Iterable[Mapping[str, Any]], manifests: list[Manifest] | None = None
) -> list[str]:
    """One line per job that gets a new run: ``namespace/job: new run ... replaces ...; resumes ...``.

    Escaped for a terminal: the changed values shown are the spec's own (an argument may hold a
    newline or a bidi override). Backslashes stay single: values of a list are shown as JSON,
    which has its own.
    """
    from trainspec.dsl.diagnostics import escape_text

    notes = new_runs(result, previous, manifests=manifests)
    return [escape_text(f"{key}: {message}", backslashes=False) for key, message in notes]


def new_runs(
    result: CompileResult,
    previous: Iterable[Mapping[str, Any]],
    *,
    details: bool = True,
    manifests: list[Manifest] | None = None,
) -> list[tuple[str, str]]:
    """``(namespace/job, message)`` for every job whose run object is a new one: which run replaces
    which, what changed (with ``details``; ``diff`` lists the spec's changes itself), and where it
    resumes from."""
    from trainspec.check.manifests import compiled_manifests

    old_runs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for obj in previous:
        meta = obj.get("metadata") or {}
        job = (meta.get("labels") or {}).get(JOB_LABEL)
        if obj.get("kind") in RUN_KINDS and isinstance(job, str):
            old_runs[(str(meta.get("namespace") or ""), job)] = obj
    checkpoints = {(plan.resolved.namespace, plan.resolved.name): plan.checkpoint for plan in result.plans}
    notes: list[tuple[str, str]] = []
    for manifest in manifests if manifests is not None else compiled_manifests(result):
        if manifest.kind not in RUN_KINDS:
            continue
        meta = manifest.data.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        job = str((meta.get("labels") or {}).get(JOB_LABEL) or name)
        old = old_runs.get((namespace, job))
        old_name = str((old.get("metadata") or {}).get("name") or "") if old is not None else ""
        if old is None or old_name == name:
            continue
        what = f": {changed_fields(manifest, old)}" if details else ""
        resumes = _resumes(checkpoints.get((namespace, job)))
        notes.append((f"{namespace}/{job}", f"new run {name} replaces {old_name}{what}; {resumes}"))
    return notes


def _resumes(checkpoint: Any) -> str:
    if checkpoint is None:
        return "no checkpoint: it starts from the beginning"
    if checkpoint.claim_name:
        return f"resumes from claim {checkpoint.claim_name}"
    return f"resumes from {checkpoint.path}"


def changed_fields(manifest: Manifest, old: Mapping[str, Any]) -> str:
    """What differs between a new run object and the old one, named by spec field where known."""
    from trainspec.dsl.diagnostics import format_path

    # The spec, and the labels Kueue keeps on a running job (queue, maximum run time): a run's parts.
    new_leaves = _leaves({"spec": manifest.data.get("spec"), "metadata": {"labels": _defining(manifest.data)}})
    old_leaves = _leaves({"spec": old.get("spec"), "metadata": {"labels": _defining(old)}})
    # The run id itself (TRAINSPEC_RUN_ID, the pods' run label) differs by definition: not a change.
    old_id = ((old.get("metadata") or {}).get("labels") or {}).get(RUN_LABEL)
    new_id = ((manifest.data.get("metadata") or {}).get("labels") or {}).get(RUN_LABEL)
    if old_id and new_id:
        old_leaves = {path: new_id if value == old_id else value for path, value in old_leaves.items()}
    parts: list[str] = []
    seen: set[str] = set()
    for path in sorted(set(new_leaves) | set(old_leaves), key=lambda p: tuple(map(str, p))):
        before, after = old_leaves.get(path), new_leaves.get(path)
        if before == after:
            continue
        ref = manifest.sources.lookup(path) if manifest.sources is not None else None
        label = format_path(ref.path) if ref is not None and ref.path else format_path(path)
        label = label.removeprefix("spec.")
        if label in seen:
            continue
        seen.add(label)
        parts.append(f"{label} {_show(before)} -> {_show(after)}")
    new_labels = (manifest.data.get("metadata") or {}).get("labels") or {}
    old_labels = (old.get("metadata") or {}).get("labels") or {}
    if (PRIORITY_CLASS_LABEL in new_labels) != (PRIORITY_CLASS_LABEL in old_labels):
        parts.append("priority " + ("added" if PRIORITY_CLASS_LABEL in new_labels else "removed"))
    if not parts:  # the object is the same but for its name: what was digested besides it changed
        return "spec.rerun was raised, or what trainspec emits for it changed (a runtime or trainspec version)"
    more = f"; and {len(parts) - _SHOWN} more" if len(parts) > _SHOWN else ""
    return "; ".join(parts[:_SHOWN]) + more


def _defining(obj: Mapping[str, Any]) -> dict[str, Any]:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return {key: labels[key] for key in RUN_DEFINING_LABELS if key in labels}


def _leaves(data: Any, prefix: tuple[str | int, ...] = ()) -> dict[tuple[str | int, ...], Any]:
    """Mappings flattened to their leaves; lists of mappings by index, other lists whole."""
    if isinstance(data, dict):
        out: dict[tuple[str | int, ...], Any] = {}
        for key, value in data.items():
            out.update(_leaves(value, (*prefix, key)))
        return out
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        out = {}
        for index, item in enumerate(data):
            out.update(_leaves(item, (*prefix, index)))
        return out
    return {prefix: data}


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), sort_keys=True)
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = [
    "changed_fields",
    "identity",
    "new_runs",
    "parse_objects",
    "previous_tree",
    "run_notes",
    "update_diagnostics",
]
