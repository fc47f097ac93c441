"""A loopback HTTPS stand-in for Kubeflow Trainer's TrainJob status endpoint (tests only).

It answers as the controller's status server does (``pkg/statusserver`` upstream): ``POST
/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status`` with
``Authorization: Bearer <token>``; 403 with a ``metav1.Status`` for another token, 404 for other
paths, 422 for a body that is not JSON, 200 with the payload otherwise. It records every request
so tests check the path, headers and body themselves (against the shipped TrainJob CRD's
``status.trainerStatus`` schema).

The certificate is self-signed for ``127.0.0.1``/``localhost``, made with the ``cryptography``
package (a test dependency), else the ``openssl`` command; with neither the tests skip, except
under ``CI=true`` where they fail.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

STATUS_PATH = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status"


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """``(cert.pem, key.pem)``: a self-signed CA-capable certificate for 127.0.0.1 and localhost."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    try:
        _with_cryptography(cert, key)
        return cert, key
    except ImportError:
        pass
    if shutil.which("openssl"):
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout",
                str(key),
                "-out",
                str(cert),
            ],
            check=True,
            capture_output=True,
        )
        return cert, key
    if os.environ.get("CI") == "true":
        pytest.fail("neither the cryptography package nor openssl is available to make a test certificate")
    pytest.skip("neither the cryptography package nor openssl is available to make a test certificate")


def _with_cryptography(cert_path: Path, key_path: Path) -> None:
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class StatusStandIn:
    """The running stand-in: ``url`` to post to, ``requests`` seen, the tokens it accepts."""

    url: str
    ca_file: Path
    tokens: set[str]
    requests: list[Received] = field(default_factory=list)
    #: When set, every request is answered with this status code (a failing controller).
    fail_with: int | None = None
    server: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def posts(self) -> list[Received]:
        with self.lock:
            return list(self.requests)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start(
    directory: Path, *, namespace: str = "ml-dev", name: str = "train-ddp", tokens: set[str] | None = None
) -> StatusStandIn:
    """Start the stand-in on a free loopback port, serving TLS with a fresh certificate."""
    cert, key = make_certificate(directory)
    expected_path = STATUS_PATH.format(ns=namespace, name=name)
    standin = StatusStandIn("", cert, set(tokens or {"token-1"}))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(min(length, 1 << 16))
            with standin.lock:
                standin.requests.append(Received("POST", self.path, dict(self.headers.items()), body))
            if standin.fail_with is not None:
                return self._status(standin.fail_with, "Internal error", "InternalError")
            if self.path != expected_path:
                return self._status(404, "Not found", "NotFound")
            auth = self.headers.get("Authorization", "").split()
            if len(auth) != 2 or auth[0].lower() != "bearer" or auth[1] not in standin.tokens:
                return self._status(403, "Forbidden", "Forbidden")
            try:
                json.loads(body)
            except ValueError:
                return self._status(422, "Invalid payload", "Invalid")
            self._answer(200, body)

        def do_GET(self) -> None:
            self._status(404, "Not found", "NotFound")

        def _status(self, code: int, message: str, reason: str) -> None:
            self._answer(
                code,
                json.dumps(
                    {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "message": message,
                        "reason": reason,
                        "code": code,
                    }
                ).encode(),
            )

        def _answer(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    standin.server = server
    standin.url = f"https://127.0.0.1:{server.server_address[1]}{expected_path}"
    return standin
