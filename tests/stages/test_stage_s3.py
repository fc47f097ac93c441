"""S3 sources against a real S3-compatible server (moto in server mode) on loopback.

The stage runs as a subprocess and talks HTTP to the server through s3fs/botocore, exactly
as in a pod; credentials exist only in that subprocess's environment.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
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


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
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
    client.put_object(
        Bucket=BUCKET, Key="data/part-1.jsonl", Body="\n".join(lines[25:]).encode()
    )  # no final newline
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


def _ids(out: Path) -> list[list[int]]:
    return [[json.loads(r)["id"] for r in shard] for shard in shard_lines(out)]


def test_s3_prefix_contiguous_and_cache(s3: tuple[str, Any], tmp_path: Path) -> None:
    endpoint, client = s3
    out = tmp_path / "out"
    args = ["--source", f"s3://{BUCKET}/data", "--format", "jsonl", "--num-shards", "3", "--output", str(out)]
    result = run_stage(args, env=_env(endpoint, tmp_path))
    assert result.returncode == 0, result.stderr
    verify_manifest(out)
    # Recursive and sorted by key: nested/part-2 < part-0 < part-1; _SUCCESS skipped.
    assert [i for s in _ids(out) for i in s] == [40, 41, *range(40)]
    assert [len(s) for s in _ids(out)] == [14, 14, 14]
    source = read_manifest(out)["source"]
    assert source["uri"] == f"s3://{BUCKET}/data" and source["files"] == 3

    again = run_stage(args, env=_env(endpoint, tmp_path))
    assert again.returncode == 0 and "cache hit" in again.stdout

    client.put_object(
        Bucket=BUCKET, Key="data/nested/part-2.jsonl", Body=b'{"id": 40}\n{"id": 41}\n{"id": 42}\n'
    )
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


def test_s3_parquet_and_files(s3: tuple[str, Any], tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    endpoint, client = s3
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": list(range(50))}), buf, row_group_size=16)
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
            "--output",
            str(out),
        ],
        env=_env(endpoint, tmp_path),
    )
    assert result.returncode == 0, result.stderr
    verify_manifest(out)
    assert [pq.read_table(out / s["path"])["id"].to_pylist() for s in read_manifest(out)["shards"]] == [
        list(range(25)),
        list(range(25, 50)),
    ]

    out = tmp_path / "files"
    result = run_stage(
        ["--source", f"s3://{BUCKET}/data", "--format", "files", "--num-shards", "2", "--output", str(out)],
        env=_env(endpoint, tmp_path),
    )
    assert result.returncode == 0, result.stderr
    verify_manifest(out)
    paths = sorted(e["path"] for s in read_manifest(out)["shards"] for e in s["files"])
    assert paths == ["nested/part-2.jsonl", "part-0.jsonl", "part-1.jsonl"]


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
