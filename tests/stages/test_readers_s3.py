"""Readers over index-mode shards on S3: ranged reads only, and an overwritten object is refused.

Uses the loopback moto server of test_stage_s3.py, reached through a byte-counting TCP proxy,
so "a reader fetches about its own range" is measured on the wire, not taken from the reader.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from readers_testlib import index_manifest, rank_env, write_manifest
from test_stage_s3 import BUCKET, CREDS, s3  # noqa: F401  # the module's moto server fixture

from trainspec.stages import SourceChangedError, open_shard

KEY = "readers/big.jsonl"
SHARDS = 16


class _Counter:
    def __init__(self) -> None:
        self.down = 0
        self.lock = threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.down += n


def _pipe(src: socket.socket, dst: socket.socket, count: _Counter | None) -> None:
    try:
        while data := src.recv(65536):
            if count is not None:
                count.add(len(data))
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def proxy(s3: tuple[str, Any]) -> Iterator[tuple[str, _Counter]]:  # noqa: F811
    """A loopback proxy in front of the moto server that counts the bytes the server sends."""
    endpoint, _ = s3
    host, port = endpoint.removeprefix("http://").split(":")
    counter = _Counter()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            upstream = socket.create_connection((host, int(port)))
            back = threading.Thread(target=_pipe, args=(upstream, self.request, counter), daemon=True)
            back.start()
            _pipe(self.request, upstream, None)
            back.join()
            upstream.close()

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", counter
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def creds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in {
        **CREDS,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
    }.items():
        monkeypatch.setenv(name, value)


def _content() -> bytes:
    return b"".join(json.dumps({"id": i, "pad": "x" * 40}).encode() + b"\n" for i in range(20_000))


def _indexed(tmp_path: Path, client: Any, endpoint: str, body: bytes) -> tuple[Path, dict[str, str]]:
    import s3fs

    client.put_object(Bucket=BUCKET, Key=KEY, Body=body)
    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": endpoint}, skip_instance_cache=True)
    info = fs.info(f"{BUCKET}/{KEY}")
    entry = {
        "path": f"s3://{BUCKET}/{KEY}",
        "rel": "big.jsonl",
        "size": len(body),
        "mtime_ns": None,
        "etag": str(info["ETag"]),
        "checksum": None,
    }
    data = tmp_path / "dataset"
    write_manifest(data, index_manifest([entry], [body], SHARDS))
    return data, {"TRAINSPEC_S3_ENDPOINT": endpoint}


def test_a_reader_fetches_about_its_own_range(
    s3: tuple[str, Any],  # noqa: F811
    proxy: tuple[str, _Counter],
    creds: None,
    tmp_path: Path,
) -> None:
    endpoint, client = s3
    via, counter = proxy
    body = _content()
    data, extra = _indexed(tmp_path, client, endpoint, body)
    records = body.split(b"\n")[:-1]
    per_shard = len(records) // SHARDS
    counter.down = 0
    env = {**rank_env(data, 5, SHARDS), **extra, "TRAINSPEC_S3_ENDPOINT": via}
    with open_shard(data, env) as reader:
        got = list(reader.records())
        resumed = list(reader.records(start=per_shard - 3))
    assert got == records[5 * per_shard : 6 * per_shard]
    assert resumed == got[-3:]
    shard_bytes = sum(len(r) + 1 for r in got)
    assert len(body) > 10 * shard_bytes
    # Two passes over the shard (read, then resume) plus HTTP headers and one metadata request:
    # about 2x the range, never the object (16x).
    assert counter.down < 2 * shard_bytes + 32 * 1024, (counter.down, shard_bytes, len(body))


def test_an_overwritten_object_is_refused(s3: tuple[str, Any], creds: None, tmp_path: Path) -> None:  # noqa: F811
    endpoint, client = s3
    body = _content()
    data, extra = _indexed(tmp_path, client, endpoint, body)
    client.put_object(Bucket=BUCKET, Key=KEY, Body=body.replace(b'"id": 7,', b'"id": 8,'))  # same size
    with pytest.raises(SourceChangedError, match=rf"s3://{BUCKET}/{KEY} changed .*ETag"):
        open_shard(data, {**rank_env(data, 0, SHARDS), **extra})
