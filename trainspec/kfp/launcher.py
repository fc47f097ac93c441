"""Launch a compiled job from a KFP step and wait for it: the logic behind ``launch_trainjob``.

The KFP component is a thin shell around :func:`run_launcher` (lightweight components ship
their function's source, so the logic lives here, importable and unit tested). It also runs
on its own: ``python -m trainspec.kfp.launcher --trainjob job.json --run-id RUN``.

The job is a TrainJob, RayJob, PyTorchJob, JAXJob or MPIJob: what differs between kinds (plural,
state, rank-0 pod, name limit) is the dialect's ``launch_facts``, never this module's.

What a run does:

1. Names the job ``<base>-<run id prefix>`` inside the name budget and looks it up. If it
   exists and carries this run's ``trainspec.dev/kfp-run-id`` label, a retried launcher pod
   *re-attaches* (never re-applies: that could re-suspend a job Kueue has admitted); any other
   object of that name is left alone and reported.
2. Otherwise checks that the referenced runtime exists for engines with runtime objects (it
   never creates runtimes), merges the step's TaskConfig in, sets an ownerReference to the
   launcher pod (cleanup backstop), and server-side applies it with ``fieldValidation=Strict``.
3. Follows the rank-0 pod's log into stdout and polls until the dialect says the job is
   ``Complete`` or ``Failed``; transient API errors are retried with capped exponential backoff.
4. On timeout or SIGTERM deletes the job (foreground) and fails; on ``Failed`` raises with
   the job's reason and message. The final status is written as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from trainspec.kfp import launcher_names as N, merge
from trainspec.kfp.kube import KubeApi, error_message, job_resource
from trainspec.kfp.launch_result import (
    LauncherError,
    LaunchResult,
    Terminated,
    Timeout,
    TrainJobFailed,
    TrainJobTimeout,
    job_state,
    sigterm_raises,
)
from trainspec.kfp.step_logs import LogFollower
from trainspec.kube import retry

#: How long to wait for the last log lines once the job is done.
LOG_DRAIN_SECONDS = 10.0

__all__ = [
    "LaunchResult",
    "LauncherError",
    "Terminated",
    "TrainJobFailed",
    "TrainJobTimeout",
    "job_state",
    "main",
    "run_launcher",
]


class _Launch:
    """One launch's state; the steps of :func:`run_launcher` as methods."""

    def __init__(
        self,
        kube: KubeApi,
        manifest: dict[str, Any],
        *,
        name: str,
        namespace: str,
        run_id: str,
        policy: retry.RetryPolicy,
        deadline: float | None,
        poll_seconds: float,
        out: TextIO,
        clock: Callable[[], float],
    ) -> None:
        self.kube, self.name, self.namespace, self.run_id = kube, name, namespace, run_id
        self.policy, self.deadline, self.poll_seconds, self.clock = policy, deadline, poll_seconds, clock
        self.out = out
        self.lock = threading.Lock()
        self.owned = False  # True once the job of that name is ours to delete
        self.dialect = N.dialect_of(manifest)
        self.kind = str(manifest.get("kind"))
        self.resource = job_resource(manifest, self.dialect.launch_facts(manifest).plural)
        self.what = f"{self.kind} {namespace}/{name}"

    def get(self, what: str) -> dict[str, Any] | None:  # the job object, None when it does not exist
        return self.call(lambda: self.kube.get_job(self.resource, self.namespace, self.name), what)

    def say(self, message: str) -> None:
        with self.lock:
            self.out.write(f"[trainspec] {message}\n")
            self.out.flush()

    def call(self, fn: Callable[[], Any], what: str) -> Any:
        try:
            return retry.call(fn, self.policy, what=what, deadline=self.deadline, log=self.say, clock=self.clock)
        except retry.DeadlineExceeded:
            raise Timeout() from None

    def result(
        self,
        phase: str,
        obj: dict[str, Any] | None = None,
        *,
        reason: str = "",
        message: str = "",
        attached: bool = False,
    ) -> LaunchResult:
        conditions = list(((obj or {}).get("status") or {}).get("conditions") or [])
        return LaunchResult(self.name, self.namespace, phase, reason, message, self.run_id, attached, conditions)

    def owner(self) -> dict[str, Any] | None:
        """An ownerReference to the launcher pod, if this runs in a pod of the job's namespace.

        Not a controller reference and no blockOwnerDeletion (that needs rights on pods/finalizers).
        Cross-namespace owners are invalid and would get the job garbage-collected at once,
        hence the GET in the job's namespace.
        """
        pod_name = os.environ.get("KFP_POD_NAME") or os.environ.get("HOSTNAME")
        if not pod_name:
            return None
        try:
            pod = self.call(lambda: self.kube.get_pod(self.namespace, pod_name), "read the launcher pod")
        except Exception as exc:
            self.say(f"no ownerReference to the launcher pod: cannot read it ({error_message(exc)})")
            return None
        if pod is None:
            self.say(f"no ownerReference: pod {pod_name} is not in namespace {self.namespace}")
            return None
        return {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod["metadata"]["uid"]}

    def check_runtime(self, manifest: dict[str, Any]) -> dict[str, Any] | None:
        if not self.dialect.emits_runtimes:  # the runtime is folded into the job object
            return None
        ref = (manifest.get("spec") or {}).get("runtimeRef") or {}
        kind, runtime = ref.get("kind") or "ClusterTrainingRuntime", ref.get("name")
        if not runtime:
            raise LauncherError("the TrainJob has no spec.runtimeRef.name")
        try:
            found = self.call(lambda: self.kube.get_runtime(kind, runtime, self.namespace), f"read {kind} {runtime}")
        except Exception as exc:
            raise LauncherError(f"cannot read {kind} {runtime!r}: {error_message(exc)}") from None
        if found is None:
            where = f" in namespace {self.namespace}" if kind == "TrainingRuntime" else ""
            raise LauncherError(
                f"{kind} {runtime!r} does not exist{where}; the launcher never creates runtimes: "
                "apply the compiled runtimes first (trainspec compile SPEC -o DIR; "
                "kubectl apply -f DIR/runtimes/)"
            )
        return found

    def attach(self, existing: dict[str, Any]) -> None:
        labels = (existing.get("metadata") or {}).get("labels") or {}
        if labels.get(N.RUN_ID_LABEL) != N.label_value(self.run_id):
            raise LauncherError(
                f"{self.what} exists but belongs to another run "
                f"({N.RUN_ID_LABEL}={labels.get(N.RUN_ID_LABEL)!r}); not touching it"
            )
        self.owned = True
        self.say(f"re-attaching to {self.what} (created by an earlier attempt of this run)")
        owner = self.owner()
        refs = (existing.get("metadata") or {}).get("ownerReferences") or []
        if owner is not None and all(r.get("uid") != owner["uid"] for r in refs):
            body = {
                "apiVersion": self.resource.api_version,
                "kind": self.kind,
                "metadata": {"name": self.name, "namespace": self.namespace, "ownerReferences": [owner]},
            }
            try:
                self.call(
                    lambda: self.kube.apply_job(self.resource, body, manager=N.OWNER_FIELD_MANAGER, force=False),
                    "add the ownerReference",
                )
            except Exception as exc:  # a backstop only: never fail the run over it
                self.say(f"could not add the ownerReference: {error_message(exc)}")

    def create(self, manifest: dict[str, Any], **prepare: Any) -> None:
        runtime = self.check_runtime(manifest)
        body = merge.prepare(
            manifest,
            name=self.name,
            namespace=self.namespace,
            run_id=self.run_id,
            runtime=runtime,
            owner=self.owner(),
            **prepare,
        )
        self.owned = True  # from here a SIGTERM or timeout deletes what may have been created
        try:
            self.call(lambda: self.kube.apply_job(self.resource, body), f"apply the {self.kind}")
        except Exception as exc:
            raise LauncherError(f"the API server rejected {self.what}: {error_message(exc)}") from None
        self.say(f"applied {self.what} (server-side apply, strict field validation)")

    def wait(self) -> dict[str, Any]:
        """Poll until the dialect says Complete or Failed; raises Timeout at the deadline."""
        last = None
        while True:
            if self.deadline is not None and self.clock() >= self.deadline:
                raise Timeout()
            try:
                obj = self.get(f"read the {self.kind}")
            except Exception as exc:
                raise LauncherError(f"cannot read {self.what}: {error_message(exc)}") from None
            if obj is None:
                raise LauncherError(f"{self.what} was deleted by someone else")
            facts = self.dialect.launch_facts(obj)
            if facts.phase != last:
                detail = f" ({facts.reason}: {facts.message})" if facts.reason or facts.message else ""
                self.say(f"{self.kind} {self.name}: {facts.phase}{detail}")
                last = facts.phase
            if facts.done:
                return obj
            pause = self.poll_seconds
            if self.deadline is not None:
                pause = max(0.0, min(pause, self.deadline - self.clock()))
            time.sleep(pause)

    def delete(self, why: str) -> None:
        if not self.owned:
            return
        self.say(f"{why}: deleting {self.what} (propagationPolicy Foreground)")
        short = retry.RetryPolicy(base=self.policy.base, cap=self.policy.cap, attempts=5)
        try:
            retry.call(
                lambda: self.kube.delete_job(self.resource, self.namespace, self.name),
                short,
                what=f"delete the {self.kind}",
                log=self.say,
            )
        except Exception as exc:
            self.say(f"could not delete {self.what}: {error_message(exc)}")


def _write_status(path: str | None, result: LaunchResult) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(result.to_json() + "\n", encoding="utf-8")


def run_launcher(
    trainjob: str | dict[str, Any],
    *,
    run_id: str,
    trainer_api: str = "2.3",
    timeout_seconds: float = 0,
    poll_seconds: float = 10.0,
    namespace: str = "",
    checkpoint_claim: str = "",
    task_config: Any = None,
    status_path: str | None = None,
    backoff_seconds: float = 1.0,
    follow_logs: bool = True,
    kube: KubeApi | None = None,
    out: TextIO | None = None,
) -> LaunchResult:
    """Apply (or re-attach to) the job object of this run and wait for it to finish.

    ``trainjob`` is the compiled TrainJob, RayJob, PyTorchJob, JAXJob or MPIJob as a JSON string
    (or a dict); ``run_id`` the KFP run
    id; ``timeout_seconds`` 0 waits without limit; ``namespace`` "" means the launcher pod's
    own; ``checkpoint_claim`` replaces the compiled checkpoint PVC (e.g. one a ``CreatePVC``
    step made); ``task_config`` is the step's ``dsl.TaskConfig`` (TrainJobs only). Returns the
    result when the job completes; raises :class:`TrainJobFailed`, :class:`TrainJobTimeout` or
    :class:`LauncherError`, and :class:`Terminated` (exit 143) after SIGTERM.
    """
    out = out or sys.stdout
    manifest = json.loads(trainjob) if isinstance(trainjob, str) else trainjob
    merge.parse_trainer_api(trainer_api)  # fail on a bad target before touching the cluster
    if kube is None:
        try:
            kube = KubeApi.connect()
        except Exception as exc:
            raise LauncherError(
                f"cannot configure the Kubernetes client ({exc}): run in a pod, set KUBECONFIG, "
                "or set TRAINSPEC_KUBE_API to the API's URL"
            ) from None
    meta = manifest.get("metadata") or {}
    ns = namespace or kube.default_namespace(meta.get("namespace"))
    try:
        # Named after the job (not its compiled run, <job>-<run id>): one job object per KFP run.
        base = (meta.get("labels") or {}).get(N.JOB_LABEL) or meta.get("name") or "job"
        name = N.trainjob_name(str(base), run_id, manifest)
        launch = _Launch(
            kube,
            manifest,
            name=name,
            namespace=ns,
            run_id=run_id,
            policy=retry.RetryPolicy(base=backoff_seconds, cap=max(backoff_seconds, min(30.0, backoff_seconds * 32))),
            deadline=time.monotonic() + timeout_seconds if timeout_seconds and timeout_seconds > 0 else None,
            poll_seconds=poll_seconds,
            out=out,
            clock=time.monotonic,
        )
    except ValueError as exc:
        raise LauncherError(str(exc)) from None
    follower: LogFollower | None = None
    drain = LOG_DRAIN_SECONDS  # cut short when cancelled: the pod's grace period is running
    launch.say(f"{launch.what} for run {run_id}")
    if meta.get("namespace") and meta["namespace"] != ns:
        launch.say(f"running in namespace {ns}, not the spec's {meta['namespace']} (set namespace to choose)")
    with sigterm_raises():
        try:
            try:
                existing = launch.get(f"look up the {launch.kind}")
            except Exception as exc:
                raise LauncherError(f"cannot read {launch.what}: {error_message(exc)}") from None
            attached = existing is not None
            if existing is not None:
                launch.attach(existing)
            else:
                try:
                    launch.create(
                        manifest, task_config=task_config, trainer_api=trainer_api, checkpoint_claim=checkpoint_claim
                    )
                except merge.MergeError as exc:
                    raise LauncherError(str(exc)) from None
            if follow_logs:
                named = {**manifest, "metadata": {**meta, "name": name, "namespace": ns}}
                follower = LogFollower(kube, ns, named, out=out, poll_seconds=poll_seconds, lock=launch.lock).start()
            final = launch.wait()
        except Terminated:
            drain = 1.0
            launch.delete("SIGTERM (run cancelled)")
            _write_status(status_path, launch.result("Terminated", reason="SIGTERM"))
            raise
        except Timeout:
            drain = 1.0
            launch.delete(f"timed out after {timeout_seconds}s")
            result = launch.result(
                "Timeout", reason="LauncherTimeout", message=f"not finished after {timeout_seconds}s"
            )
            _write_status(status_path, result)
            raise TrainJobTimeout(
                f"{launch.what} did not finish within {timeout_seconds}s; it was deleted", result
            ) from None
        finally:
            if follower is not None:
                follower.finish(drain)
    facts = launch.dialect.launch_facts(final)
    result = launch.result(facts.phase, final, reason=facts.reason, message=facts.message, attached=attached)
    _write_status(status_path, result)
    if facts.phase == "Failed":
        reason, message = facts.reason or "no reason", facts.message or "no message"
        raise TrainJobFailed(f"{launch.what} failed: {reason}: {message}", result)
    launch.say(f"{launch.what} completed")
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m trainspec.kfp.launcher``: the launcher outside KFP (debugging, other orchestrators)."""
    parser = argparse.ArgumentParser(prog="python -m trainspec.kfp.launcher", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--trainjob", required=True, metavar="FILE", help="the compiled job object as JSON (- for stdin)"
    )
    parser.add_argument("--run-id", required=True, help="the id that names and labels the job")
    parser.add_argument("--trainer-api", default="2.3", help="the cluster's Trainer release (default 2.3)")
    parser.add_argument("--timeout", type=float, default=0, metavar="SECONDS", help="0 waits without limit")
    parser.add_argument("--poll-seconds", type=float, default=10.0)
    parser.add_argument("--backoff-seconds", type=float, default=1.0, help="first retry delay for API errors")
    parser.add_argument("--namespace", default="", help="default: the pod's own namespace")
    parser.add_argument("--checkpoint-claim", default="", help="PVC to use as the checkpoint volume")
    parser.add_argument("--task-config", metavar="FILE", help="TaskConfig fields as JSON (Kubernetes names)")
    parser.add_argument("--status", metavar="FILE", help="write the final status JSON here")
    parser.add_argument("--no-logs", action="store_true", help="do not follow the rank-0 pod's log")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if args.trainjob == "-" else Path(args.trainjob).read_text(encoding="utf-8")
    task_config = json.loads(Path(args.task_config).read_text(encoding="utf-8")) if args.task_config else None
    try:
        result = run_launcher(
            text,
            run_id=args.run_id,
            trainer_api=args.trainer_api,
            timeout_seconds=args.timeout,
            poll_seconds=args.poll_seconds,
            namespace=args.namespace,
            checkpoint_claim=args.checkpoint_claim,
            task_config=task_config,
            status_path=args.status,
            backoff_seconds=args.backoff_seconds,
            follow_logs=not args.no_logs,
        )
    except LauncherError as exc:
        print(f"trainspec launcher: {exc}", file=sys.stderr)
        return 1
    print(result.to_json())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
