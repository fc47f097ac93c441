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


#: Bytes of a job's digest.
_DIGEST = 16


class DiffSink:
    """Per job: its digest, the runtime it uses and its spec file, from each batch's plans and outputs.

    Packed in one ``bytes`` per job (digest, runtime number, file name): a few dozen bytes where a
    tuple of three objects took two hundred, for each of 30,000 jobs on each side.
    """

    def __init__(self) -> None:
        self.jobs: dict[str, bytes] = {}
        self._runtimes: dict[str, int] = {}  # runtime key -> its number in the packed entries
        self._names: list[str] = []

    def reset(self) -> None:
        """Forget every job: the side is compiled again as a whole."""
        self.jobs.clear()

    def digest(self, key: str) -> bytes:
        """What job ``key`` means and emits, as a digest."""
        return self.jobs[key][:_DIGEST]

    def runtime(self, key: str) -> str:
        """The key of the runtime job ``key`` uses."""
        return self._names[int.from_bytes(self.jobs[key][_DIGEST : _DIGEST + 4], "big")]

    def file(self, key: str) -> str:
        """The spec file job ``key`` is written in."""
        return self.jobs[key][_DIGEST + 4 :].decode("utf-8", "surrogateescape")

    def _pack(self, digest: bytes, runtime: str, file: str) -> bytes:
        number = self._runtimes.setdefault(runtime, len(self._runtimes))
        if number == len(self._names):
            self._names.append(runtime)
        return digest + number.to_bytes(4, "big") + file.encode("utf-8", "surrogateescape")

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
            digest = hashlib.blake2b(digest_size=_DIGEST)
            digest.update(
                repr((job.runtime, job.runtime_builtin, job.gpu_resource, sorted(job.facts.items()))).encode()
            )
            digest.update(texts.get(f"{job.key}.yaml", "").encode())
            self.jobs[job.key] = self._pack(digest.digest(), job.runtime, plan.resolved.loaded.file)
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
        if key not in old_jobs.jobs or key not in new_jobs.jobs:
            return True
        return (
            old_jobs.digest(key) != new_jobs.digest(key)
            or old_jobs.runtime(key) in runtimes
            or new_jobs.runtime(key) in runtimes
        )

    keys = {key for key in {*old_jobs.jobs, *new_jobs.jobs} if differs(key)}
    return _files(old, old_jobs, keys), _files(new, new_jobs, keys)


def _files(result: CompileResult, jobs: DiffSink, keys: set[str]) -> list[str]:
    whole = {s.file for s in result.specs if not s.file.startswith("<")}
    return sorted(whole | {jobs.file(key) for key in keys if key in jobs.jobs})
