"""``diff`` of two repositories of any size: each side streamed, then only what changed compared.

Each side is compiled a batch at a time (:mod:`trainspec.compiler.streaming`); this sink keeps,
per job, a digest of what it means (its snapshot: fields, effective values, derived figures)
and of what it emits, the runtime it uses and its file. The jobs whose digests differ, that
exist on one side only, or that use a runtime that changed are then compiled again as a whole
on each side, with the files read whole (runtimes, the project): :func:`diff_results` compares
exactly those, as it would have compared them in a whole run (every other job is equal on both
sides, so it makes no change).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainspec.compiler.passes.products import Output, Product
    from trainspec.compiler.pipeline import CompileResult


class DiffSink:
    """Per job: (digest, runtime key, spec file), from each batch's plans and outputs."""

    def __init__(self) -> None:
        self.jobs: dict[str, tuple[bytes, str, str]] = {}

    def reset(self) -> None:
        """Forget every job: the side is compiled again as a whole."""
        self.jobs.clear()

    def add(self, output: Output, gitops: str | None) -> None:
        """Outputs are read with their plans, from each batch's products."""

    def products(self, reached: list[Product]) -> bool | None:
        """Note the digest of every job a run of the passes planned and lowered."""
        from trainspec.compiler.emit import dump_objects, manifest_dicts
        from trainspec.compiler.passes.products import Lowered, Planned
        from trainspec.diff.snapshot import job_snapshot

        planned = next((p for p in reversed(reached) if isinstance(p, Planned)), None)
        lowered = next((p for p in reversed(reached) if isinstance(p, Lowered)), None)
        if planned is None:
            return None
        texts = {o.path: dump_objects(manifest_dicts(o.objects)) for o in lowered.outputs} if lowered else {}
        for plan in planned.plans:
            job = job_snapshot(plan)
            digest = hashlib.blake2b(digest_size=16)
            digest.update(
                repr((job.runtime, job.runtime_builtin, job.gpu_resource, sorted(job.facts.items()))).encode()
            )
            digest.update(texts.get(f"{job.key}.yaml", "").encode())
            self.jobs[job.key] = (digest.digest(), job.runtime, plan.resolved.loaded.file)
        return None


def changed_files(
    old: CompileResult, old_jobs: DiffSink, new: CompileResult, new_jobs: DiffSink
) -> tuple[list[str], list[str]]:
    """The files each side must compile again as a whole for :func:`diff_results` to see every change."""
    from trainspec.diff.snapshot import snapshot

    before, after = snapshot(old), snapshot(new)
    runtimes = {
        key
        for key in set(before.runtimes) | set(after.runtimes)
        if key not in before.runtimes
        or key not in after.runtimes
        or before.runtimes[key].fields != after.runtimes[key].fields
    }

    def differs(key: str) -> bool:
        a, b = old_jobs.jobs.get(key), new_jobs.jobs.get(key)
        return a is None or b is None or a[0] != b[0] or a[1] in runtimes or b[1] in runtimes

    keys = {key for key in {*old_jobs.jobs, *new_jobs.jobs} if differs(key)}
    return _files(old, old_jobs, keys), _files(new, new_jobs, keys)


def _files(result: CompileResult, jobs: DiffSink, keys: set[str]) -> list[str]:
    whole = {s.file for s in result.specs if not s.file.startswith("<")}
    return sorted(whole | {jobs.jobs[key][2] for key in keys if key in jobs.jobs})
