"""The exceptions :class:`trainspec.Client` raises: the cluster's diagnostics, a wait that timed out,
a job that ended otherwise than waited for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from trainspec.dsl.errors import TrainspecError

if TYPE_CHECKING:
    from trainspec.client.results import JobState, SubmitResult
    from trainspec.dsl.diagnostics import Diagnostic

__all__ = ["ClusterError", "JobEnded", "WaitTimeout"]


class ClusterError(TrainspecError):
    """A call of :class:`~trainspec.Client` failed; ``diagnostics`` say why, exactly as the CLI prints them.

    ``codes`` lists their codes (``TS716``: no such TrainJob, ``TS717``: RBAC, ...; the table is
    in docs/cluster.md). ``submit`` raises it for the compile's errors too.
    """

    def __init__(
        self, diagnostics: Sequence[Diagnostic], *, usage: bool = False, submitted: SubmitResult | None = None
    ) -> None:
        self.diagnostics = list(diagnostics)
        #: The CLI exits 2 for these (the kubernetes client is missing), 1 otherwise.
        self.usage = usage
        #: What ``submit`` did apply when an object after the TrainJob was refused (the job runs).
        self.submitted = submitted
        lines = []
        for d in self.diagnostics:
            if not d.is_error:
                continue
            where = f"{d.file}:{d.line or 1}:{d.column or 1}: " if d.file else ""
            lines.append(f"{where}{d.code}: {d.message}" + (f"\n  hint: {d.hint}" if d.hint else ""))
        super().__init__("\n".join(lines) or "the cluster call failed")

    @property
    def codes(self) -> list[str]:
        """The diagnostics' codes, in order."""
        return [d.code for d in self.diagnostics]


class WaitTimeout(TimeoutError, TrainspecError):
    """``wait`` (or ``cancel``) ran out of time; ``state`` is the last state read (None: the job was gone)."""

    def __init__(self, message: str, state: JobState | None) -> None:
        super().__init__(message)
        self.state = state


class JobEnded(RuntimeError, TrainspecError):
    """``wait`` saw the job finish in a phase other than those it waited for; ``state`` is its final state."""

    def __init__(self, message: str, state: JobState) -> None:
        super().__init__(message)
        self.state = state
