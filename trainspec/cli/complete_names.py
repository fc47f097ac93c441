"""``trainspec __complete jobs|namespaces|contexts``: names for the shell completion scripts.

A hidden command: ``trainspec completion`` writes scripts that call it for a JOB argument, a
``-n/--namespace`` value and a ``--context`` value, passing along the ``--kubeconfig``,
``--context`` and ``-n`` already on the command line. It prints one name a line and always
exits 0; when there is nothing to say (no kubeconfig, no kubernetes client, no cluster, no
permission, a slow API server) it prints nothing at all: a completion never shows an error.

Fast, since a person is waiting at a prompt:

* contexts come from the kubeconfig files themselves (``--kubeconfig``, else ``$KUBECONFIG``,
  else ``~/.kube/config``), read as YAML, without the kubernetes client;
* jobs and namespaces need the API: with nothing configured it stops before importing the client;
  each request gets ``CONNECT_SECONDS`` to connect and the whole lookup ``BUDGET_SECONDS``.

Jobs are the TrainJobs of the namespace and the trainspec jobs they are runs of
(``trainspec.dev/job``: ``status``, ``logs`` and ``cancel`` take either). Namespaces are those the
API lists; without the right to list them, those that hold TrainJobs the user can see, and the
context's own.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

KINDS = ("jobs", "namespaces", "contexts")
#: Seconds to connect to the API server, and for the whole lookup (retries included).
CONNECT_SECONDS = 2.0
BUDGET_SECONDS = 3.0
#: ``trainspec.kube.client.API_ENV``, named here so that nothing imports the kubernetes client
#: before it is known to be needed (a test keeps the two equal).
API_ENV = "TRAINSPEC_KUBE_API"
#: The in-cluster service account token: a pod needs no kubeconfig.
_SA_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")


def main(argv: list[str]) -> int:
    """Print the names of ``argv[0]`` (see the module docstring); always 0."""
    parser = _Quiet(prog="trainspec __complete", add_help=False)
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--kubeconfig")
    parser.add_argument("--context")
    parser.add_argument("-n", "--namespace")
    try:
        args, _ = parser.parse_known_args(argv)  # a half-typed command line has odd words: ignore them
    except ValueError:  # no kind, an unknown kind, an option without its value: nothing to offer
        return 0
    try:
        found = contexts(args.kubeconfig) if args.kind == "contexts" else _from_cluster(args)
    except Exception:  # a completion never shows an error (module docstring)
        found = []
    # A name the shell would split or show oddly is left out: Kubernetes names never are such.
    names = sorted({name for name in found if name and name.isprintable() and " " not in name})
    sys.stdout.write("".join(f"{name}\n" for name in names))
    return 0


class _Quiet(argparse.ArgumentParser):
    """A parser whose errors are exceptions, not a usage message and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def kubeconfig_files(kubeconfig: str | None) -> list[Path]:
    """The kubeconfig files kubectl would read: the option, else ``$KUBECONFIG`` (a list), else the default."""
    listed = kubeconfig or os.environ.get("KUBECONFIG") or ""
    paths = [Path(p).expanduser() for p in listed.split(os.pathsep) if p]
    return paths or [Path("~/.kube/config").expanduser()]


def contexts(kubeconfig: str | None) -> list[str]:
    """The context names of the kubeconfig files (unreadable or odd files give none)."""
    import yaml

    names: list[str] = []
    for path in kubeconfig_files(kubeconfig):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, yaml.YAMLError):
            continue
        listed = data.get("contexts") if isinstance(data, dict) else None
        for entry in listed if isinstance(listed, list) else []:
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str):
                names.append(name)
    return names


def _configured(kubeconfig: str | None) -> bool:
    """Whether any cluster is configured at all, decided without the kubernetes client."""
    if os.environ.get(API_ENV) or (os.environ.get("KUBERNETES_SERVICE_HOST") and _SA_TOKEN.is_file()):
        return True
    return any(path.is_file() for path in kubeconfig_files(kubeconfig))


def _from_cluster(args: argparse.Namespace) -> list[str]:
    """Jobs or namespaces, asked of the API within the budget ([] when it cannot be done in time)."""
    if not _configured(args.kubeconfig):
        return []
    found: list[str] = []

    def ask() -> None:
        try:
            found.extend(_ask(args))
        except Exception:  # unreachable, refused, forbidden: nothing to offer (module docstring)
            return

    # A daemon thread and a deadline: however the connection hangs or retries, the prompt returns.
    worker = threading.Thread(target=ask, name="trainspec-complete", daemon=True)
    worker.start()
    worker.join(BUDGET_SECONDS)
    return [] if worker.is_alive() else list(found)


def _ask(args: argparse.Namespace) -> list[str]:
    try:
        from trainspec.kube.client import KubeApi
    except ImportError:  # no kube extra: nothing to complete
        return []
    from trainspec.kube import resources as R

    kube = KubeApi.connect(args.context, args.kubeconfig)
    if args.kind == "namespaces":
        try:
            return [_name(item) for item in _items(kube, "/api/v1/namespaces")]
        except Exception:  # cannot list namespaces (RBAC): those the user's TrainJobs are in
            seen = [_namespace(item) for item in _items(kube, R.TRAINJOB.path(None))]
            return [*seen, kube.default_namespace(None)]
    namespace = args.namespace or kube.default_namespace(None)
    from trainspec.k8s.wellknown import JOB_LABEL

    names = []
    for item in _items(kube, R.TRAINJOB.path(namespace)):
        names.append(_name(item))
        labels = (item.get("metadata") or {}).get("labels") or {}
        if isinstance(labels.get(JOB_LABEL), str):
            names.append(labels[JOB_LABEL])
    return names


def _items(kube: Any, path: str) -> list[dict[str, Any]]:
    import json

    response = kube.stream("GET", path, timeout=(CONNECT_SECONDS, BUDGET_SECONDS))
    try:
        body = json.loads(response.data or b"{}")
    finally:
        response.release_conn()
    return [item for item in body.get("items") or [] if isinstance(item, dict)]


def _name(item: dict[str, Any]) -> str:
    return str((item.get("metadata") or {}).get("name") or "")


def _namespace(item: dict[str, Any]) -> str:
    return str((item.get("metadata") or {}).get("namespace") or "")
