"""S3 sources against a real S3-compatible server (moto in server mode) on loopback.

The stage runs as a subprocess and talks HTTP to the server through s3fs/botocore, exactly
as in a pod; credentials exist only in that subprocess's environment. The server counts the
body bytes it sends per object key, so tests can bound what a run downloads.
"""

from __future__ import annotations

import io
import json
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from stage_testlib import read_manifest, run_stage, shard_lines, verify_manifest

pytest.importorskip("s3fs")
boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

BUCKET = "trainspec-test"
CREDS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


#: Body bytes the server sent, per request path ("/bucket/key").
SENT: Counter[str] = Counter()
_SENT_LOCK = threading.Lock()


class _CountingApp:
    """WSGI middleware: counts the response body bytes of every request, by path."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        for chunk in self.app(environ, start_response):
            with _SENT_LOCK:
                SENT[path] += len(chunk)
            yield chunk


class _CountingServer(moto_server.ThreadedMotoServer):  # type: ignore[misc]
    def _server_entry(self) -> None:
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication,
            create_backend_app,
        )
        from moto.server import MotoRequestHandler  # type: ignore[attr-defined]
        from werkzeug.serving import make_server

        app = _CountingApp(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    server = _CountingServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=BUCKET)
    lines = [json.dumps({"id": i}) for i in range(40)]
    client.put_object(Bucket=BUCKET, Key="data/part-0.jsonl", Body=("\n".join(lines[:25]) + "\n").encode())
    client.put_object(Bucket=BUCKET, Key="data/part-1.jsonl", Body="\n".join(lines[25:]).encode())  # no final newline
    client.put_object(Bucket=BUCKET, Key="data/_SUCCESS", Body=b"")
    client.put_object(Bucket=BUCKET, Key="data/nested/part-2.jsonl", Body=b'{"id": 40}\n{"id": 41}\n')
    try:
        yield endpoint, client
    finally:
        server.stop()


def _env(endpoint: str, tmp_path: Path, var: str = "TRAINSPEC_S3_ENDPOINT") -> dict[str, str]:
    return {
        **CREDS,
        var: endpoint,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-creds"),
    }


def _index_records(client: Any, manifest: dict[str, Any]) -> list[list[bytes]]:
    """Records per shard of an index manifest over S3, fetched by ranged GETs."""
    out = []
    for shard in manifest["shards"]:
        records: list[bytes] = []
        for r in shard["ranges"]:
            bucket, _, key = manifest["files"][r["file"]]["path"].removeprefix("s3://").partition("/")
            data = client.get_object(Bucket=bucket, Key=key, Range=f"bytes={r['start']}-{r['end'] - 1}")["Body"].read()
            parts = data.split(b"\n")
            records.extend(parts[:-1] if data.endswith(b"\n") else parts)
        out.append(records)
    return out


def _ids(out: Path, client: Any = None) -> list[list[int]]:
    manifest = read_manifest(out)
    shards = _index_records(client, manifest) if manifest["settings"]["mode"] == "index" else shard_lines(out)
    return [[json.loads(r)["id"] for r in shard] for shard in shards]


@pytest.mark.parametrize("mode", ["index", "copy"])
def test_s3_prefix_contiguous_and_cache(s3: tuple[str, Any], tmp_path: Path, mode: str) -> None:
    endpoint, client = s3
    client.put_object(Bucket=BUCKET, Key="data/nested/part-2.jsonl", Body=b'{"id": 40}\n{"id": 41}\n')
    out = tmp_path / "out"
    args = [
        "--source",
        f"s3://{BUCKET}/data",
        "--format",
        "jsonl",
        "--num-shards",
        "3",
        "--output",
        str(out),
        "--mode",
        mode,
    ]
    result = run_stage(args, env=_env(endpoint, tmp_path))
    assert result.returncode == 0, result.stderr
    verify_manifest(out)
    if mode == "index":
        files = read_manifest(out)["files"]
        assert [f["path"] for f in files] == [
            f"s3://{BUCKET}/data/{rel}" for rel in ("nested/part-2.jsonl", "part-0.jsonl", "part-1.jsonl")
        ]
        assert all(f["etag"] and f["mtime_ns"] is None and f["checksum"] is None for f in files)
    # Recursive and sorted by key: nested/part-2 < part-0 < part-1; _SUCCESS skipped.
    assert [i for s in _ids(out, client) for i in s] == [40, 41, *range(40)]
    assert [len(s) for s in _ids(out, client)] == [14, 14, 14]
    source = read_manifest(out)["source"]
    assert source["uri"] == f"s3://{BUCKET}/data" and source["files"] == 3

    again = run_stage(args, env=_env(endpoint, tmp_path))
    assert again.returncode == 0 and "cache hit" in again.stdout

    client.put_object(Bucket=BUCKET, Key="data/nested/part-2.jsonl", Body=b'{"id": 40}\n{"id": 41}\n{"id": 42}\n')
    changed = run_stage(args, env=_env(endpoint, tmp_path, var="AWS_ENDPOINT_URL"))
    assert changed.returncode == 0, changed.stderr
    assert "re-sharding" in changed.stdout and "source changed" in changed.stdout
    assert read_manifest(out)["records"] == 43
    assert read_manifest(out)["source"]["fingerprint"] != source["fingerprint"]


@pytest.mark.parametrize("assignment", ["round-robin", "hashed"])
def test_s3_glob_streaming(s3: tuple[str, Any], tmp_path: Path, assignment: str) -> None:
    endpoint, _client = s3
    out = tmp_path / "out"
    result = run_stage(
        [
            "--source",
            f"s3://{BUCKET}/data/part-*.jsonl",
            "--format",
            "jsonl",
            "--num-shards",
            "4",
            "--assignment",
            assignment,
            "--output",
            str(out),
            "--validate",
        ],
        env=_env(endpoint, tmp_path),
    )
    assert result.returncode == 0, result.stderr
    verify_manifest(out)
    assert sorted(i for s in _ids(out) for i in s) == list(range(40))


@pytest.mark.parametrize("mode", ["index", "copy"])
def test_s3_parquet_and_files(s3: tuple[str, Any], tmp_path: Path, mode: str) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    endpoint, client = s3
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": list(range(50))}), buf, row_group_size=16)  # groups 16+16+16+2
    client.put_object(Bucket=BUCKET, Key="pq/rows.parquet", Body=buf.getvalue())
    out = tmp_path / "pq"
    result = run_stage(
        [
            "--source",
            f"s3://{BUCKET}/pq/rows.parquet",
            "--format",
            "parquet",
            "--num-shards",
            "2",
            "--mode",
            mode,
            "--output",
            str(out),
        ],
        env=_env(endpoint, tmp_path),
    )
    assert result.returncode == 0, result.stderr
    verify_manifest(out)
    manifest = read_manifest(out)
    if mode == "index":  # whole row groups by reference, nearest the even split
        assert manifest["files"][0]["path"] == f"s3://{BUCKET}/pq/rows.parquet"
        assert [s["ranges"] for s in manifest["shards"]] == [
            [{"file": 0, "row_groups": [0, 1], "records": 32}],
            [{"file": 0, "row_groups": [2, 3], "records": 18}],
        ]
    else:
        assert [pq.read_table(out / s["path"])["id"].to_pylist() for s in manifest["shards"]] == [
            list(range(25)),
            list(range(25, 50)),
        ]

    out = tmp_path / "files"
    result = run_stage(
        [
            "--source",
            f"s3://{BUCKET}/data",
            "--format",
            "files",
            "--num-shards",
            "2",
            "--output",
            str(out),
            "--mode",
            mode,
        ],
        env=_env(endpoint, tmp_path),
    )
    assert result.returncode == 0, result.stderr
    verify_manifest(out)
    manifest = read_manifest(out)
    if mode == "index":
        rels = [manifest["files"][r["file"]]["rel"] for s in manifest["shards"] for r in s["ranges"]]
    else:
        rels = [e["path"] for s in manifest["shards"] for e in s["files"]]
    assert sorted(rels) == ["nested/part-2.jsonl", "part-0.jsonl", "part-1.jsonl"]


def _big_object(client: Any, key: str) -> int:
    body = b"".join(json.dumps({"id": i, "pad": "x" * (i % 97)}).encode() + b"\n" for i in range(150_000))
    client.put_object(Bucket=BUCKET, Key=key, Body=body)
    return len(body)


@pytest.mark.parametrize("balance", ["bytes", "records"])
def test_s3_index_mode_reads_ranges_not_objects(s3: tuple[str, Any], tmp_path: Path, balance: str) -> None:
    """balance=bytes downloads a few KiB per boundary; balance=records reads the object once."""
    endpoint, client = s3
    key = f"big-{balance}/data.jsonl"
    size = _big_object(client, key)  # about 9 MB
    out = tmp_path / "out"
    SENT.clear()
    result = run_stage(
        [
            "--source",
            f"s3://{BUCKET}/{key}",
            "--format",
            "jsonl",
            "--num-shards",
            "16",
            "--output",
            str(out),
            "--balance",
            balance,
        ],
        env=_env(endpoint, tmp_path),
    )
    assert result.returncode == 0, result.stderr
    verify_manifest(out)
    sent = SENT[f"/{BUCKET}/{key}"]
    if balance == "bytes":
        assert sent <= 15 * (64 << 10) < size // 8  # 15 boundaries, at most 64 KiB each
        assert read_manifest(out)["records"] is None
    else:
        # One counting pass, then at most one 1 MiB index block (+ read-ahead) per boundary.
        assert size <= sent <= size + 15 * (3 << 19)
        assert read_manifest(out)["records"] == 150_000
    ids = [i for shard in _ids(out, client) for i in shard]
    assert ids == list(range(150_000))


@pytest.mark.parametrize("uri", [f"s3://{BUCKET}/no/such/prefix", "s3://no-such-bucket-trainspec/data"])
def test_s3_missing(s3: tuple[str, Any], tmp_path: Path, uri: str) -> None:
    endpoint, _client = s3
    result = run_stage(
        ["--source", uri, "--format", "jsonl", "--num-shards", "2", "--output", str(tmp_path / "o")],
        env=_env(endpoint, tmp_path),
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    assert "not found" in result.stderr or "cannot list" in result.stderr
    assert not (tmp_path / "o").exists()
