"""Templates and values files: every failure is located, nothing is unbounded, nulls are not text.

Issue 10, item 6 (templates, values): a Python error inside ``{{ }}`` used to be an internal
error without a location that hid every other diagnostic; ``'a' * 100000000`` built a 100 MB
manifest; ``registry: null`` rendered ``None/...``. Work is bounded by construction (no loops,
calls or assignments; operators and filters check the size of what they would build), and
the tests bound memory with ``tracemalloc``, never wall time.
"""

from __future__ import annotations

import textwrap
import tracemalloc
from pathlib import Path

import pytest

from trainspec.dsl.diagnostics import CODES
from trainspec.dsl.load import templating
from trainspec.dsl.load.spec_sources import load_string
from trainspec.dsl.load.values_files import load_values

DOC = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: tpl}}
spec:
  runtime: trainspec-torch
  image: "{image}"
  nodes: 1
"""
IMAGE_AT = (6, 10)  # where the image value starts


def render(image: str, values: dict | None = None, extra: str = "") -> tuple[list, list]:
    return load_string(DOC.format(image=image) + extra, "t.yaml", values=values)


def errors(problems: list) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.column) for d in problems if d.is_error]


def bounded(fn, limit: int = 8 << 20):
    """Run ``fn`` and assert it never held more than ``limit`` bytes of new memory."""
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < limit, f"peak {peak} bytes"
    return result


@pytest.mark.parametrize(
    "template",
    [
        "{{ values.tag + 1 }}",
        "{{ 1/0 }}",
        "{{ values.tag.nope }}",
        "{{ values.tag[5] }}",
        "{{ 1.5 ** 10000 }}",
    ],
)
def test_python_errors_in_a_template_are_located_at_the_value(template: str) -> None:
    _specs, problems = render(template, {"tag": "v1"})
    assert errors(problems) == [("TS307", *IMAGE_AT)]
    (diag,) = problems
    assert diag.path == "spec.image" and diag.hint and template[:10] in diag.message


def test_other_diagnostics_are_still_reported() -> None:
    extra = (
        "  procPerNode: 2\n---\napiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: b}\n"
        "spec: {runtime: trainspec-torch, nodez: 1}\n"
    )
    _, problems = render("{{ 1/0 }}", {}, extra)
    assert sorted(d.code for d in problems if d.is_error) == ["TS200", "TS200", "TS307"]


@pytest.mark.parametrize(
    ("template", "code"),
    [
        ("{{ 'a' * 100000000 }}", "TS309"),
        ("{{ [1] * 100000000 }}", "TS309"),
        ("{{ 10 ** (10 ** 10) }}", "TS309"),
        ("{{ (10 ** 1000) * (10 ** 1000) * (10 ** 1000) * (10 ** 1000) * (10 ** 1000) }}", "TS309"),
        ("{{ values.big ~ values.big ~ values.big ~ values.big ~ values.big }}", "TS309"),
        ("{{ values.big + values.big + values.big }}", "TS309"),
        ("{{ values.big | replace('a', values.big) }}", "TS309"),
        ("{{ values.many | join(values.big) }}", "TS309"),
        ("{{ range(10**9) | list }}", "TS310"),
        ("{{ range(10**9) }}", "TS310"),
        ("{% for i in values.many %}{% for j in values.many %}{% endfor %}{% endfor %}", "TS310"),
        ("{% set a = values.big %}{% set a = a ~ a %}{{ a }}", "TS310"),
        ("{{ 'x' | center(100000000) }}", "TS310"),
        ("{{ '%*s' % (100000000, 'x') }}", "TS310"),
        ("{{ 'x'.ljust(100000000) }}", "TS310"),
        ("{{ values.big.split('a') | join(values.big) }}", "TS309"),
        ("{{ values.many.__class__ }}", "TS307"),
        ("{{ lipsum(100000) }}", "TS310"),
        ("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "TS310"),
        ("{% include 'other' %}", "TS310"),
    ],
)
def test_hostile_templates_fail_fast_and_small(template: str, code: str) -> None:
    values = {"big": "a" * 60_000, "many": list(range(50_000))}
    _specs, problems = bounded(lambda: render(template.replace('"', "'"), values))
    assert errors(problems) == [(code, *IMAGE_AT)], problems
    assert len(problems[0].message) < 400 and problems[0].hint


def test_rendered_value_cap() -> None:
    _, problems = render("{{ values.big }}", {"big": "a" * (templating.MAX_RENDERED_VALUE + 1)})
    assert errors(problems) == [("TS309", *IMAGE_AT)]
    _specs, problems = render("{{ values.big }}", {"big": "a" * 100})
    assert errors(problems) == []


def test_rendered_document_cap() -> None:
    lines = "".join(f'    V{i}: "{{{{ values.chunk }}}}"\n' for i in range(20))
    text = DOC.format(image="x") + "  env:\n" + lines
    values = {"chunk": "c" * 60_000}
    _, problems = bounded(lambda: load_string(text, "t.yaml", values=values), 16 << 20)
    assert [d.code for d in problems if d.is_error].count("TS309") == 1
    assert templating.MAX_RENDERED_DOCUMENT < 20 * 60_000


def test_templates_that_are_fine_still_render() -> None:
    values = {"registry": "r.example.com", "tag": "1.2", "flag": True, "n": 2, "names": ["a", "b"]}
    for template, expected in [
        ("{{ values.registry }}/t:{{ values.tag }}", "r.example.com/t:1.2"),
        ("{{ values.registry ~ '/t:' ~ values.tag }}", "r.example.com/t:1.2"),
        ("{{ values.registry | upper }}/t", "R.EXAMPLE.COM/t"),
        ("{{ values.missing | default('d.io') }}/t", "d.io/t"),
        ("{% if values.flag %}on{% else %}off{% endif %}/t", "on/t"),
        ("{{ values.names | join('-') }}/t:{{ values.n * 2 }}", "a-b/t:4"),
        ("{{ values.registry | replace('example', 'corp') }}/t", "r.corp.com/t"),
        ("{{ values.tag if values.flag else 'x' }}", "1.2"),
        ("{{ values.registry.split('.')[0] }}/t:{{ values.tag.strip() }}", "r/t:1.2"),
    ]:
        specs, problems = render(template, values)
        assert not [d for d in problems if d.is_error], (template, problems)
        assert specs[0].spec.spec.image == expected, template


# -- nulls and non-scalars ---------------------------------------------------------------------------


def values_file(tmp_path: Path, text: str, name: str = "values.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_null_value_is_a_located_error_pointing_at_the_values_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    values_file(tmp_path, "tag: '1'\nregistry: null\n")
    values, problems = load_values(["values.yaml"])
    assert problems == []
    _, problems = render("{{ values.registry }}/img:{{ values.tag }}", values)
    (diag,) = problems
    assert (diag.code, diag.line, diag.column) == ("TS311", *IMAGE_AT)
    assert "values.registry" in diag.message and "null" in diag.message
    assert [(r.file, r.line, r.column) for r in diag.related] == [("values.yaml", 2, 11)]
    assert "default(" in diag.hint


@pytest.mark.parametrize(
    "template",
    [
        "{{ values.registry ~ '/img' }}",
        "{{ values.registry | string }}/img",
        "{{ values.registry | default('docker.io') }}/img",
        "{{ [values.registry, 'img'] | join('/') }}",
        "{{ none }}",
    ],
)
def test_null_cannot_sneak_in_as_text(template: str) -> None:
    _, problems = render(template, {"registry": None})
    assert errors(problems) == [("TS311", *IMAGE_AT)]


def test_default_with_boolean_replaces_a_null() -> None:
    specs, problems = render("{{ values.registry | default('docker.io', true) }}/img", {"registry": None})
    assert not [d for d in problems if d.is_error] and specs[0].spec.spec.image == "docker.io/img"


@pytest.mark.parametrize("value", [{"a": 1}, ["a", "b"]])
def test_mapping_or_list_interpolated_is_an_error(value) -> None:
    _, problems = render("{{ values.registry }}/img", {"registry": value})
    assert errors(problems) == [("TS311", *IMAGE_AT)]


def test_an_unused_null_is_fine() -> None:
    specs, problems = render("r.io/img", {"registry": None})
    assert problems == [] and specs


# -- values files ------------------------------------------------------------------------------------


def test_values_files_are_layered_and_located(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    values_file(tmp_path, "registry: a.io\ntag: '1'\n", "base.yaml")
    values_file(tmp_path, "tag: '2'\n", "prod.yaml")
    values, problems = load_values(["base.yaml", "prod.yaml"])
    assert problems == [] and values == {"registry": "a.io", "tag": "2"}
    assert values.origins[("tag",)][0] == "prod.yaml"


def test_values_file_with_two_documents(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    values_file(tmp_path, "a: 1\n---\nb: 2\n")
    _, problems = load_values([str(tmp_path / "values.yaml")])
    assert [(d.code, d.file, d.line) for d in problems] == [("TS308", "values.yaml", 3)]


def test_values_file_that_is_not_a_mapping(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    values_file(tmp_path, "- a\n- b\n")
    _, problems = load_values(["values.yaml"])
    assert "TS107" in [d.code for d in problems]


def test_missing_values_file(tmp_path: Path) -> None:
    _, problems = load_values([str(tmp_path / "nope.yaml")])
    assert [d.code for d in problems] == ["TS100"]


def test_new_template_codes_are_registered() -> None:
    assert {"TS309", "TS310", "TS311"} <= set(CODES)


@pytest.mark.parametrize(
    ("written", "read_as"),
    [("1.10", "the number 1.1"), ("017", "the number 15"), ("on", "the boolean True"), ("1_000", "the number 1000")],
)
def test_a_values_entry_yaml_reads_as_other_text_is_an_error_at_its_use(
    tmp_path: Path, monkeypatch, written: str, read_as: str
) -> None:
    """``tag: 1.10`` is the float 1.1 to YAML: the image would silently become ``eval:1.1``."""
    monkeypatch.chdir(tmp_path)
    values_file(tmp_path, f"registry: r.io\ntag: {written}\n")
    values, problems = load_values(["values.yaml"])
    assert problems == []
    _specs, problems = render("{{ values.registry }}/eval:{{ values.tag }}", values)
    (diag,) = problems
    assert (diag.code, diag.severity.value, diag.line, diag.column) == ("TS109", "error", *IMAGE_AT)
    assert f"values.tag is written {written}" in diag.message and read_as in diag.message
    assert [(r.file, r.line, r.column) for r in diag.related] == [("values.yaml", 2, 6)]
    assert f"tag: '{written}'" in diag.hint


def test_a_values_number_that_reads_back_as_written_is_fine(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    values_file(tmp_path, "tag: 2\nratio: 0.5\nquoted: '1.10'\n")
    values, _ = load_values(["values.yaml"])
    specs, problems = render("r.io/eval:{{ values.tag }}-{{ values.ratio }}-{{ values.quoted }}", values)
    assert problems == [] and specs[0].spec.spec.image == "r.io/eval:2-0.5-1.10"
