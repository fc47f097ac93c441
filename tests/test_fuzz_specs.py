"""Mutated valid specs never crash trainspec: the outcome is always "valid" or diagnostics."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import EXAMPLES
from trainspec.compiler.emit import render_stream
from trainspec.compiler.pipeline import compile_specs
from trainspec.dsl.diagnostics import CODES, Diagnostic
from trainspec.dsl.load.spec_sources import load_string

SOURCES = [p.read_text() for p in [EXAMPLES / "ddp-cpu.yaml", EXAMPLES / "jax.yaml", EXAMPLES / "deepspeed.yaml"]]
RUNTIME_AND_JOB = (
    (EXAMPLES / "llama-sft" / "runtime.yaml").read_text() + "---\n" + (EXAMPLES / "llama-sft" / "job.yaml").read_text()
)
SOURCES.append(RUNTIME_AND_JOB)

NASTY = st.sampled_from(
    [
        "",
        "0",
        "-1",
        "no",
        "yes",
        "~",
        "null",
        "1e3",
        "[]",
        "{}",
        "[a, b]",
        "{a: 1}",
        "&a x",
        "*a",
        "!!binary aGk=",
        "'unterminated",
        '"\\u0000"',
        "9" * 30,
        "auto",
        "1600Gi",
        "500m",
        "72h",
        "s3://x/",
        "pvc://c/p",
        "/data",
        "ReadWriteOnce",
        "\t",
        "? x",
        "<<: *a",
        "- x",
        "a: b: c",
        "x" * 300,
        "é",
        "\x00",
    ]
)


def _check(text: str) -> None:
    specs, problems = load_string(text, "fuzz.yaml")
    result = compile_specs(specs)
    for diagnostic in [*problems, *result.diagnostics]:
        assert isinstance(diagnostic, Diagnostic) and diagnostic.code in CODES
        assert diagnostic.file in ("fuzz.yaml", None) or diagnostic.file.startswith("<built-in>")
    if result.ok and not any(d.is_error for d in problems):
        render_stream(result.outputs)  # whatever validates must also emit


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(SOURCES), data=st.data())
def test_replacing_a_value_never_crashes(source: str, data: st.DataObject) -> None:
    lines = source.splitlines()
    index = data.draw(st.integers(0, len(lines) - 1))
    line = lines[index]
    if ":" in line:
        key = line.split(":", 1)[0]
        value = data.draw(st.one_of(NASTY, st.text(max_size=20)))
        lines[index] = f"{key}: {value}"
    _check("\n".join(lines))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(SOURCES), data=st.data())
def test_structural_mutations_never_crash(source: str, data: st.DataObject) -> None:
    lines = source.splitlines()
    op = data.draw(st.sampled_from(["delete", "duplicate", "indent", "dedent", "insert", "truncate"]))
    index = data.draw(st.integers(0, len(lines) - 1))
    if op == "delete":
        del lines[index]
    elif op == "duplicate":
        lines.insert(index, lines[index])
    elif op == "indent":
        lines[index] = "  " + lines[index]
    elif op == "dedent":
        lines[index] = lines[index].lstrip()
    elif op == "insert":
        lines.insert(index, data.draw(st.one_of(NASTY, st.text(max_size=40))))
    else:
        text = "\n".join(lines)
        lines = [text[: data.draw(st.integers(0, len(text)))]]
    _check("\n".join(lines))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_crash(blob: bytes) -> None:
    specs, _problems = load_string(blob, "fuzz.yaml")
    compile_specs(specs)
