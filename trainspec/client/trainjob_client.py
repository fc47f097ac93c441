"""``trainspec.Client``: submit, read, follow, wait for and cancel TrainJobs from Python.

The same calls as the cluster commands (``trainspec.kube``): what ``Client.get`` returns is what
``trainspec status`` prints, ``Client.logs`` yields what ``trainspec logs`` prints, and every
failure raises :class:`~trainspec.client.ClusterError` with the diagnostics the command prints.
"""

from __future__ import annotations

import builtins
import functools
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from trainspec.client import cluster, logs as logstream, submitting
from trainspec.client.errors import ClusterError, JobEnded, WaitTimeout
from trainspec.client.results import PHASES, Cancelled, Event, JobState, LogLine, RuntimeInfo, SubmitResult
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.kube import reading, resources as R
from trainspec.kube.reading import name_of
from trainspec.kube.session import CommandError, api_diagnostic, where

if TYPE_CHECKING:
    from trainspec.compiler.pipeline import CompileResult
    from trainspec.dsl.spec.models import Runtime, TrainingJob

    SpecInput = str | os.PathLike[str] | Runtime | TrainingJob

T = TypeVar("T")


def _guarded(fn: Callable[[], T]) -> T:
    """``fn()``, its :class:`CommandError` raised as :class:`ClusterError`."""
    try:
        return fn()
    except CommandError as exc:
        raise ClusterError(exc.diagnostics, usage=exc.usage) from None


class Client:
    """A connection to one cluster and namespace.

    ``context``: a kubeconfig context (default: the current one); ``kubeconfig``: the file
    (default: ``$KUBECONFIG``, else ``~/.kube/config``); in a pod, the pod's service account is
    used. ``namespace``: default ``$TRAINSPEC_NAMESPACE``, else the pod's own, else the context's,
    else ``default``. ``TRAINSPEC_KUBE_API=URL`` points it at a ``kubectl proxy`` (or a test
    stand-in). Raises :class:`ClusterError` (TS710: the ``kube`` extra is not installed; TS711:
    no usable configuration).

    A job name names the TrainJob of that name, else the newest run of the job
    (``<job>-<run id>``), as on the command line.
    """

    def __init__(
        self,
        context: str | None = None,
        kubeconfig: str | os.PathLike[str] | None = None,
        namespace: str | None = None,
    ) -> None:
        self._kube = _guarded(lambda: _connect(context, kubeconfig))
        self._namespace_given = namespace
        #: The namespace every call uses.
        self.namespace: str = namespace or self._kube.default_namespace(None)
        #: The context's name (the API's URL under ``TRAINSPEC_KUBE_API``).
        self.context: str = str(getattr(self._kube, "context", "") or "")

    def __repr__(self) -> str:
        return f"Client(context={self.context!r}, namespace={self.namespace!r})"

    # -- submitting ---------------------------------------------------------------------------------

    def submit(
        self,
        specs: SpecInput | CompileResult | Iterable[SpecInput],
        *,
        job: str | None = None,
        with_runtimes: bool = False,
        dry_run: bool = False,
        force_conflicts: bool = False,
        values: Mapping[str, Any] | None = None,
        project: Any = submitting.DISCOVER,
    ) -> SubmitResult:
        """Compile the specs and server-side apply each Trainer job's objects (``trainspec submit``).

        ``specs``: spec files or directories (YAML or Python), spec objects (``TrainingJob``,
        ``Runtime``), a list of them, or a ``CompileResult`` of :func:`trainspec.compile` (applied
        as compiled). Namespaces as ``trainspec submit [-n NS]`` places them: a job goes to the
        namespace its spec names; one whose spec names none goes to the client's ``namespace``
        when it was given (as ``-n``; a spec naming another is refused, TS732), else to the
        project's ``defaults.namespace``, else to ``client.namespace``.

        ``job`` submits only that job; ``with_runtimes`` also applies the runtimes trainspec
        compiles (never otherwise); ``dry_run`` is a server dry run; ``force_conflicts`` takes
        over fields another field manager owns. ``values`` and ``project`` are those of
        :func:`trainspec.compile` (by default the project file is found from the working
        directory upwards, as the command does; None: no project file).

        Returns what was applied, in order (iterating yields :class:`Applied`), with the warnings.
        Raises :class:`ClusterError` with the compile's errors, or the cluster's refusal (TS712: the
        runtime is missing; nothing is applied then). When objects applied after the TrainJob
        (its PodMonitor, say) are refused, the job runs: the error's ``submitted`` says what was done.
        """
        return submitting.submit(
            self._kube,
            specs,
            namespace=self._namespace_given,
            fallback=self.namespace,
            job=job,
            with_runtimes=with_runtimes,
            dry_run=dry_run,
            force_conflicts=force_conflicts,
            values=values,
            project=project,
        )

    # -- reading ------------------------------------------------------------------------------------

    def get(self, name: str) -> JobState:
        """The TrainJob's state: what ``trainspec status NAME`` prints. TS716 when there is none."""
        return self._state(self._trainjob(name))

    def list(self, all_namespaces: bool = False) -> builtins.list[JobState]:
        """Every TrainJob of the namespace (``all_namespaces``: of the cluster), by namespace and name."""
        return _guarded(lambda: cluster.states(self._kube, None if all_namespaces else self.namespace))

    def events(self, name: str) -> builtins.list[Event]:
        """The Kubernetes Events of the TrainJob, its JobSet, Jobs and pods (replaced ones too) and its
        Kueue Workload, oldest first. Events expire (an hour by default): old jobs have few."""
        job = self._trainjob(name)
        run = name_of(job)
        return _guarded(
            lambda: cluster.events(
                self._kube,
                self.namespace,
                job,
                reading.pods(self._kube, self.namespace, run),
                reading.workloads(self._kube, self.namespace, job),
            )
        )

    def runtimes(self) -> builtins.list[RuntimeInfo]:
        """The namespace's TrainingRuntimes, then the ClusterTrainingRuntimes."""
        return _guarded(lambda: cluster.runtimes(self._kube, self.namespace))

    def runtime(self, name: str) -> RuntimeInfo:
        """The TrainingRuntime ``name`` of the namespace, else the ClusterTrainingRuntime (as Trainer's
        ``runtimeRef`` and the Kubeflow SDK look them up). TS712 when neither exists."""
        from trainspec.kube.errors import get_or_none

        kube, ns = self._kube, self.namespace
        for resource, scope in ((R.TRAINING_RUNTIME, ns), (R.CLUSTER_TRAINING_RUNTIME, None)):
            # get_or_none: without Trainer's CRDs a 404 is "not served" (TS721), not "no runtime".
            read = functools.partial(get_or_none, kube, resource, scope, name)
            found = self._read(read, f"read {resource.kind} {name}")
            if found is not None:
                return cluster.runtime_info(found, resource.kind)
        raise ClusterError(
            [
                Diagnostic(
                    codes.CLUSTER_RUNTIME_MISSING,
                    f"no runtime {name!r}: neither a TrainingRuntime in namespace {ns} nor a ClusterTrainingRuntime",
                    file=where(kube, ns),
                    line=1,
                    column=1,
                    hint="Client.runtimes() lists the runtimes there (kubectl get clustertrainingruntimes)",
                )
            ]
        )

    # -- logs ---------------------------------------------------------------------------------------

    def logs(
        self,
        name: str,
        *,
        node: int | None = None,
        follow: bool = False,
        tail: int | None = None,
        since_seconds: int | None = None,
        previous: bool = False,
        poll_seconds: float = 2.0,
    ) -> Iterator[LogLine]:
        """The trainer pods' log lines (container ``node``), typed: ``line.node``, ``line.rank``, ``line.text``.

        ``node``: that node index only (default: every node). Waits for the pods to start; reads
        the newest pod of each node index. ``follow`` keeps reading, across container restarts and
        replaced pods, until the TrainJob is finished (each node in a thread of its own, so lines
        of different nodes interleave as they come). ``tail``: start with the last lines of each
        pod; ``since_seconds``: with those of the last seconds; ``previous``: read the container
        instance before its last restart (kubectl's ``--tail``, ``--since``, ``--previous``).
        ``poll_seconds``: how often to look for new or replaced pods.

        The TrainJob is looked up at once (:class:`ClusterError` TS716 when there is none); the
        lines come as the iterator is read. Closing it early stops the reading.
        """
        if node is not None and node < 0:
            raise ValueError(f"node must be >= 0 (got {node})")
        if tail is not None and tail < 0:
            raise ValueError(f"tail must be >= 0 (got {tail})")
        job = self._trainjob(name)
        run = name_of(job)
        procs = ((job.get("spec") or {}).get("trainer") or {}).get("numProcPerNode")
        lines = logstream.stream(
            self._kube,
            self.namespace,
            run,
            nodes=None if node is None else frozenset({node}),
            procs_per_node=procs if isinstance(procs, int) else 1,
            follow=follow,
            finished=logstream.job_finished(self._kube, self.namespace, run),
            poll_seconds=poll_seconds,
            tail=tail,
            since=since_seconds,
            previous=previous,
        )
        return _guarded_iter(lines)

    # -- waiting and cancelling -----------------------------------------------------------------------

    def wait(
        self,
        name: str,
        phase: str | Iterable[str] = ("Complete", "Failed"),
        *,
        timeout: float = 600.0,
        poll_seconds: float = 10.0,
    ) -> JobState:
        """Wait until the TrainJob is in one of ``phase``; its state then.

        Watches the TrainJob and reads it again at least every ``poll_seconds`` (Kueue's and the
        pods' changes show on other objects). Raises :class:`WaitTimeout` (a ``TimeoutError``) with
        the last state after ``timeout`` seconds, and :class:`JobEnded` (a ``RuntimeError``) when the
        job finishes in a phase not waited for. ``ValueError`` for a phase that does not exist.
        """
        wanted = {phase} if isinstance(phase, str) else set(phase)
        unknown = sorted(wanted - PHASES)
        if unknown or not wanted:
            raise ValueError(
                f"unknown phase {', '.join(unknown) or '(none given)'}: phases are {', '.join(sorted(PHASES))}"
            )
        deadline = time.monotonic() + timeout
        job = self._trainjob(name)
        run = name_of(job)
        while True:
            state = self._state(job)
            if state.phase in wanted:
                return state
            if state.done:
                raise JobEnded(f"TrainJob {state.namespace}/{run} ended {state.phase}, not {_either(wanted)}", state)
            left = deadline - time.monotonic()
            if left <= 0:
                raise WaitTimeout(
                    f"TrainJob {state.namespace}/{run} is {state.phase} after {timeout:g}s, not {_either(wanted)}",
                    state,
                )
            job = self._next(job, min(left, poll_seconds)) or self._trainjob(run)

    def cancel(self, name: str, *, wait: bool = True, timeout: float = 300.0, poll_seconds: float = 1.0) -> Cancelled:
        """Delete the TrainJob with foreground propagation (its JobSet and pods go first), as ``trainspec
        cancel``, and keep its checkpoint claims: submitting the job again resumes from them.

        ``wait``: until it is gone, at most ``timeout`` seconds (then :class:`WaitTimeout`).
        """
        from trainspec.kube.submit import claim_names

        kube, ns = self._kube, self.namespace
        job = self._trainjob(name)
        run = name_of(job)
        claims = sorted(set(claim_names(job.get("spec") or {})))
        answer = self._read(
            lambda: kube.delete(R.TRAINJOB, ns, run, propagation="Foreground"), f"delete TrainJob {ns}/{run}"
        )
        deleted = answer is not None
        gone = not deleted
        if deleted and wait:
            deadline = time.monotonic() + timeout
            while self._read(lambda: kube.get(R.TRAINJOB, ns, run), f"read TrainJob {ns}/{run}") is not None:
                if time.monotonic() >= deadline:
                    raise WaitTimeout(
                        f"TrainJob {ns}/{run} is still being deleted after {timeout:g}s (its pods are stopping)",
                        self._state_or_none(run),
                    )
                time.sleep(poll_seconds)
            gone = True
        kept = tuple(
            c for c in claims if self._read(functools.partial(kube.get, R.PVC, ns, c), f"read PVC {c}") is not None
        )
        return Cancelled(run, ns, deleted, gone, kept)

    #: ``delete`` is ``cancel`` (the Kubeflow SDK's ``delete_job``, kubectl's ``delete``).
    delete = cancel

    # -- internals ----------------------------------------------------------------------------------

    def _read(self, call: Callable[[], Any], what: str) -> Any:
        """``call()`` with the status commands' backoff; :class:`ClusterError` when it still fails."""
        return _guarded(lambda: reading.retried(self._kube, call, what))

    def _trainjob(self, name: str) -> dict[str, Any]:
        return _guarded(lambda: reading.trainjob(self._kube, self.namespace, name))

    def _state(self, job: dict[str, Any]) -> JobState:
        run = name_of(job)
        return JobState.of(job, _guarded(lambda: reading.job_view(self._kube, self.namespace, run, job)))

    def _state_or_none(self, name: str) -> JobState | None:
        try:
            return self.get(name)
        except ClusterError:
            return None

    def _next(self, job: dict[str, Any], seconds: float) -> dict[str, Any] | None:
        """The TrainJob once it changed (a watch of at most ``seconds``), None when it did not (or the
        watch broke): the caller reads it again. :class:`ClusterError` when it was deleted."""
        kube, ns, run = self._kube, self.namespace, name_of(job)
        version = str((job.get("metadata") or {}).get("resourceVersion") or "0")
        try:
            seen, changed = reading.watch_trainjob(kube, ns, run, version, seconds)
        except Exception as exc:
            raise ClusterError([api_diagnostic(exc, kube, what=f"watch TrainJob {ns}/{run}")]) from None
        if seen == reading.DELETED:
            raise ClusterError(
                [
                    Diagnostic(
                        codes.NO_SUCH_CLUSTER_JOB,
                        f"TrainJob {ns}/{run} was deleted while waiting for it",
                        file=where(kube, ns, run),
                        line=1,
                        column=1,
                        hint="trainspec list -n NS shows the TrainJobs there",
                    )
                ]
            )
        return changed


def _guarded_iter(lines: Iterator[T]) -> Iterator[T]:
    try:
        yield from lines
    except CommandError as exc:
        raise ClusterError(exc.diagnostics, usage=exc.usage) from None


def _either(phases: set[str]) -> str:
    return " or ".join(sorted(phases))


def _connect(context: str | None, kubeconfig: str | os.PathLike[str] | None) -> Any:
    from trainspec.kube import session

    if kubeconfig is None:
        return session.connect(context)
    return session.connect(context, kubeconfig=os.fspath(kubeconfig))
