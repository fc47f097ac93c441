"""A check of a repository of any size in flat memory: the manifests checked a batch at a time.

The compiler streams the job files of a repository (:mod:`trainspec.compiler.streaming`); this
sink checks the manifests of each batch as it comes (the jobs it compiled and the Kubernetes
manifests among its files) and keeps only the findings. What a manifest's check reads besides
the manifest itself are the runtimes its TrainJobs name: the runtimes of the files read whole
(compiled, or manifests) come along with every batch, under keys of their own.

When the specs do not compile, a whole check has no compiled manifest at all while the batches
before the error had theirs checked: :func:`run_streamed_check` then answers None and the
caller checks as a whole run does (the report is always the whole run's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainspec.check.manifests import RUNTIME_KINDS, Manifest, compiled_manifests, foreign_manifests
from trainspec.dsl.record import replace

if TYPE_CHECKING:
    from trainspec.check.passes import CrdCheck
    from trainspec.check.schema.crd_source import CrdSource
    from trainspec.compiler.passes.options import Options
    from trainspec.compiler.passes.products import Output, Product
    from trainspec.compiler.pipeline import CompileResult
    from trainspec.dsl.diagnostics import Diagnostic


class CheckSink:
    """Checks each batch's manifests against the CRDs, the webhook rules and Kueue's pre-flight."""

    def __init__(self, crds: Any, cluster: Any) -> None:
        self._crds = crds
        self._cluster = cluster
        self.reset()

    def reset(self) -> None:
        """Forget every finding: the run starts over as a whole one."""
        self.found: list[Diagnostic] = []
        self.source: CrdSource | None = None
        self.target: Any = None
        self._crd: CrdCheck | None = None
        self._runtimes: list[Manifest] | None = None  # the runtimes of the files read whole

    def add(self, output: Output, gitops: str | None) -> None:
        """Outputs are read from each batch's products instead."""

    def products(self, reached: list[Product]) -> bool | None:
        """Check the manifests of one run of the passes; False for a batch that holds a runtime
        manifest (written in a way the files' first reading did not see: a TrainJob of another
        batch may name it)."""
        from trainspec.check.passes import CrdCheck, preflight_findings, webhook_findings
        from trainspec.check.schema.crd_source import resolve_crds
        from trainspec.compiler.pipeline import result_of

        batch = result_of(reached, [d for product in reached for d in product.diagnostics], ())
        if self._runtimes is None:  # the first run: it names the target and holds the runtimes
            from trainspec.compiler.targets import Target

            self.target = batch.target if batch.target is not None else Target()
            self.source = resolve_crds(self._crds, self.target)
            if self.source.files or self.source.other:
                self._crd = CrdCheck(self.source, self.target)
        foreign = foreign_manifests(batch)
        if self._runtimes is not None and any(m.kind in RUNTIME_KINDS for m in foreign):
            return False
        manifests = compiled_manifests(batch) + foreign
        context = self._runtimes or []
        if self._runtimes is None:
            runtimes = [m for m in manifests if m.kind in RUNTIME_KINDS]
            self._runtimes = [replace(m, key=f"#w{i}") for i, m in enumerate(runtimes)]
        if self._crd is not None:
            self.found += self._crd.check(manifests)
        gates = self.target.jobset_gates if batch.target is not None else ()
        self.found += webhook_findings([*manifests, *context], self._cluster, batch.plans, jobset_gates=gates)
        self.found += preflight_findings([*manifests, *context], self._cluster, self.target)
        return True

    def check_crds(self, manifests: list[Manifest]) -> list[Diagnostic]:
        """The CRD findings of more manifests (the cluster's objects), before :meth:`finish`."""
        return self._crd.check(manifests) if self._crd is not None else []

    def finish(self) -> list[Diagnostic]:
        """The findings, with what concerns every batch (the CRDs' own problems) said once."""
        return [*self.found, *(self._crd.finish() if self._crd is not None else ())]


def run_streamed_check(
    paths: list[str], options: Options, crds: Any, cluster: Any
) -> tuple[CompileResult, CheckSink] | None:
    """The compile and the sink that checked its batches; None when a whole check must answer."""
    from trainspec.compiler.streaming import run_streamed

    sink = CheckSink(crds, cluster)
    result = run_streamed(paths, options, sink)
    if result.streamed and not result.ok:
        return None
    return result, sink
