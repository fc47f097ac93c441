"""The loader's file-size cap (TS102) admits every object the API server admits (issue 11).

etcd's default request limit is 1.5 MiB, so an object with a 1 MiB ``command`` item is valid on
a cluster; the cap must let it, and such an object next to another in one file, through. The
cap stays, for hostile input, and ``--max-file-size`` moves it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trainspec.dsl.load.strict_yaml import DEFAULT_MAX_BYTES, LoadLimits, load_file, load_text, parse_size

ETCD_REQUEST_LIMIT = 3 * 512 * 1024  # 1.5 MiB, etcd's default --max-request-bytes


def _trainjob(command_item: str, name: str = "big") -> str:
    return (
        "apiVersion: trainer.kubeflow.org/v1alpha1\n"
        "kind: TrainJob\n"
        f"metadata:\n  name: {name}\n  namespace: team-a\n"
        "spec:\n  runtimeRef:\n    name: torch-distributed\n"
        "  trainer:\n    command:\n    - bash\n    - -c\n"
        f"    - {command_item}\n"
    )


def test_the_default_cap_admits_an_object_with_a_one_mebibyte_command_item():
    text = _trainjob("x" * (1 << 20))
    docs, diags = load_text(text, "big.yaml")
    assert diags == []
    assert len(docs[0].data["spec"]["trainer"]["command"][2]) == 1 << 20


def test_the_default_cap_admits_objects_up_to_the_etcd_limit_two_to_a_file():
    one = _trainjob("y" * (ETCD_REQUEST_LIMIT - 400), "a")
    text = one + "---\n" + _trainjob("z" * (ETCD_REQUEST_LIMIT - 400), "b")
    assert len(text.encode()) > 2 * (ETCD_REQUEST_LIMIT - 1024)
    docs, diags = load_text(text, "two.yaml")
    assert diags == [] and [d.data["metadata"]["name"] for d in docs] == ["a", "b"]


def test_a_file_over_the_default_cap_is_still_refused_and_the_hint_names_the_option(tmp_path: Path):
    path = tmp_path / "huge.yaml"
    path.write_bytes(b"a: " + b"x" * DEFAULT_MAX_BYTES + b"\n")
    docs, diags = load_file(path)
    assert docs == [] and [d.code for d in diags] == ["TS102"]
    assert "--max-file-size" in (diags[0].hint or "")


def test_limits_move_the_cap_both_ways():
    text = _trainjob("x" * 100)
    assert [d.code for d in load_text(text, "a.yaml", LoadLimits(max_bytes=64))[1]] == ["TS102"]
    big = "a: " + "x" * DEFAULT_MAX_BYTES + "\n"
    docs, diags = load_text(big, "b.yaml", LoadLimits(max_bytes=DEFAULT_MAX_BYTES * 2))
    assert diags == [] and len(docs[0].data["a"]) == DEFAULT_MAX_BYTES


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1024", 1024),
        ("4MiB", 4 << 20),
        ("4Mi", 4 << 20),
        ("1.5MiB", 3 << 19),
        ("10M", 10_000_000),
        ("10MB", 10_000_000),
        ("2k", 2000),
        ("2KiB", 2048),
        ("1G", 1_000_000_000),
        (" 8 MiB ", 8 << 20),
    ],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "0", "-1", "lots", "1.5", "4 Mx", "1e6", "2GiB"])
def test_parse_size_refuses(text):
    with pytest.raises(ValueError, match=r"is not a size|is out of range|is not a whole number"):
        parse_size(text)
