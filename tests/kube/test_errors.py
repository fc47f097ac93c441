"""The classifier of cluster failures (trainspec.kube.errors), without a server.

Every answer below is what kube-apiserver 1.36 sends (built by tests/kfp/kube_answers.py, the
stand-in's source, or copied from shared/apiserver-verdicts), put into the client's own exception
types: ``ApiException`` for an answer, urllib3's errors for the transport.
"""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

import kube_answers as A
import urllib3
from kubernetes.client.exceptions import ApiException

from trainspec.compiler.provenance import Location
from trainspec.kube import errors as E

TJ = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml-dev/trainjobs/ddp-cpu"
TJS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml-dev/trainjobs"


def answer(found: tuple, path: str = TJ, method: str = "GET", reason: str = "") -> ApiException:
    """The exception the client raises for a kube_answers answer to ``method path``."""
    code, payload, kind, headers = found
    exc = ApiException(status=code, reason=reason or "Error")
    exc.body = json.dumps(payload) if kind == "json" else payload
    exc.headers, exc.method, exc.path = headers, method, path
    return exc


def ctx(what: str = "read TrainJob ml-dev/ddp-cpu", **kwargs: Any) -> E.Context:
    return E.Context(what, "cluster:kind-ml", server="https://10.0.0.1:6443", context="kind-ml", **kwargs)


def classify(exc: BaseException, **kwargs: Any) -> Any:
    found = E.classify(exc, ctx(**kwargs))
    assert found is not None and found.hint and found.message
    assert found.file and found.line and found.column  # every diagnostic is located
    return found


# --- no answer: the kubeconfig, the network, TLS -------------------------------------------------


def _kubeconfig_error(tmp_path: Path, text: str | None, context: str | None = None) -> tuple[Exception, str]:
    from kubernetes import client, config

    path = tmp_path / "config"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    try:
        config.load_kube_config(config_file=str(path), context=context, client_configuration=client.Configuration())
    except Exception as exc:
        return exc, str(path)
    raise AssertionError("the kubeconfig loaded")


CONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: kind-ml, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
"""


@pytest.mark.parametrize(
    ("text", "context", "says"),
    [
        (None, None, "no kubeconfig: {file} does not exist"),
        ("", None, "the kubeconfig {file} is empty"),
        (CONFIG, None, "the kubeconfig {file} has no current context"),
        (CONFIG + "current-context: kind-ml\n", "nope", "the kubeconfig {file} has no context 'nope' (--context)"),
        (CONFIG + "current-context: gone\n", None, "the current context 'gone' of {file} is not among its contexts"),
        (
            CONFIG.replace("cluster: c,", "cluster: other,") + "current-context: kind-ml\n",
            None,
            "names cluster 'other'",
        ),
    ],
)
def test_a_kubeconfig_problem_names_the_file_and_what_is_missing(
    tmp_path: Path, text: str | None, context: str | None, says: str
) -> None:
    exc, file = _kubeconfig_error(tmp_path, text, context)
    found = E.kubeconfig_diagnostic(exc, [file], context)
    assert found.code == "TS711" and found.file == file
    assert says.format(file=file) in found.message
    assert found.hint is not None
    assert all(word in found.hint for word in ("kubectl config get-contexts", "--context", "TRAINSPEC_KUBE_API"))


def test_a_kubeconfig_that_is_not_yaml_is_located_at_the_syntax_error(tmp_path: Path) -> None:
    exc, file = _kubeconfig_error(tmp_path, "apiVersion: v1\nclusters: [\n")
    found = E.kubeconfig_diagnostic(exc, [file], None)
    assert (found.code, found.file, found.line) == ("TS711", file, 3)
    assert "is not valid YAML" in found.message


def _unreachable(reason: Exception) -> urllib3.exceptions.MaxRetryError:
    pool = urllib3.HTTPSConnectionPool("10.0.0.1", 6443)
    return urllib3.exceptions.MaxRetryError(pool, TJ, reason=reason)


def test_tls_and_the_network_are_told_apart() -> None:
    conn = urllib3.connection.HTTPSConnection("10.0.0.1", 6443)
    refused = _unreachable(urllib3.exceptions.NewConnectionError(conn, "[Errno 111] Connection refused"))
    dns = _unreachable(
        urllib3.exceptions.NameResolutionError("nosuch.example", conn, OSError("Name or service not known"))
    )
    slow = _unreachable(urllib3.exceptions.ConnectTimeoutError(conn, "timed out"))
    closed = urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset by peer"))
    verify = ssl.SSLCertVerificationError(
        1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate"
    )
    tls = _unreachable(urllib3.exceptions.SSLError(verify))
    said = {
        name: classify(exc)
        for name, exc in {"refused": refused, "dns": dns, "slow": slow, "closed": closed, "tls": tls}.items()
    }
    assert {name: d.code for name, d in said.items()} == {
        "refused": "TS711",
        "dns": "TS711",
        "slow": "TS711",
        "closed": "TS711",
        "tls": "TS718",
    }
    assert "connection refused" in said["refused"].message and "https://10.0.0.1:6443" in said["refused"].message
    assert "does not resolve (DNS)" in said["dns"].message
    assert "timed out" in said["slow"].message
    assert "closed before an answer" in said["closed"].message
    assert all("kubectl cluster-info" in said[n].hint for n in ("refused", "dns", "slow", "closed"))
    assert "certificate verify failed: self-signed certificate" not in said["refused"].message
    assert "self-signed certificate" in said["tls"].message
    assert all(w in said["tls"].hint for w in ("certificate-authority", "insecure-skip-tls-verify"))
    assert "cluster-info" not in said["tls"].hint


def test_retries_are_counted_for_the_network() -> None:
    refused = _unreachable(ConnectionRefusedError(111, "Connection refused"))
    found = classify(E.GaveUp(refused, 5, 7.25))
    assert found.code == "TS711" and "(5 attempts over 7.2s)" in found.message


@pytest.mark.parametrize(
    "defect", [TypeError("call_api() got an unexpected keyword"), AttributeError("x"), ValueError("y"), KeyError("z")]
)
def test_what_is_neither_an_answer_nor_the_network_is_a_defect(defect: Exception) -> None:
    assert E.classify(defect, ctx()) is None


# --- 401, 403 --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("auth", "says"),
    [
        ("token", "log in again"),
        ("certificate", "client certificate"),
        ("url", "kubectl proxy"),
        ("", "no credentials"),
    ],
)
def test_401_is_credentials_not_rbac(auth: str, says: str) -> None:
    found = classify(answer(A.unauthorized()), auth=auth)
    assert found.code == "TS719" and "HTTP 401 Unauthorized" in found.message and "kind-ml" in found.message
    assert says in found.hint and "not RBAC" in found.hint and "kubectl auth whoami" in found.hint


def test_403_names_who_lacks_which_verb_on_what_and_the_rule() -> None:
    found = classify(
        answer(A.forbidden("dev@example.com", "get", "trainer.kubeflow.org", "trainjobs", "", "ml-dev", "x"))
    )
    assert found.code == "TS717"
    assert (
        'user "dev@example.com" may not get trainjobs in API group trainer.kubeflow.org in namespace ml-dev'
        in found.message
    )
    assert "kubectl auth can-i get trainjobs.trainer.kubeflow.org -n ml-dev" in found.hint
    assert '{apiGroups: ["trainer.kubeflow.org"], resources: ["trainjobs"], verbs: ["get"]}' in found.hint
    assert (
        "kubectl create role trainspec-get-trainjobs --verb=get --resource=trainjobs.trainer.kubeflow.org -n ml-dev"
        in found.hint
    )
    assert "--user=dev@example.com" in found.hint


def test_403_of_a_subresource_a_service_account_and_the_cluster_scope() -> None:
    logs = classify(
        answer(A.forbidden("system:serviceaccount:ml-dev:runner", "get", "", "pods", "log", "ml-dev", "p0"))
    )
    assert "may not get pods/log in namespace ml-dev" in logs.message
    assert "kubectl auth can-i get pods --subresource=log -n ml-dev" in logs.hint
    assert "--serviceaccount=ml-dev:runner" in logs.hint and 'apiGroups: [""]' in logs.hint
    every = classify(answer(A.forbidden("dev@example.com", "list", "trainer.kubeflow.org", "trainjobs", "", "", "")))
    assert "at the cluster scope" in every.message
    assert "--all-namespaces" in every.hint and "kubectl create clusterrole" in every.hint


def test_403_that_is_not_rbac_is_a_refusal_of_the_object() -> None:
    webhook = A.status(
        403, 'admission webhook "vtrainjob.trainer.kubeflow.org" denied the request: runtime "x" not found', "Forbidden"
    )
    found = classify(answer((403, webhook, "json", {}), method="PATCH"), what="apply trainjob/ml-dev/ddp-cpu")
    assert found.code == "TS714" and 'admission webhook "vtrainjob.trainer.kubeflow.org" denied' in found.message
    quota = A.status(
        403,
        'persistentvolumeclaims "ckpt" is forbidden: exceeded quota: storage, requested: requests.storage=10Gi, '
        "used: requests.storage=95Gi, limited: requests.storage=100Gi",
        "Forbidden",
    )
    assert "ResourceQuota" in classify(answer((403, quota, "json", {}))).hint
    ending = A.status(
        403,
        'trainjobs.trainer.kubeflow.org "ddp-cpu" is forbidden: unable to create new content in namespace ml-dev '
        "because it is being terminated",
        "Forbidden",
        {"causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace"}]},
    )
    found = classify(answer((403, ending, "json", {})))
    assert found.code == "TS720" and "namespace ml-dev is being deleted" in found.message


# --- 404: namespace, object, resource type ----------------------------------------------------------


def test_a_namespace_that_does_not_exist() -> None:
    found = classify(answer(A.namespace_not_found("nosuchns"), method="PATCH"), what="apply trainjob/nosuchns/x")
    assert found.code == "TS720" and "namespace nosuchns does not exist" in found.message
    assert "kubectl create namespace nosuchns" in found.hint


def test_an_object_that_does_not_exist() -> None:
    found = classify(answer(A.not_found("trainer.kubeflow.org", "trainjobs", "ddp-cpu")))
    assert found.code == "TS716" and found.message == "no TrainJob 'ddp-cpu' in namespace ml-dev"
    assert "trainspec list -n ml-dev" in found.hint


@pytest.mark.parametrize("legacy", [False, True], ids=["status-1.36", "page-not-found"])
def test_a_resource_type_the_cluster_does_not_serve(legacy: bool) -> None:
    found = classify(answer(A.not_served(legacy_text=legacy)))
    assert found.code == "TS721"
    assert "the cluster does not serve TrainJob (trainer.kubeflow.org/v1alpha1)" in found.message
    assert "CustomResourceDefinition trainjobs.trainer.kubeflow.org is not installed" in found.message
    assert "install Kubeflow Trainer 2.3" in found.hint and "kubeflow-trainer --version 2.3.0" in found.hint
    assert "kubectl api-resources --api-group=trainer.kubeflow.org" in found.hint
    kueue = classify(answer(A.not_served(), path="/apis/kueue.x-k8s.io/v1beta2/namespaces/ml-dev/workloads"))
    assert "Workload (kueue.x-k8s.io/v1beta2)" in kueue.message and "install Kueue 0.19" in kueue.hint
    monitor = classify(answer(A.not_served(), path="/apis/monitoring.coreos.com/v1/namespaces/ml-dev/podmonitors/x"))
    assert "podmonitors.monitoring.coreos.com is not installed" in monitor.message
    assert "install the Prometheus Operator:" in monitor.hint  # no Trainer version for another product


def _discovery(answers: dict[str, Any]) -> Any:
    def probe(path: str) -> Any:
        if path in answers:
            return answers[path]
        raise answer(A.not_served(), path=path)

    return probe


def test_discovery_decides_an_ambiguous_404_and_names_the_versions_served() -> None:
    plain = answer((404, "404 page not found\n", "text", {}))
    listing = {"kind": "APIResourceList", "resources": [{"name": "trainjobs"}]}
    served = _discovery({"/apis/trainer.kubeflow.org/v1alpha1": listing})
    assert classify(plain, probe=served).code == "TS716"  # the type is served: the object is missing
    v1 = _discovery({"/apis/trainer.kubeflow.org": {"kind": "APIGroup", "versions": [{"version": "v1"}]}})
    found = classify(plain, probe=v1)
    assert found.code == "TS721" and "it serves trainer.kubeflow.org in version v1 only, not v1alpha1" in found.message
    assert "not the version trainspec targets" in found.hint
    empty = _discovery({"/apis/trainer.kubeflow.org/v1alpha1": {"kind": "APIResourceList", "resources": []}})
    assert classify(plain, probe=empty).code == "TS721"


def test_get_or_none_tells_a_missing_object_from_a_missing_crd() -> None:
    from trainspec.kube import resources as R

    class Kube:
        def __init__(self, found: tuple) -> None:
            self.found = found

        def request(self, method: str, path: str) -> Any:
            if path.startswith("/apis/trainer.kubeflow.org/v1alpha1/") and path.count("/") > 4:
                raise answer(self.found, path=path)
            raise answer(A.not_served(), path=path)  # discovery: nothing served

    assert (
        E.get_or_none(
            Kube(A.not_found("trainer.kubeflow.org", "trainjobs", "ddp-cpu")), R.TRAINJOB, "ml-dev", "ddp-cpu"
        )
        is None
    )
    with pytest.raises(ApiException):
        E.get_or_none(Kube(A.not_served()), R.TRAINJOB, "ml-dev", "ddp-cpu")


# --- 409, 422, 500 -----------------------------------------------------------------------------------


def test_an_apply_conflict_names_the_fields_and_the_other_managers() -> None:
    clash = A.apply_conflict(
        [
            ("kueue-admission", ".spec.suspend"),
            ("someone-else", ".spec.activeDeadlineSeconds"),
            ("someone-else", ".spec.trainer.numNodes"),
        ]
    )
    found = classify(answer(clash, method="PATCH"), what="apply trainjob.trainer.kubeflow.org/ml-dev/ddp-cpu")
    assert found.code == "TS714" and found.path == "spec.suspend"
    assert '.spec.suspend owned by field manager "kueue-admission"' in found.message
    assert '.spec.activeDeadlineSeconds, .spec.trainer.numNodes owned by field manager "someone-else"' in found.message
    assert "Apply failed with 3 conflicts" in found.message
    assert "--force-conflicts" in found.hint and '"kueue-admission" and "someone-else"' in found.hint
    assert "kubectl get trainjobs.trainer.kubeflow.org ddp-cpu -n ml-dev --show-managed-fields" in found.hint


def test_other_409s_are_not_conflicts_of_fields() -> None:
    modified = classify(answer(A.modified("trainer.kubeflow.org", "trainjobs", "ddp-cpu"), method="PUT"))
    assert modified.code == "TS714" and "--force-conflicts" not in modified.hint
    exists = A.status(
        409,
        'object is being deleted: trainjobs.trainer.kubeflow.org "ddp-cpu" already exists',
        "AlreadyExists",
        {"name": "ddp-cpu", "group": "trainer.kubeflow.org", "kind": "trainjobs"},
    )
    deleting = classify(answer((409, exists, "json", {}), method="POST"))
    assert deleting.code == "TS722" and "trainspec cancel ddp-cpu -n ml-dev" in deleting.hint
    plain = A.status(
        409, 'trainjobs.trainer.kubeflow.org "ddp-cpu" already exists', "AlreadyExists", {"name": "ddp-cpu"}
    )
    assert classify(answer((409, plain, "json", {}), method="POST")).code == "TS714"


def test_an_object_being_deleted() -> None:
    job = {
        "kind": "TrainJob",
        "metadata": {
            "name": "ddp-cpu",
            "namespace": "ml-dev",
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": ["foregroundDeletion"],
        },
    }
    assert E.being_deleted(job) and not E.being_deleted({"metadata": {"name": "x"}}) and not E.being_deleted(None)
    found = E.deleting_diagnostic(job, file="job.yaml", line=3, column=1)
    assert (found.code, found.file, found.line) == ("TS722", "job.yaml", 3)
    assert (
        "TrainJob ml-dev/ddp-cpu is being deleted (since 2026-01-01T00:00:00Z; finalizers: foregroundDeletion)"
        in found.message
    )
    assert "trainspec cancel ddp-cpu -n ml-dev" in found.hint
    finalizers = A.invalid(
        "TrainJob",
        "trainer.kubeflow.org",
        "ddp-cpu",
        [
            (
                "FieldValueForbidden",
                "metadata.finalizers",
                'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"x"}',
            )
        ],
    )
    assert classify(answer(finalizers, method="PATCH")).code == "TS722"


NUM_NODES = (
    "FieldValueInvalid",
    "spec.trainer.numNodes",
    "Invalid value: -1: spec.trainer.numNodes in body should be greater than or equal to 0",
)
IMAGE = ("FieldValueTooLong", "spec.trainer.image", "Too long: may not be more than 500 bytes")


def test_422_is_the_servers_message_with_the_manifests_fields() -> None:
    found = classify(
        answer(A.invalid("TrainJob", "trainer.kubeflow.org", "ddp-cpu", [NUM_NODES, IMAGE]), method="PATCH"),
        what="apply it",
    )
    assert found.code == "TS714" and found.path == "spec.trainer.numNodes"
    assert found.message == (
        'the API server refused to apply it: TrainJob.trainer.kubeflow.org "ddp-cpu" is invalid: '
        "[spec.trainer.numNodes: Invalid value: -1: spec.trainer.numNodes in body should be greater than or equal to 0, "
        "spec.trainer.image: Too long: may not be more than 500 bytes] "
        "[the manifest's fields spec.trainer.numNodes, spec.trainer.image]"
    )


class Sources:
    """A FieldSources stand-in: manifest path -> where in the spec (as provenance records them)."""

    def __init__(self, table: dict[tuple, Location]) -> None:
        self.table = table

    def lookup(self, path: tuple) -> Any:
        for end in range(len(path), 0, -1):
            if path[:end] in self.table:
                where = self.table[path[:end]]
                return type("Ref", (), {"location": lambda self, w=where: w})()
        return None


def test_422_fields_are_placed_at_the_spec_fields_they_came_from() -> None:
    sources = Sources(
        {
            ("spec", "trainer", "numNodes"): Location("job.yaml", 9, 10, "spec.nodes"),
            ("spec", "trainer", "image"): Location("job.yaml", 7, 10, "spec.image"),
        }
    )
    found = classify(
        answer(A.invalid("TrainJob", "trainer.kubeflow.org", "ddp-cpu", [NUM_NODES, IMAGE]), method="PATCH"),
        sources=sources,
    )
    assert (found.file, found.line, found.column, found.path) == ("job.yaml", 9, 10, "spec.nodes")
    assert "[spec.trainer.numNodes from spec.nodes, spec.trainer.image from spec.image]" in found.message
    assert [(r.file, r.line) for r in found.related] == [("job.yaml", 7)]


def test_a_nil_field_is_read_from_the_end_of_its_text() -> None:
    int32 = (
        "FieldValueInvalid",
        "<nil>",
        'Invalid value: "": Checked value must be of type integer with format int32 in spec.trainer.numNodes',
    )
    found = classify(answer(A.invalid("TrainJob", "trainer.kubeflow.org", "ddp-cpu", [int32]), method="PATCH"))
    assert found.path == "spec.trainer.numNodes"


@pytest.mark.parametrize(
    ("message", "path"),
    [  # messages verbatim from kube-apiserver 1.36.2 (shared/apiserver-verdicts)
        (
            (
                "failed to create typed patch object (ml-dev/ddp-cpu; trainer.kubeflow.org/v1alpha1, Kind=TrainJob): "
                ".spec.trainer.gpus: field not declared in schema"
            ),
            "spec.trainer.gpus",
        ),
        (
            (
                'TrainJob.trainer.kubeflow.org "ddp-cpu" is invalid: spec.activeDeadlineSeconds: Invalid value: 0: '
                "spec.activeDeadlineSeconds in body should be greater than or equal to 1"
            ),
            "spec.activeDeadlineSeconds",
        ),
        (
            (
                'TrainJob.trainer.kubeflow.org "ddp-cpu" is invalid: <nil>: Invalid value: "": Checked value must be of '
                "type integer with format int32 in spec.trainer.numNodes"
            ),
            "spec.trainer.numNodes",
        ),
        (
            'PersistentVolumeClaim "ckpt" is invalid: spec.accessModes: Required value: at least 1 access mode is required',
            "spec.accessModes",
        ),
    ],
)
def test_rejected_path(message: str, path: str) -> None:
    assert E.rejected_path(message) == path


def test_strict_applys_unknown_field_stays_a_rejection_not_server_trouble() -> None:
    body = A.status(
        500,
        "failed to create typed patch object (ml-dev/ddp-cpu; trainer.kubeflow.org/v1alpha1, Kind=TrainJob): "
        ".spec.trainer.gpus: field not declared in schema",
    )
    found = classify(answer((500, body, "json", {}), method="PATCH"))
    assert found.code == "TS714" and found.path == "spec.trainer.gpus"


# --- throttling and failures after retries; answers that are not the API's ---------------------------


def test_throttling_after_retries_says_how_often_how_long_and_the_last_words() -> None:
    found = classify(E.GaveUp(answer(A.throttled(), reason="Too Many Requests"), 5, 7.25))
    assert found.code == "TS723"
    assert "kept throttling the requests to read TrainJob ml-dev/ddp-cpu (HTTP 429, Retry-After 1s)" in found.message
    assert "gave up after 5 attempts over 7.2s" in found.message
    assert found.message.endswith("the last answer: Too many requests, please try again later.")
    assert "retry later" in found.hint and "flowschemas" in found.hint


@pytest.mark.parametrize("code", [500, 502, 503, 504])
def test_server_failures_after_retries(code: int) -> None:
    found = classify(E.GaveUp(answer(A.failure(code), reason="Server Error"), 3, 1.5))
    assert (
        found.code == "TS723"
        and f"HTTP {code} Server Error" in found.message
        and "3 attempts over 1.5s" in found.message
    )
    assert "/readyz" in found.hint
    assert "<html>" not in found.message  # a proxy's page is shown as its text


def test_a_failing_admission_webhook_is_named() -> None:
    text = (
        'failed calling webhook "mtrainjob.trainer.kubeflow.org": failed to call webhook: Post '
        '"https://kubeflow-trainer-controller-manager.kubeflow-system.svc:443/mutate?timeout=10s": connect: connection refused'
    )
    found = classify(
        answer((500, A.status(500, f"Internal error occurred: {text}", "InternalError"), "json", {}), method="PATCH")
    )
    assert found.code == "TS723" and "admission webhook mtrainjob.trainer.kubeflow.org does not answer" in found.hint


@pytest.mark.parametrize(
    ("code", "payload", "kind"),
    [
        (200, "<!DOCTYPE html><html><body>Sign in</body></html>", "html"),
        (200, "", "text"),
        (404, "<html><body>Not Found</body></html>", "html"),
    ],
)
def test_an_answer_that_is_not_the_kubernetes_apis(code: int, payload: str, kind: str) -> None:
    found = classify(answer((code, payload, kind, {})))
    assert found.code == "TS724" and "did not answer like a Kubernetes API server" in found.message
    assert "TRAINSPEC_KUBE_API" in found.hint
