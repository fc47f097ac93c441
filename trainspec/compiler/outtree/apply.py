"""``compile -o DIR`` and ``compile -o DIR --check``: from rendered files to a report.

The command line only parses arguments and prints an :class:`OutputReport`; every decision
about the output directory (is it safe, what changes, what is refused, how it is written) is
made here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from trainspec.compiler.outtree import access, swap
from trainspec.compiler.outtree.marker import MARKER, Marker, read_marker
from trainspec.compiler.outtree.safety import unsafe_output
from trainspec.compiler.outtree.tree_plan import MAX_ENTRIES, TreePlan, TreeTooLarge, plan_tree
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity, has_errors

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
#: Files that only keep an empty directory in Git: a directory holding nothing else is empty.
PLACEHOLDERS = frozenset({".gitkeep", ".keep"})
#: How many of a foreign directory's entries TS417 names.
_NAMED = 5


@dataclass
class OutputReport:
    """What writing (or checking) an output directory found: exit code, diagnostics, summary lines."""

    exit_code: int = EXIT_OK
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: Plain lines for standard error (``wrote deploy: 3 added, ...``, ``deploy/a.yaml: stale``).
    messages: list[str] = field(default_factory=list)
    plan: TreePlan | None = None


@dataclass(frozen=True)
class _Where:
    """How paths of one output directory are shown: as the user named it."""

    output: str

    def file(self, rel: str) -> str:
        return str(Path(self.output) / rel)

    def source(self, sources: str | None) -> str:
        """A header's sources (relative to the output directory) as paths from the working directory."""
        if not sources:
            return "an unknown spec"
        from trainspec.dsl.load.loaded import display_name

        base = os.path.abspath(self.output)
        return ", ".join(
            s if s.startswith("<") else display_name(Path(os.path.normpath(os.path.join(base, s))))
            for s in sources.split(", ")
        )


def emit_directory(
    output: str,
    files: Mapping[str, str],
    *,
    inputs: Iterable[str] = (),
    check: bool = False,
    force: bool = False,
    allow_volume_removal: bool = False,
    rerun: str = "",
    adopt: bool = False,
) -> OutputReport:
    """Write ``files`` (relative path -> text, from ``render_tree``) as the tree at ``output``, or check it.

    ``inputs`` are the compile's input paths (``-o`` must not hold them). ``force`` discards hand
    edits of managed files; ``allow_volume_removal`` lets a PersistentVolumeClaim disappear;
    ``adopt`` writes into a directory that holds files trainspec did not write and none it did
    (refused otherwise, TS417). ``rerun`` is the command ``--check`` suggests when the tree is stale.
    """
    refused = unsafe_output(output, inputs)
    if refused is not None:
        return OutputReport(EXIT_USAGE, [refused])
    where = _Where(output)
    root = Path(os.path.realpath(output))
    if os.path.lexists(root) and not root.is_dir():
        return _cannot(where, "is not a directory")
    try:
        if check:
            return _check(root, files, where, allow_volume_removal, rerun, adopt)
        return _write(root, files, where, force, allow_volume_removal, adopt)
    except TreeTooLarge:
        return _cannot(where, f"holds more than {MAX_ENTRIES} entries: it is not an output directory")
    except swap.Busy:
        return _cannot(
            where,
            f"is being written by another trainspec compile (its parent directory stayed locked "
            f"for {swap.LOCK_WAIT_SECONDS:g} s)",
            hint="run the compiles one after the other",
        )
    except swap.Unrecoverable as exc:
        return _cannot(
            where,
            f"is missing and several earlier generations are left beside it ({exc})",
            hint="rename the one to keep to the output directory's name, then compile again",
        )
    except OSError as exc:
        # Which path failed, and what to do about it: the parent only when the parent failed.
        return OutputReport(EXIT_INVALID, [access.failure(where.output, root, exc)])


def _check(
    root: Path, files: Mapping[str, str], where: _Where, allow_volume_removal: bool, rerun: str, adopt: bool
) -> OutputReport:
    notes = [
        f"{path.name} was left by an interrupted compile; the next trainspec compile recovers it"
        for path, _ in swap.leftovers(root)
    ]
    report = OutputReport(diagnostics=[_leftover(where, note) for note in notes])
    marker, problems = read_marker(root, where.file(MARKER))
    report.diagnostics.extend(problems)
    plan = plan_tree(root, files, marker, expected_mode=None)
    report.plan = plan
    foreign = None if adopt or problems else _foreign(plan, marker, where)
    if foreign is not None:  # every file would be "missing": the diagnostic says why
        report.diagnostics.append(foreign)
        report.exit_code = EXIT_INVALID
        return report
    if not problems:  # without a usable marker every file would look like someone else's
        report.diagnostics.extend(_problems(plan, where, force=False, allow_volume_removal=allow_volume_removal))
    for label, names in (("missing", plan.added), ("stale", plan.changed), ("no longer produced", plan.removed)):
        report.messages.extend(f"{where.file(name)}: {label}" for name in names)
    if plan.stale or has_errors(report.diagnostics):
        if plan.stale:
            report.messages.append(f"{where.output} is out of date: run {rerun or 'trainspec compile'}")
        report.exit_code = EXIT_INVALID
    else:
        report.messages.append(f"{where.output} is up to date ({len(files)} files)")
    return report


def _write(
    root: Path, files: Mapping[str, str], where: _Where, force: bool, allow_volume_removal: bool, adopt: bool
) -> OutputReport:
    report = OutputReport()
    root.parent.mkdir(parents=True, exist_ok=True)
    with swap.locked(root.parent) as parent_fd:
        report.diagnostics.extend(_leftover(where, note) for note in swap.recover(root))
        if os.path.lexists(root) and os.lstat(root).st_dev != os.lstat(root.parent).st_dev:
            return _cannot(
                where,
                "is a mount point: trainspec replaces the directory as a whole by renaming it",
                hint="compile into a subdirectory of the mount point",
            )
        marker, problems = read_marker(root, where.file(MARKER))
        if problems:
            report.diagnostics.extend(problems)
            report.exit_code = EXIT_INVALID
            return report
        plan = plan_tree(root, files, marker, expected_mode=file_mode())
        report.plan = plan
        foreign = None if adopt else _foreign(plan, marker, where)
        if foreign is not None:
            report.diagnostics.append(foreign)
        report.diagnostics.extend(_problems(plan, where, force=force, allow_volume_removal=allow_volume_removal))
        if not plan.noop:  # checked before anything is written: the old generation must go after the swap
            report.diagnostics.extend(
                access.unremovable_diagnostic(where.output, rel, uid) for rel, uid in access.unremovable(root, plan.old)
            )
        if has_errors(report.diagnostics):
            report.exit_code = EXIT_INVALID
            return report
        counts = (
            f"{len(plan.added)} added, {len(plan.changed)} changed, {len(plan.removed)} removed, "
            f"{len(plan.unchanged)} unchanged"
        )
        if plan.noop:
            report.messages.append(f"{where.output} is up to date: {counts} (nothing written)")
            return report
        for warning in swap.replace_tree(root, plan, parent_fd):
            report.diagnostics.append(_leftover(where, warning))
    report.messages.append(f"wrote {where.output}: {counts}")
    report.messages.extend(_gone(plan, where))
    return report


def _gone(plan: TreePlan, where: _Where) -> list[str]:
    """A line per file removed or hand edit discarded (by path), then per claim that left the tree
    (by namespace and name): nothing leaves the tree unsaid."""
    edited = dict(plan.hand_edited)
    lines = [
        f"removed {where.file(rel)}{' (its hand edit discarded: --force)' if rel in edited else ''}"
        if rel in plan.removed
        else f"overwrote the hand edit of {where.file(rel)} (--force)"
        for rel in sorted({*plan.removed, *edited})
    ]
    claims = sorted(
        [(lost.claim.key, True) for lost in plan.kept_claims] + [(lost.claim.key, False) for lost in plan.lost_claims]
    )
    lines.extend(
        f"PersistentVolumeClaim {namespace}/{name} left the tree and stays on the cluster (Prune=false, prune: "
        "disabled) with its checkpoints: delete it by hand once they are no longer needed"
        if kept
        else f"PersistentVolumeClaim {namespace}/{name} left the tree (--allow-volume-removal): a GitOps sync that "
        "prunes deletes it, and the checkpoints on it"
        for (namespace, name), kept in dict.fromkeys(claims)
    )
    return lines


def _foreign(plan: TreePlan, marker: Marker | None, where: _Where) -> Diagnostic | None:
    """TS417 when the directory holds entries and none trainspec wrote (a seal, or an older marker)."""
    if marker is not None or plan.unchanged or plan.changed or plan.removed or MARKER in plan.old:
        return None
    top = sorted(rel for rel, entry in plan.old.items() if "/" not in rel and rel not in PLACEHOLDERS)
    if not top:
        return None
    names = [where.file(rel) + ("/" if plan.old[rel].kind == "dir" else "") for rel in top[:_NAMED]]
    more = f" and {len(top) - _NAMED} more" if len(top) > _NAMED else ""
    count = f"{len(top)} entr{'ies' if len(top) != 1 else 'y'}"
    return Diagnostic(
        code=codes.FOREIGN_OUTPUT_DIR,
        file=where.output,
        message=f"{where.output} holds {count} trainspec did not write ({', '.join(names)}{more}) and none "
        "that it did: refusing to write its files beside them",
        hint="compile into a new or empty directory, or pass --adopt once to write into this one (what is there "
        "stays as it is: trainspec never overwrites it and never prunes it)",
    )


def _problems(plan: TreePlan, where: _Where, *, force: bool, allow_volume_removal: bool) -> list[Diagnostic]:
    """The plan's refusals: files in the way (TS407), hand edits (TS411), vanishing claims (TS410)."""
    found = [
        Diagnostic(
            code=codes.OUTPUT_UNWRITABLE,
            file=where.file(rel),
            line=1,
            column=1,
            message=f"{why}; refusing to overwrite it",
            hint="move it away, or compile into another directory",
        )
        for rel, why in plan.conflicts
    ]
    if not force:
        found.extend(
            Diagnostic(
                code=codes.HAND_EDITED,
                file=where.file(rel),
                line=1,
                column=1,
                message=(
                    "edited by hand since trainspec wrote it (its content no longer matches its trainspec-sha256 seal): "
                    f"compiling would {'overwrite' if produced else 'delete'} the edit"
                ),
                hint="move the change into the spec and compile again, or pass --force to discard the edit",
            )
            for rel, produced in plan.hand_edited
        )
    if not allow_volume_removal:
        for lost in plan.lost_claims:
            claim = f"PersistentVolumeClaim {lost.claim.namespace}/{lost.claim.name}"
            source = where.source(lost.sources)
            what = (
                f"the new {lost.file} no longer has {claim} (from {source})"
                if lost.still_produced
                else f"removing {lost.file} would delete {claim}, produced from {source}"
            )
            found.append(
                Diagnostic(
                    code=codes.PVC_REMOVAL,
                    file=where.file(lost.file),
                    line=lost.claim.line,
                    column=lost.claim.column,
                    path="metadata.name",
                    message=f"{what}: a GitOps sync that prunes deletes the claim and the checkpoints on it",
                    hint="keep the job and its checkpoint volume in the specs, or pass --allow-volume-removal once "
                    "the checkpoints are saved elsewhere",
                )
            )
    return found


def _leftover(where: _Where, note: str) -> Diagnostic:
    return Diagnostic(
        code=codes.INTERRUPTED_COMPILE,
        severity=Severity.WARNING,
        file=where.output,
        message=note,
        hint="it is a copy of an earlier tree, beside the output directory: the tree does not depend on it"
        if swap.STUCK in note
        else "trainspec cleans these up itself; nothing else was touched",
    )


def _cannot(where: _Where, why: str, *, hint: str | None = None) -> OutputReport:
    return OutputReport(
        EXIT_INVALID,
        [Diagnostic(code=codes.OUTPUT_UNWRITABLE, file=where.output, message=f"{where.output} {why}", hint=hint)],
    )


def file_mode() -> int | None:
    """``0666 & ~umask``: the mode new files get (None when the umask cannot be read safely).

    Read from /proc (Linux 4.7+): ``os.umask`` can only be read by setting it, which races with
    other threads creating files.
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None
