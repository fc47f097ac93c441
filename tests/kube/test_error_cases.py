"""Each way a cluster command can fail, end to end: the CLI against the loopback stand-in, which
answers as kube-apiserver 1.36 does (tests/kfp/kube_answers.py). Exit code, code, location,
message and hint per case; then every command through every fault without a traceback."""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import JOB_YAML, cli, write_job
from kube_standin import StandIn

RUN = ("ddp-ckpt", "-n", "ml-dev")
NUM_NODES = (
    "FieldValueInvalid",
    "spec.trainer.numNodes",
    "Invalid value: -1: spec.trainer.numNodes in body should be greater than or equal to 0",
)


def submitted(api: StandIn, tmp_path: Path, text: str = JOB_YAML) -> str:
    api.add_cluster_runtime("trainspec-torch")
    spec = write_job(tmp_path, text)
    code, _, err = cli("submit", spec, "--no-project")
    assert code == 0, err
    return spec


def failed(argv: tuple[str, ...], code: str) -> str:
    """Run the CLI; it must exit 1 with diagnostic ``code`` and no traceback. Its stderr."""
    status, _, err = cli(*argv)
    assert status == 1, err
    assert f"error[{code}]" in err, err
    assert "Traceback" not in err and "internal error" not in err
    return err


def hint(err: str) -> str:
    return next(line for line in err.splitlines() if line.startswith("  hint: "))


# --- 1. kubeconfig ------------------------------------------------------------------------------------


@pytest.fixture
def no_api(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TRAINSPEC_KUBE_API", "KUBERNETES_SERVICE_HOST", "TRAINSPEC_NAMESPACE"):
        monkeypatch.delenv(var, raising=False)


def kubeconfig(tmp_path: Path, server: str, *, current: str | None = "kind-ml", ca: str = "") -> Path:
    path = tmp_path / "kubeconfig"
    cluster = {"server": server} | ({"certificate-authority": ca} if ca else {})
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "contexts": [{"name": "kind-ml", "context": {"cluster": "c", "user": "u", "namespace": "ml-dev"}}],
        "users": [{"name": "u", "user": {"token": "expired-token"}}],
    }
    if current:
        config["current-context"] = current
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.mark.usefixtures("no_api")
def test_no_kubeconfig_says_which_file_was_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("KUBECONFIG", str(missing))
    err = failed(("status", *RUN), "TS711")
    assert f"{missing}:1:1: error[TS711]: no kubeconfig: {missing} does not exist" in err
    assert all(w in hint(err) for w in ("kubectl config get-contexts", "--context", "TRAINSPEC_KUBE_API"))


@pytest.mark.usefixtures("no_api")
def test_no_current_context_and_an_unknown_context(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, "https://127.0.0.1:6443", current=None)
    err = failed(("list", "--kubeconfig", str(path)), "TS711")
    assert f"the kubeconfig {path} has no current context" in err
    err = failed(("cancel", *RUN, "--kubeconfig", str(path), "--context", "prod"), "TS711")
    assert f"the kubeconfig {path} has no context 'prod' (--context)" in err and "get-contexts" in hint(err)


# --- 2. TLS and the network ---------------------------------------------------------------------------


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on loopback with a self-signed certificate the client was not told about."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "stages"))
    from status_standin import make_certificate

    cert, key = make_certificate(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.handshakes = 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.usefixtures("no_api")
def test_tls_verification_is_not_the_network(tmp_path: Path, tls_server: tuple[str, Path]) -> None:
    url, _ = tls_server
    err = failed(("status", *RUN, "--kubeconfig", str(kubeconfig(tmp_path, url))), "TS718")
    assert f"TLS with {url} failed to read TrainJob ml-dev/ddp-ckpt: " in err and "self-signed certificate" in err
    assert "certificate-authority" in hint(err) and "insecure-skip-tls-verify" in hint(err)
    assert "retrying" not in err  # an untrusted certificate stays untrusted


@pytest.mark.usefixtures("no_api")
def test_a_refused_connection_is_the_network_after_retries(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    err = failed(("status", *RUN, "--kubeconfig", str(kubeconfig(tmp_path, url))), "TS711")
    assert f"cannot reach {url} to read TrainJob ml-dev/ddp-ckpt: connection refused" in err
    assert "(5 attempts over " in err and "kubectl cluster-info" in hint(err)


# --- 3. 401 -------------------------------------------------------------------------------------------


def test_401_asks_for_a_new_login_not_rbac(api: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    submitted(api, tmp_path)
    api.fail("GET", "/trainjobs/ddp-ckpt$", 401)
    err = failed(("status", *RUN), "TS719")
    assert "(HTTP 401 Unauthorized) to read TrainJob ml-dev/ddp-ckpt: credentials missing, expired or invalid" in err
    assert "kubectl proxy" in hint(err)  # TRAINSPEC_KUBE_API sends no credentials
    monkeypatch.delenv("TRAINSPEC_KUBE_API")
    api.fail("GET", "/trainjobs/ddp-ckpt$", 401)
    err = failed(("status", *RUN, "--kubeconfig", str(kubeconfig(tmp_path, api.url))), "TS719")
    assert "the credentials of context kind-ml" in err and "log in again" in hint(err) and "not RBAC" in hint(err)
    sent = {k.lower(): v for k, v in api.sent("GET")[-1].headers.items()}
    assert sent["authorization"] == "Bearer expired-token"


# --- 4. 403 -------------------------------------------------------------------------------------------


def test_403_names_the_verb_resource_group_namespace_and_user(api: StandIn, tmp_path: Path) -> None:
    submitted(api, tmp_path)
    api.deny("get", "trainjobs", "ml-dev")
    err = failed(("status", *RUN), "TS717")
    assert (
        'not allowed to read TrainJob ml-dev/ddp-ckpt: user "dev@example.com" may not get trainjobs in API group '
        "trainer.kubeflow.org in namespace ml-dev"
    ) in err
    assert "check with: kubectl auth can-i get trainjobs.trainer.kubeflow.org -n ml-dev." in hint(err)
    assert '{apiGroups: ["trainer.kubeflow.org"], resources: ["trainjobs"], verbs: ["get"]}' in hint(err)


def test_403_on_apply_is_located_at_the_spec(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    api.deny("patch", "persistentvolumeclaims")
    spec = write_job(tmp_path)
    err = failed(("submit", spec, "--no-project"), "TS717")
    assert f"{spec}:" in err.split("error[TS717]")[0]
    assert "kubectl auth can-i patch persistentvolumeclaims -n ml-dev" in hint(err)


def test_403_listing_every_namespace_is_at_the_cluster_scope(api: StandIn) -> None:
    api.deny("list", "trainjobs")
    err = failed(("list", "-A"), "TS717")
    assert "may not list trainjobs in API group trainer.kubeflow.org at the cluster scope" in err
    assert "--all-namespaces" in hint(err) and "kubectl create clusterrole" in hint(err)


def test_403_on_later_calls_of_logs_and_status_watch(api: StandIn, tmp_path: Path) -> None:
    submitted(api, tmp_path)
    api.deny("list", "pods")
    err = failed(("logs", *RUN), "TS717")
    assert "list the pods of TrainJob ml-dev/ddp-ckpt" in err and "may not list pods in namespace ml-dev" in err
    api.denied.clear()
    api.deny("watch", "trainjobs")
    err = failed(("status", *RUN, "--watch"), "TS717")
    assert "not allowed to watch TrainJob ml-dev/ddp-ckpt" in err and "kubectl auth can-i watch" in hint(err)


def test_a_watch_answered_by_a_proxy_page_is_named_not_a_defect(api: StandIn, tmp_path: Path) -> None:
    """A 200 whose body is HTML where the watch's event stream should be: TS724, not an internal error."""
    submitted(api, tmp_path)
    page = "<!DOCTYPE html><html><body><form>Sign in</form></body></html>"
    real = api._watch

    def login_page(plural: str, ns: str, query: dict[str, str]) -> str:
        return page if plural == "trainjobs" else real(plural, ns, query)

    api._watch = login_page  # type: ignore[method-assign]
    err = failed(("status", *RUN, "--watch"), "TS724")
    assert "did not answer like a Kubernetes API server to watch" in err, err


# --- 5. namespace missing -----------------------------------------------------------------------------


def test_submit_into_a_namespace_that_does_not_exist(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    api.declare_namespaces("ml-dev")
    spec = write_job(tmp_path, JOB_YAML.replace("namespace: ml-dev", "namespace: nosuchns"))
    err = failed(("submit", spec, "--no-project"), "TS720")
    assert f"{spec}:" in err.split("error[TS720]")[0]
    assert "namespace nosuchns does not exist in the cluster" in err
    assert "kubectl create namespace nosuchns" in hint(err)
    assert not api.trainjobs and not api.claims


def test_list_in_a_namespace_that_does_not_exist_is_an_error_not_an_empty_list(api: StandIn) -> None:
    api.declare_namespaces("ml-dev")
    err = failed(("list", "-n", "nosuchns"), "TS720")
    assert "namespace nosuchns does not exist" in err and "kubectl get namespaces" in hint(err)
    assert failed(("status", "-n", "nosuchns"), "TS720")
    assert failed(("status", "ddp-ckpt", "-n", "nosuchns"), "TS720")
    code, out, err = cli("list", "-n", "ml-dev")  # it exists and is empty
    assert code == 0 and out == "" and "no TrainJobs" in err
    api.deny("get", "namespaces")  # no right to read namespaces: no verdict on them
    code, _, err = cli("list", "-n", "nosuchns")
    assert code == 0 and "no TrainJobs" in err


# --- 6. CRD missing -----------------------------------------------------------------------------------


def test_without_the_trainjob_crd_every_command_says_so_not_no_trainjob(api: StandIn, tmp_path: Path) -> None:
    spec = submitted(api, tmp_path)
    api.remove_crds("trainjobs")
    for argv in (
        ("status", *RUN),
        ("cancel", *RUN),
        ("logs", *RUN),
        ("list", "-n", "ml-dev"),
        ("submit", spec, "--no-project"),
    ):
        err = failed(argv, "TS721")
        assert "the cluster does not serve TrainJob (trainer.kubeflow.org/v1alpha1)" in err, argv
        assert "CustomResourceDefinition trainjobs.trainer.kubeflow.org is not installed" in err
        assert "no TrainJob" not in err
        assert "install Kubeflow Trainer 2.3" in hint(err) and "oci://ghcr.io/kubeflow/charts/kubeflow-trainer" in hint(
            err
        )
    assert not api.sent("DELETE")


@pytest.mark.parametrize("legacy", [False, True], ids=["status-1.36", "page-not-found"])
def test_without_trainer_submit_says_so_not_that_the_runtime_is_missing(
    api: StandIn, tmp_path: Path, legacy: bool
) -> None:
    api.remove_crds("trainjobs", "clustertrainingruntimes", "trainingruntimes")
    api.legacy_not_found = legacy
    spec = write_job(tmp_path)
    err = failed(("submit", spec, "--no-project"), "TS721")
    assert "TS712" not in err and "does not exist in the cluster" not in err
    assert (
        "cannot read ClusterTrainingRuntime trainspec-torch: the cluster does not serve ClusterTrainingRuntime "
        "(trainer.kubeflow.org/v1alpha1): the CustomResourceDefinition clustertrainingruntimes.trainer.kubeflow.org "
        "is not installed"
    ) in err
    assert f"{spec}:" in err.split("error[TS721]")[0]
    assert not api.sent("PATCH")


def test_without_kueue_status_still_works(api: StandIn, tmp_path: Path) -> None:
    submitted(api, tmp_path)
    api.remove_crds("workloads")
    code, out, err = cli("status", *RUN)
    assert code == 0, err
    assert "ddp-ckpt" in out and api.sent("GET", "/workloads$")


# --- 7. object missing --------------------------------------------------------------------------------


def test_a_trainjob_that_does_not_exist(api: StandIn) -> None:
    err = failed(("status", "nope", "-n", "ml-dev"), "TS716")
    assert "cluster:" in err and "no TrainJob 'nope' in namespace ml-dev" in err
    assert "trainspec list -n ml-dev" in hint(err)


# --- 8. field-manager conflict ------------------------------------------------------------------------


def test_a_conflict_names_the_fields_and_the_other_manager(api: StandIn, tmp_path: Path) -> None:
    spec = submitted(api, tmp_path)
    from trainspec.kube.client import KubeApi

    other = {"activeDeadlineSeconds": 60, "trainer": {"numNodes": 3}}
    KubeApi.connect().apply(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "ddp-ckpt", "namespace": "ml-dev"},
            "spec": other,
        },
        manager="someone-else",
        force=True,
    )
    err = failed(("submit", spec, "--no-project"), "TS714")
    assert (
        'server-side apply conflict: .spec.activeDeadlineSeconds, .spec.trainer.numNodes owned by field manager "someone-else"'
        in err
    )
    assert "Apply failed with 2 conflicts" in err
    assert "--force-conflicts" in hint(err) and '"someone-else"' in hint(err)
    assert f"{spec}:14:" in err  # at spec.maxRunTime, where activeDeadlineSeconds comes from


# --- 9. objects being deleted -------------------------------------------------------------------------


def test_the_stand_in_keeps_an_applied_object_terminating_as_the_server_does(api: StandIn, tmp_path: Path) -> None:
    submitted(api, tmp_path)
    from trainspec.kube import errors, resources as R
    from trainspec.kube.client import KubeApi

    kube = KubeApi.connect()
    api.gc_immediately = False
    kube.delete(R.TRAINJOB, "ml-dev", "ddp-ckpt")
    again = kube.apply(api.sent("PATCH", "/trainjobs/")[-1].body)
    assert errors.being_deleted(again) and again["metadata"]["finalizers"] == ["foregroundDeletion"]


def test_cancel_of_a_job_already_being_deleted_says_so_and_waits(api: StandIn, tmp_path: Path) -> None:
    submitted(api, tmp_path)
    meta = api.trainjobs[("ml-dev", "ddp-ckpt")]["metadata"]  # a finalizer holds it: a controller's turn
    meta |= {"deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["example.com/cleanup"]}
    code, out, err = cli("cancel", *RUN, "--poll-seconds", "0")
    assert code == 0, err
    assert "TrainJob ml-dev/ddp-ckpt was already being deleted (since 2026-01-01T00:00:00Z)" in err
    assert "deleted (foreground" in out and not api.trainjobs


# --- 10. 422 ------------------------------------------------------------------------------------------


def test_422_is_verbatim_and_placed_at_the_spec_field(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    api.invalid("/trainjobs/ddp-ckpt$", NUM_NODES)
    spec = write_job(tmp_path)
    err = failed(("submit", spec, "--no-project"), "TS714")
    assert (
        'TrainJob.trainer.kubeflow.org "ddp-ckpt" is invalid: spec.trainer.numNodes: Invalid value: -1: '
        "spec.trainer.numNodes in body should be greater than or equal to 0"
    ) in err
    line = JOB_YAML.splitlines().index("  nodes: 2") + 1
    assert f"{spec}:{line}:10: error[TS714]: spec.nodes: " in err
    assert "[spec.trainer.numNodes from spec.nodes]" in err


# --- 11. throttling and failures after retries ----------------------------------------------------------


def test_throttling_after_retries(api: StandIn, tmp_path: Path) -> None:
    submitted(api, tmp_path)
    api.fail("GET", "/trainjobs/ddp-ckpt$", *[429] * 20)  # 5 attempts, each tried 4 times by urllib3
    err = failed(("status", *RUN), "TS723")
    assert "kept throttling the requests to read TrainJob ml-dev/ddp-ckpt (HTTP 429, Retry-After 1s)" in err
    assert (
        "gave up after 5 attempts over " in err and "the last answer: Too many requests, please try again later." in err
    )
    assert err.count("retrying") == 4 and "retry later" in hint(err)


def test_server_failures_after_retries(api: StandIn, tmp_path: Path) -> None:
    submitted(api, tmp_path)
    api.fail("GET", "/trainjobs/ddp-ckpt$", *[503] * 20)
    err = failed(("cancel", *RUN), "TS723")
    assert "the API server failed to read TrainJob ml-dev/ddp-ckpt (HTTP 503 Service Unavailable)" in err
    assert "the request has been made before all known HTTP paths have been installed" in err
    assert "/readyz" in hint(err) and not api.sent("DELETE")


# --- no command prints a traceback, whatever the answer ----------------------------------------------------

COMMANDS = {
    "submit": ("submit", "{spec}", "--no-project"),
    "status": ("status", *RUN),
    "list": ("list", "-n", "ml-dev"),
    "logs": ("logs", *RUN),
    "cancel": ("cancel", *RUN, "--poll-seconds", "0", "--timeout", "1"),
}
STATUSES = [400, 401, 403, 404, 405, 409, 410, 415, 422, 429, 500, 502, 503, 504]
ODD = [
    (200, "<!DOCTYPE html><html><body><form>Sign in</form></body></html>", "html"),
    (200, "", "text"),
    (200, "not json {", "text"),
    (401, "", "text"),
    (403, "<html><body>Forbidden by the proxy</body></html>", "html"),
    (404, "<html><body>Not Found</body></html>", "html"),
    (500, "", "text"),
    (503, "upstream connect error or disconnect/reset before headers", "text"),
]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("fault", [*STATUSES, *[f"{c}-{k}-{i}" for i, (c, _, k) in enumerate(ODD)], "reset"], ids=str)
def test_no_traceback_for_any_answer(api: StandIn, tmp_path: Path, command: str, fault: int | str) -> None:
    api.add_cluster_runtime("trainspec-torch")
    spec = write_job(tmp_path)
    for method in ("GET", "PATCH", "DELETE"):
        for _ in range(200):  # every request from now on
            if isinstance(fault, int) or fault == "reset":
                api.fail(method, "", fault)
            else:
                code, payload, kind = ODD[int(fault.rsplit("-", 1)[1])]
                api.answer(method, "", code, payload, kind)
    argv = tuple(a.format(spec=spec) for a in COMMANDS[command])
    status, _, err = cli(*argv)
    assert status == 1, err
    assert "Traceback" not in err and "internal error" not in err
    assert "error[TS7" in err and "  hint: " in err
