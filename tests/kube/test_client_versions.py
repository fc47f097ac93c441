"""The client layer through a kubeconfig, with the ``kubernetes`` release of this environment.

Which releases: the main CI run has the one kfp pins (``kubernetes<31``); ``.ci/kube-matrix`` runs all
of tests/kube again with the oldest release the ``kube`` extra allows and with the newest available,
each in a fresh virtual environment that has that extra alone (``ApiClient.call_api`` changed its
signature in 36 and 37: that is where a break shows). Here the one path the ``api`` fixture skips:
a kubeconfig with an exec credential plugin (a new token, refreshed on every call) pointing at the
loopback stand-in, then apply, get, list, watch, a 404, a pod log, delete.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import cli
from kube_standin import StandIn, serve

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install '.[kube]'")

from trainspec.kube import resources as R
from trainspec.kube.client import ApiException, KubeApi, error_message

#: An exec credential plugin: a new token on every run, already expired, so the client's
#: ``refresh_api_key_hook`` runs the plugin again before each request.
PLUGIN = (
    "import json, time; print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', "
    "'kind': 'ExecCredential', 'status': {'token': 'tok-%d' % time.time_ns(), "
    "'expirationTimestamp': '2000-01-01T00:00:00Z'}}))"
)


@pytest.fixture
def kubeconfig_standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    """The stand-in, reached the way a user's cluster is: KUBECONFIG, its current context, a plugin."""
    standin = StandIn()
    server = serve(standin)
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": ["-c", PLUGIN],
        }
    }
    kubeconfig = tmp_path / "kubeconfig"
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
    for name in ("TRAINSPEC_KUBE_API", "TRAINSPEC_NAMESPACE", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    # Loopback only: a proxy set for this machine must not carry the calls elsewhere.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()


def test_cluster_calls_through_a_kubeconfig_with_an_exec_plugin(kubeconfig_standin: StandIn) -> None:
    standin = kubeconfig_standin
    standin.add_pod(
        "ml", "versions-node-0", "versions", lines=["2026-01-01T00:00:00Z hello", "2026-01-01T00:00:01Z done"]
    )
    kube = KubeApi.connect()
    ns = kube.default_namespace()
    assert ns == "ml"  # the kubeconfig context's namespace
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "versions", "namespace": ns, "labels": {"suite": "versions"}},
        "spec": {"runtimeRef": {"name": "torch-distributed"}},
    }
    applied = kube.apply(job)
    assert applied["metadata"]["name"] == "versions"
    got = kube.get(R.TRAINJOB, ns, "versions")
    assert got is not None and got["metadata"]["uid"] == applied["metadata"]["uid"]
    listed = kube.list(R.TRAINJOB, ns, selector="suite=versions")
    assert [item["metadata"]["name"] for item in listed["items"]] == ["versions"]
    events = [event["type"] for event in kube.watch(R.TRAINJOB, ns, resource_version="0", timeout_seconds=1)]
    assert events and set(events) <= {"ADDED", "MODIFIED"}
    assert kube.get(R.TRAINJOB, ns, "absent") is None
    with pytest.raises(ApiException) as raised:
        kube.request("GET", f"/api/v1/namespaces/{ns}/pods/absent/log")
    assert (raised.value.status, error_message(raised.value)) == (404, "no such pod")
    log = list(kube.stream_log(ns, "versions-node-0", "node", follow=False))
    assert log == ["2026-01-01T00:00:00Z hello", "2026-01-01T00:00:01Z done"]
    assert kube.delete(R.TRAINJOB, ns, "versions")["metadata"]["name"] == "versions"
    assert kube.get(R.TRAINJOB, ns, "versions") is None

    (apply,) = standin.sent("PATCH")
    assert apply.headers["Content-Type"] == "application/apply-patch+yaml"
    assert apply.query["fieldManager"] and apply.query["fieldValidation"] == "Strict"
    assert apply.body["spec"] == {"runtimeRef": {"name": "torch-distributed"}}
    (log_request,) = standin.sent("GET", "/log$")[-1:]
    assert log_request.query["container"] == "node" and log_request.query["follow"].lower() == "false"
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
