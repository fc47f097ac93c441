"""The *rules* pass: the plan rules, the project's policy and each target dialect's own rules.

``validate`` stops here (:attr:`~trainspec.compiler.passes.options.Stop.VALIDATE`): every check
``compile`` would refuse on has run.
"""

from __future__ import annotations

from trainspec.compiler.passes.options import Options
from trainspec.compiler.passes.products import Checked, Planned
from trainspec.compiler.resolve import RuntimeEntry
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.load.loaded import LoadedSpec


def check(planned: Planned, options: Options) -> Checked:
    """Every rule's findings, and the built-in runtimes the jobs use (each emitted once)."""
    from trainspec.compiler.policy import check_policy
    from trainspec.compiler.rules import check_plan

    found: list[Diagnostic] = []
    policy = planned.projected.project.spec.policy
    dialects = planned.dialects
    for loaded in planned.projected.runtimes:
        dialect = dialects.dialect_of(loaded)
        # A cluster's runtime is not emitted, nor is one whose engine folds it into each job:
        # its jobs carry the target's findings.
        if not loaded.spec.spec.external and dialect.emits_runtimes:
            found += dialect.runtime_rules(loaded)
    builtins: dict[str, tuple[RuntimeEntry, LoadedSpec]] = {}
    for job in planned.plans:
        dialect = dialects.dialect_of(job.resolved.runtime.loaded)
        found += check_plan(job, job.engine)
        found += check_policy(job, policy)
        found += dialect.job_rules(job)
        entry = job.resolved.runtime
        if entry.builtin and not entry.external and dialect.emits_runtimes:
            builtins.setdefault(job.runtime_name, (entry, job.resolved.loaded))
    used = tuple((name, entry, first) for name, (entry, first) in sorted(builtins.items()))
    return Checked(planned=planned, builtins=used, diagnostics=tuple(found))
