"""Nothing from a file name, a path or a value reaches the output unescaped.

A name holding a newline (or a carriage return, a C1 NEL, U+2028: line breaks to some YAML
readers) written raw into a generated file's header adds YAML to ``deploy/``; a bidi override
(U+202E, U+2066-U+2069) makes a reviewed file or a terminal line read other than it is. Every
place the compiler writes text that did not come from the typed models is scanned here: file
headers, the seal line, ``kustomization.yaml``, the diagnostics ``compile`` prints, the new-run
notes, the summary lines naming paths, and the values in the manifests.

Another change makes the input side refuse such file names with a located error: each test
accepts either outcome (refused, with the name escaped in the diagnostic; or compiled, with it
escaped in the headers), never a raw control character in any output or on the terminal.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES
from trainspec.cli.main import main
from trainspec.cli.report import format_text, write
from trainspec.compiler.emit import HEADER
from trainspec.compiler.outtree.marker import seal
from trainspec.dsl.diagnostics import Diagnostic, Related, escape_text

UNSAFE = {
    "newline": "\n",
    "carriage return": "\r",
    "tab": "\t",
    "SOH": "\x01",
    "ESC": "\x1b",
    "DEL": "\x7f",
    "NEL": "\x85",
    "CSI": "\x9b",
    "RLO": "\u202e",
    "LRI": "\u2066",
    "RLI": "\u2067",
    "FSI": "\u2068",
    "PDI": "\u2069",
    "line separator": "\u2028",
}
#: A newline ends every line of output: for it, the raw names are looked for instead.
NEVER_RAW = [ch for ch in UNSAFE.values() if ch != "\n"]
SEAL = re.compile(r"# trainspec-sha256: [0-9a-f]{64}")


def escaped(name: str, text: str) -> bool:
    """``name`` is in ``text`` with each unsafe character escaped: ``\\u000a`` (trainspec's reports and
    headers) or ``\\n``, ``\\x1b`` (the loader's TS124)."""
    forms = []
    for char in name:
        if char in UNSAFE.values():
            code = ord(char)
            alternatives = [f"\\u{code:04x}"] + ([f"\\x{code:02x}"] if code <= 0xFF else [])
            alternatives += {"\n": ["\\n"], "\r": ["\\r"], "\t": ["\\t"]}.get(char, [])
            forms.append("(?:" + "|".join(re.escape(a) for a in alternatives) + ")")
        else:
            forms.append(re.escape(char))
    return re.search("".join(forms), text) is not None


def clean(text: str, *names: str) -> None:
    """No raw control or bidi character in ``text``, and none of ``names`` as it is."""
    found = sorted({f"U+{ord(ch):04X}" for ch in NEVER_RAW if ch in text})
    assert not found, f"raw {found} in {text!r}"
    for name in names:
        assert name not in text, f"raw name {name!r} in {text!r}"


def compile_(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["compile", *args, "--no-project"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def objects(root: Path) -> dict[str, list[object]]:
    """Every generated file's objects, by relative path."""
    return {
        p.relative_to(root).as_posix(): list(yaml.safe_load_all(p.read_text(encoding="utf-8")))
        for p in sorted(root.rglob("*.yaml"))
    }


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _reference(here: Path, capsys: pytest.CaptureFixture[str], text: str) -> dict[str, list[object]]:
    (here / "plain").mkdir()
    (here / "plain" / "a.yaml").write_text(text)
    assert compile_(capsys, "plain", "-o", "ref")[0] == 0
    return objects(here / "ref")


@pytest.mark.parametrize("char", UNSAFE.values(), ids=UNSAFE.keys())
def test_a_spec_path_reaches_no_output_raw(here: Path, capsys: pytest.CaptureFixture[str], char: str) -> None:
    text = (EXAMPLES / "ddp-cpu.yaml").read_text()
    expected = _reference(here, capsys, text)
    folder, name = f"sp{char}ecs", f"a{char}b.yaml"
    (here / folder).mkdir()
    (here / folder / name).write_text(text)
    code, _, err = compile_(capsys, folder, "-o", "deploy")
    clean(err, folder, name)
    if code != 0:  # the input side refused the name: located, and escaped on the terminal
        assert escaped(name, err) or escaped(folder, err), err
        assert not (here / "deploy").exists()
        return
    assert err.startswith("wrote deploy: "), err
    found = objects(here / "deploy")
    assert found == expected  # no extra document, no extra key: only what trainspec produced
    for path in (here / "deploy").rglob("*.yaml"):
        content = path.read_text(encoding="utf-8")
        clean(content, folder, name)
        header, seal_line = content.splitlines()[:2]
        assert SEAL.fullmatch(seal_line)
        if path.name != "kustomization.yaml" and "runtimes" not in path.parts:
            assert header == HEADER.format(sources=escape_text(f"../{folder}/{name}")).rstrip("\n")


@pytest.mark.parametrize("char", UNSAFE.values(), ids=UNSAFE.keys())
def test_a_directory_above_the_specs_reaches_no_header_raw(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, char: str
) -> None:
    """The specs' names are plain, but the working directory's is not: the headers name the specs
    relative to an output directory outside it (``../pro\\u000aject/specs/a.yaml``)."""
    text = (EXAMPLES / "ddp-cpu.yaml").read_text()
    expected = _reference(here, capsys, text)
    project = here / f"pro{char}ject"
    (project / "specs").mkdir(parents=True)
    (project / "specs" / "a.yaml").write_text(text)
    monkeypatch.chdir(project)
    code, _, err = compile_(capsys, "specs", "-o", "../deploy")
    clean(err, project.name)
    if code != 0:  # the input side refused the path
        assert escaped(project.name, err), err
        return
    assert objects(here / "deploy") == expected
    content = (here / "deploy" / "ml-dev" / "ddp-cpu.yaml").read_text(encoding="utf-8")
    clean(content, project.name)
    header = content.splitlines()[0]
    assert header == HEADER.format(sources=escape_text(f"../{project.name}/specs/a.yaml")).rstrip("\n")


def test_an_undecodable_file_name_breaks_nothing(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bytes that are not UTF-8 (surrogate escapes in Python) are escaped, never written back raw."""
    text = (EXAMPLES / "ddp-cpu.yaml").read_text()
    expected = _reference(here, capsys, text)
    folder = os.fsdecode(b"sp\xffecs\x9b")
    (here / folder).mkdir()
    (here / folder / "a.yaml").write_text(text)
    code, _, err = compile_(capsys, folder, "-o", "deploy")
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in err)
    if code != 0:
        assert "error[" in err
        return
    assert objects(here / "deploy") == expected
    header = (here / "deploy" / "ml-dev" / "ddp-cpu.yaml").read_bytes().split(b"\n")[0]
    assert b"../sp\\udcffecs\\udc9b/a.yaml" in header


@pytest.mark.parametrize("char", UNSAFE.values(), ids=UNSAFE.keys())
def test_the_output_directory_name_is_escaped_on_the_terminal(
    here: Path, capsys: pytest.CaptureFixture[str], char: str
) -> None:
    (here / "specs").mkdir()
    (here / "specs" / "a.yaml").write_text((EXAMPLES / "ddp-cpu.yaml").read_text())
    out = f"de{char}ploy"
    for extra in ((), ("--check",)):
        code, _, err = compile_(capsys, "specs", "-o", out, *extra)
        assert code == 0, err
        clean(err, out)
        assert escape_text(out) in err
    job = here / "specs" / "a.yaml"
    job.write_text(job.read_text().replace("nodes: 2", "nodes: 3"))
    code, _, err = compile_(capsys, "specs", "-o", out, "--check")
    assert code == 1
    clean(err, out)
    assert f"{escape_text(out)}/ml-dev/ddp-cpu.yaml: stale" in err


@pytest.mark.parametrize("char", UNSAFE.values(), ids=UNSAFE.keys())
def test_a_diagnostic_names_its_file_escaped(here: Path, capsys: pytest.CaptureFixture[str], char: str) -> None:
    (here / "specs").mkdir()
    name = f"bad{char}.yaml"
    (here / "specs" / name).write_text((EXAMPLES / "ddp-cpu.yaml").read_text().replace("nodes: 2", "nodes: 0"))
    for fmt in ("text", "json"):
        code, out, err = compile_(capsys, "specs", "-o", "deploy", "--format", fmt, "-v")
        assert code == 1
        clean(err + out, name)
        if fmt == "text":
            assert escaped(name, err), err
        else:
            files = [d["file"] or "" for d in json.loads(err)["diagnostics"]]
            assert any(name in f or escaped(name, f) for f in files), files  # json escapes it on the wire
    assert not (here / "deploy").exists()


@pytest.mark.parametrize("char", UNSAFE.values(), ids=UNSAFE.keys())
def test_a_value_reaches_the_manifests_and_the_new_run_note_escaped(
    here: Path, capsys: pytest.CaptureFixture[str], char: str
) -> None:
    (here / "specs").mkdir()
    job = here / "specs" / "a.yaml"
    job.write_text((EXAMPLES / "ddp-cpu.yaml").read_text() + "  env: {NOTE: plain}\n")
    assert compile_(capsys, "specs", "-o", "deploy")[0] == 0
    value = f"x{char}y"
    job.write_text(job.read_text().replace("NOTE: plain", f"NOTE: {json.dumps(value)}"))
    code, _, err = compile_(capsys, "specs", "-o", "deploy")
    clean(err, value)
    if code != 0:  # the input side refused the value
        assert "error[" in err
        return
    note = next(line for line in err.splitlines() if line.startswith("ml-dev/ddp-cpu: new run "))
    assert escaped(value, note), note
    content = (here / "deploy" / "ml-dev" / "ddp-cpu.yaml").read_text(encoding="utf-8")
    clean(content, value)
    [run] = [d for d in yaml.safe_load_all(content) if d["kind"] == "TrainJob"]
    assert value in strings(run)  # the value itself, intact


def strings(data: object) -> list[str]:
    """Every string value below ``data``."""
    if isinstance(data, dict):
        return [s for v in data.values() for s in strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in strings(v)]
    return [data] if isinstance(data, str) else []


def test_the_sources_of_an_older_header_are_escaped_in_a_refusal(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tree written before headers were escaped names a spec with raw characters: the TS410 that
    quotes it prints it escaped."""
    (here / "specs").mkdir()
    job = (
        (EXAMPLES / "llama-sft" / "job.yaml").read_text().replace("    keep: 3\n", "    keep: 3\n    protect: false\n")
    )
    (here / "specs" / "job.yaml").write_text(job)
    (here / "specs" / "runtime.yaml").write_text((EXAMPLES / "llama-sft" / "runtime.yaml").read_text())
    (here / "specs" / "jax.yaml").write_text((EXAMPLES / "jax.yaml").read_text())
    assert compile_(capsys, "specs", "-o", "deploy")[0] == 0
    target = here / "deploy" / "team-nlp" / "llama-sft.yaml"
    body = target.read_text().split("\n", 2)[2]
    old = "../specs/jo\u202eb\x1b[2J.yaml"
    target.write_text(seal(f"# Generated by trainspec from {old}. Do not edit.\n", body))
    (here / "specs" / "job.yaml").unlink()
    code, _, err = compile_(capsys, "specs", "-o", "deploy")
    assert code == 1 and "TS410" in err
    clean(err)
    assert escape_text("jo\u202eb\x1b[2J.yaml") in err


def test_the_text_and_json_reports_escape_every_field() -> None:
    import io

    raw = "a\nb\r\u202ec\x1b"
    diagnostic = Diagnostic(
        code="TS100",
        message=f"cannot read {raw}",
        file=f"specs/{raw}.yaml",
        line=1,
        column=2,
        path=f"spec.env.{raw}",
        hint=f"rename {raw}",
        related=(Related(message=f"also {raw}", file=f"other/{raw}.yaml", line=3),),
    )
    text = format_text(diagnostic)
    assert text.count("\n") == 2  # the message, its hint and its note: three lines, no more
    clean(text, raw)
    assert text.startswith(f"specs/{escape_text(raw)}.yaml:1:2: error[TS100]: ")
    assert "specs/a\\nb.yaml" in format_text(Diagnostic(code="TS124", message="m", file="specs/a\\nb.yaml"))
    stream = io.StringIO()
    write([diagnostic], stream, "json")
    clean(stream.getvalue(), raw)
    assert json.loads(stream.getvalue())["diagnostics"][0]["file"] == f"specs/{raw}.yaml"


def test_escape_text_is_unambiguous() -> None:
    assert escape_text("a\nb") == "a\\u000ab"
    assert escape_text("a\\u000ab") == "a\\\\u000ab"  # a literal backslash is doubled
    assert escape_text("plain/ascii-and-ünïcode.yaml") == "plain/ascii-and-ünïcode.yaml"
    for char in UNSAFE.values():
        assert char not in escape_text(f"x{char}y")
