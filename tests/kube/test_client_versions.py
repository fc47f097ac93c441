"""The client layer with the oldest and the newest ``kubernetes`` release the ``kube`` extra allows.

The rest of the suite runs with the release kfp pins (``kubernetes<31``), so it cannot see a break
in newer ones (``ApiClient.call_api`` changed its signature in 36 and 37). Here each release is
installed with trainspec into its own fresh virtual environment, as ``pip install 'trainspec[kube]'``
does, and a script there connects through a kubeconfig (exec-plugin token, refreshed on every call)
to the loopback stand-in running in this process: apply, get, list, watch, a 404, a pod log, delete.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest
from helpers import cli
from kube_standin import StandIn, serve

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: The extra's lower bound and the newest release at the time of writing.
VERSIONS = ["27.2.0", "37.0.2"]

#: An exec credential plugin: a new token on every run, already expired, so the client's
#: ``refresh_api_key_hook`` runs the plugin again before each request.
PLUGIN = (
    "import json, time; print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', "
    "'kind': 'ExecCredential', 'status': {'token': 'tok-%d' % time.time_ns(), "
    "'expirationTimestamp': '2000-01-01T00:00:00Z'}}))"
)

SCRIPT = r"""
import json
import sys

import kubernetes
import trainspec
from trainspec.kube import resources as R
from trainspec.kube.client import ApiException, KubeApi, error_message

kube = KubeApi.connect()
ns = kube.default_namespace()
job = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "versions", "namespace": ns, "labels": {"suite": "versions"}},
    "spec": {"runtimeRef": {"name": "torch-distributed"}},
}
applied = kube.apply(job)
got = kube.get(R.TRAINJOB, ns, "versions")
listed = kube.list(R.TRAINJOB, ns, selector="suite=versions")
events = list(kube.watch(R.TRAINJOB, ns, resource_version="0", timeout_seconds=1))
missing = kube.get(R.TRAINJOB, ns, "absent")
try:
    kube.request("GET", "/api/v1/namespaces/" + ns + "/pods/absent/log")
    error = None
except ApiException as exc:
    error = [exc.status, error_message(exc)]
log = list(kube.stream_log(ns, "versions-node-0", "node", follow=False))
deleted = kube.delete(R.TRAINJOB, ns, "versions")
print(json.dumps({
    "kubernetes": kubernetes.__version__,
    "trainspec": trainspec.__file__,
    "namespace": ns,
    "applied": applied["metadata"]["name"],
    "got": got["metadata"]["uid"] == applied["metadata"]["uid"],
    "listed": [item["metadata"]["name"] for item in listed["items"]],
    "events": [event["type"] for event in events],
    "missing": missing,
    "error": error,
    "log": log,
    "deleted": deleted["metadata"]["name"],
    "gone": kube.get(R.TRAINJOB, ns, "versions") is None,
}))
"""


def _install(env_dir: Path, version: str) -> Path:
    """A fresh venv with trainspec (built from a copy of the sources) and ``kubernetes==version``."""
    source = env_dir / "src"
    # A copy: building in the checkout would leave build/ behind, and two versions would race on it.
    shutil.copytree(ROOT / "trainspec", source / "trainspec", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    venv.create(env_dir / "venv", with_pip=True)
    python = env_dir / "venv" / ("Scripts" if os.name == "nt" else "bin") / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, f"{source}[kube]", f"kubernetes=={version}"], capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        reason = f"cannot install kubernetes=={version}: {done.stderr.strip()[-500:]}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)  # CI must test the extra's bounds, never skip them silently
        pytest.skip(reason)
    return python


@pytest.mark.parametrize("version", VERSIONS)
def test_cluster_calls_work_with_the_kubernetes_release(version: str, tmp_path: Path) -> None:
    python = _install(tmp_path, version)
    standin = StandIn()
    server = serve(standin)
    try:
        standin.add_pod(
            "ml", "versions-node-0", "versions", lines=["2026-01-01T00:00:00Z hello", "2026-01-01T00:00:01Z done"]
        )
        kubeconfig = tmp_path / "kubeconfig"
        user = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": str(python),
                "args": ["-c", PLUGIN],
            }
        }
        kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "standin", "cluster": {"server": standin.url}}],
                    "users": [{"name": "tester", "user": user}],
                    "contexts": [
                        {"name": "standin", "context": {"cluster": "standin", "user": "tester", "namespace": "ml"}}
                    ],
                    "current-context": "standin",
                }
            ),
            encoding="utf-8",
        )
        script = tmp_path / "calls.py"
        script.write_text(SCRIPT, encoding="utf-8")
        skip = ("TRAINSPEC_KUBE_API", "TRAINSPEC_NAMESPACE", "KUBERNETES_SERVICE_HOST", "PYTHONPATH")
        env = {k: v for k, v in os.environ.items() if k not in skip}
        # Loopback only: a proxy set for this machine must not carry the calls elsewhere.
        env.update(KUBECONFIG=str(kubeconfig), NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        done = subprocess.run(
            [str(python), str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
    finally:
        server.shutdown()
        server.server_close()

    assert result["kubernetes"] == version
    assert Path(result["trainspec"]).is_relative_to(tmp_path / "venv")  # the installed copy, not the checkout
    assert result["namespace"] == "ml"  # the kubeconfig context's namespace
    assert result["applied"] == "versions" and result["got"]
    assert result["listed"] == ["versions"]
    assert result["events"] and set(result["events"]) <= {"ADDED", "MODIFIED"}
    assert result["missing"] is None
    assert result["error"] == [404, "no such pod"]
    assert result["log"] == ["2026-01-01T00:00:00Z hello", "2026-01-01T00:00:01Z done"]
    assert result["deleted"] == "versions" and result["gone"]

    (apply,) = standin.sent("PATCH")
    assert apply.headers["Content-Type"] == "application/apply-patch+yaml"
    assert apply.query["fieldManager"] and apply.query["fieldValidation"] == "Strict"
    assert apply.body["spec"] == {"runtimeRef": {"name": "torch-distributed"}}
    (log,) = standin.sent("GET", "/log$")[-1:]
    assert log.query["container"] == "node" and log.query["follow"].lower() == "false"
    # Every call carried the plugin's bearer token, fetched anew each time (the refresh hook ran).
    tokens = [next((v for k, v in r.headers.items() if k.lower() == "authorization"), "") for r in standin.requests]
    assert all(t.startswith("Bearer tok-") for t in tokens), tokens
    assert len(set(tokens)) > 1


def test_a_library_error_is_an_internal_error_not_an_unreachable_cluster(
    api: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the issue saw with kubernetes 37 before this layer stopped using ``call_api``."""
    from trainspec.kube.client import KubeApi
    from trainspec.kube.session import ClientDefect, api_diagnostic

    def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("ApiClient.call_api() got an unexpected keyword argument 'query_params'")

    monkeypatch.setattr(KubeApi, "request", broken)
    code, _, err = cli("status", "versions", "-n", "ml")
    assert code == 2 and "internal error" in err and "TS711" not in err and "cannot reach" not in err
    assert "kubernetes client" in err and "query_params" in err
    # A failure to connect is still the network's (TS711), and retried as before.
    assert api_diagnostic(ConnectionRefusedError(111, "refused"), None, what="read it").code == "TS711"
    with pytest.raises(ClientDefect, match="inside trainspec"):
        api_diagnostic(AttributeError("no attribute 'call_api'"), None, what="read it")
