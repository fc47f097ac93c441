"""The compiler's YAML writer writes what PyYAML's dumper wrote before it, byte for byte.

The reference is the previous emit path, kept here and only here: ``yaml.dump`` with the
compiler's dumper (libyaml's emitter when PyYAML has it), and again in ASCII when the text holds
a raw control, separator or bidi character. The writer must equal it on every golden case and
example, on generated adversarial objects, and on PyYAML's pure-Python emitter too wherever the
writer takes an object itself (so an install without libyaml writes the same bytes).
"""

from __future__ import annotations

import math
import os
import re
import sys
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings, strategies as st

from tests.compiler.test_golden import CASES, GOLDEN
from tests.conftest import ROOT
from trainspec.compiler import emit
from trainspec.compiler.emit import dump_objects, manifest_dicts, render_stream
from trainspec.compiler.pipeline import compile_paths
from trainspec.compiler.yaml_writer import render


class _PythonDumper(emit._PythonSafeDumper):
    """The compiler's dumper on PyYAML's pure-Python emitter (what an install without libyaml uses)."""


_PythonDumper.add_representer(str, emit._represent_str)


def reference(obj: Any, dumper: Any = emit._Dumper) -> str:
    """The emit path before the writer: one yaml.dump per object, again in ASCII for raw characters."""
    options: dict[str, Any] = {"Dumper": dumper, "sort_keys": False, "default_flow_style": False, "width": 1 << 16}
    text: str = yaml.dump(obj, allow_unicode=True, **options)
    if not emit._RAW_IN_VALUES.search(text):
        return text
    return str(yaml.dump(obj, **options))


def _same_everywhere(obj: Any) -> bool:
    """Assert the writer and emit equal the reference for ``obj``; whether the writer took it."""
    expected = reference(obj)
    assert dump_objects([obj]) == expected
    fast = render(obj)
    if fast is not None:
        assert fast == expected
        assert fast == reference(obj, _PythonDumper)
        assert not emit._RAW_IN_VALUES.search(fast)
    return fast is not None


# --- every golden case and every example ----------------------------------------------------------


def _compiled_objects() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name, (paths, values) in sorted(CASES.items()):
        result = compile_paths([str(ROOT / p) for p in paths], values=values)
        assert result.ok, name
        for gitops in (None, "argocd", "flux"):
            for out in [*result.outputs, *result.pipeline_jobs]:
                found.extend((f"{name}/{gitops}", obj) for obj in manifest_dicts(out.objects, gitops=gitops))
    return found


def test_every_compiled_example_is_written_as_the_dumper_wrote_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    objects = _compiled_objects()
    assert len(objects) > 100
    for where, obj in objects:
        assert render(obj) == reference(obj), where  # and none is left to the dumper
        assert render(obj) == reference(obj, _PythonDumper), where


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_files_are_the_bytes_compile_writes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    paths, values = CASES[name]
    result = compile_paths([str(ROOT / p) for p in paths], values=values)
    outputs = [*result.outputs, *result.pipeline_jobs]
    objects = [obj for out in sorted(outputs, key=lambda o: (o.wave, o.path)) for obj in manifest_dicts(out.objects)]
    text = render_stream(outputs)
    assert text == "---\n".join(reference(obj) for obj in objects)
    assert text == (GOLDEN / f"{name}.yaml").read_text(encoding="utf-8")


def test_every_example_compiles_to_the_dumpers_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every example file and folder that compiles on its own (the golden cases leave some out)."""
    monkeypatch.chdir(ROOT)
    checked = 0
    for path in sorted((ROOT / "examples").rglob("*")):
        if "invalid" in path.parts or not (path.is_dir() or path.suffix in (".yaml", ".py")):
            continue
        result = compile_paths([str(path)])
        if not result.ok:
            continue  # a job whose runtime is in another file, a template without values, not a spec
        for out in [*result.outputs, *result.pipeline_jobs]:
            for obj in manifest_dicts(out.objects, gitops="argocd"):
                assert dump_objects([obj]) == reference(obj), path
                checked += 1
    assert checked > 100


# --- generated objects --------------------------------------------------------------------------------

# Characters where the emitters' choices turn: indicators, quotes, breaks, controls, tabs, spaces,
# the characters emit re-dumps in ASCII, non-BMP, BOM, NBSP, digits and letters of YAML 1.1 scalars.
_TRICKY = [
    *"ab:#-?'\" \n\t\r,[]{}&*!|>%@`~.=<0123456789eExXoObB+_yYnNtTfF/\\",
    *"\x00\x07\x1b\x7f\x85\x9f\xa0\xad\u061c\u200e\u200f\u2028\u2029\u202a\u202e\u2066\u2069\ufeff\ufffe\uffff",
    *"é日\U0001f600\U00010000\u0301",
]
# The characters the writer takes itself (the rest make it hand the object to the dumper).
_WRITERS = [c for c in _TRICKY if (c.isascii() and c not in "\t\r\x00\x07\x1b\x7f") or c in "\xa0\xadé日\u0301"]
_LITERALS = [
    *["", " ", "  ", "-", "--", "---", "--- a", "...", "....", "?", "? a", ":", ": a", "a:", "a:b", "a: b"],
    *["a #b", "a#b", "#a", "- a", "-a", "yes", "No", "ON", "y", "~", "null", "NULL", "<<", "=", "!", "&a"],
    *["*a", "1_000", "0x1F", "0o17", "017", "0b101", "+1", "-1.5", "1e3", "3e-4", ".inf", "-.Inf", ".NaN"],
    *["1:20", "190:20:30", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "1.0e+17"],
    *["a\n", "a\n\n", "\n", "\n\n", "\na", " a\nb", "a \nb", "a\n b", "a\n\nb", "a\n \nb", "a\nb ", "a\n\tb"],
    *["a\r\nb", "a\rb", "it's", "'a'", '"a"', "a'b", "a\\b", "x" * 120, "x" * 121, "é" * 60, "é" * 61],
]


def _strings(alphabet: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Short strings, multi-line text and space-separated words over ``alphabet``, and the literals."""
    short = st.one_of(st.text(alphabet=alphabet, max_size=10), st.sampled_from(_LITERALS))
    return st.one_of(
        short, st.lists(short, min_size=1, max_size=4).map("\n".join), st.lists(short, max_size=4).map(" ".join)
    )


def _documents(strings: st.SearchStrategy[str], keys: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[Any, Any]]:
    scalars = st.one_of(
        strings,
        st.integers(),
        st.booleans(),
        st.none(),
        st.floats(allow_nan=False),
        st.sampled_from([1e17, 1e-5, -0.0, math.inf, -math.inf, 1.5e300]),
    )
    trees = st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
        max_leaves=20,
    )
    return st.dictionaries(keys, trees, max_size=5)


# Objects mostly within the writer's reach (its quoting decisions are what is tested), and objects
# of any text (most of them handed to the dumper: what is tested is that the writer never takes one
# it would write differently).
_WRITERS_TEXT = _strings(st.sampled_from(_WRITERS))
_ANY_TEXT = _strings(st.one_of(st.characters(exclude_categories=["Cs"]), st.sampled_from(_TRICKY)))
_WRITERS_KEYS = st.one_of(
    st.text(alphabet=st.sampled_from([c for c in _WRITERS if c != "\n"]), min_size=1),
    st.sampled_from([v for v in _LITERALS if v.isprintable()]),
)
_WRITERS_DOCUMENTS = _documents(_WRITERS_TEXT, _WRITERS_KEYS)
_ANY_DOCUMENTS = _documents(_ANY_TEXT, st.one_of(_ANY_TEXT, st.integers(), st.none()))
_EXAMPLES = int(os.environ.get("TRAINSPEC_WRITER_EXAMPLES", "300"))
_SETTINGS = settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_WRITERS_DOCUMENTS)
def test_generated_objects_are_written_as_the_dumper_writes_them(obj: dict[Any, Any]) -> None:
    event("written by the writer" if _same_everywhere(obj) else "left to the dumper")
    assert yaml.safe_load(dump_objects([obj])) == obj  # and they read back as the same objects


@_SETTINGS
@given(_ANY_DOCUMENTS)
def test_objects_of_any_text_are_written_as_the_dumper_writes_them(obj: dict[Any, Any]) -> None:
    event("written by the writer" if _same_everywhere(obj) else "left to the dumper")
    assert yaml.safe_load(dump_objects([obj])) == obj


@_SETTINGS
@given(st.one_of(st.text(), _ANY_TEXT))
def test_any_string_as_a_value_a_key_and_an_item(value: str) -> None:
    for obj in _placements(value):
        event("written by the writer" if _same_everywhere(obj) else "left to the dumper")
        assert yaml.safe_load(dump_objects([obj])) == obj


@settings(max_examples=max(_EXAMPLES // 5, 20), deadline=None)
@given(st.lists(_WRITERS_DOCUMENTS, max_size=4))
def test_a_stream_reads_back_as_its_objects(objects: list[dict[Any, Any]]) -> None:
    text = dump_objects(objects)
    assert text == "---\n".join(reference(obj) for obj in objects)
    assert [doc or {} for doc in yaml.safe_load_all(text)] == objects


def _placements(value: str) -> list[dict[Any, Any]]:
    """``value`` as a value, a key, an item, in a block at depth, and in a nested sequence."""
    return [{"k": value}, {value: 1}, {"k": [value, {"k": value}, [value]]}, {"a": {"b": [{"c": value}]}}]


_LONG = ["word " * 20000, "a" * 70000, "a " * 3000 + "b", "x: " * 5000, "long line\n" * 3000, "é " * 9000]


@pytest.mark.parametrize("value", [*_LITERALS, *_TRICKY, *_LONG])
def test_each_tricky_string_as_a_value_a_key_and_an_item(value: str) -> None:
    for obj in _placements(value):
        _same_everywhere(obj)
        assert yaml.safe_load(dump_objects([obj])) == obj


def test_what_the_compiler_emits_is_the_writers_and_the_rest_the_dumpers() -> None:
    """The common shapes take the fast path; anything else is written by PyYAML, unchanged."""
    common = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"kueue.x-k8s.io/max-exec-time-seconds": "1800"}, "annotations": {}},
        "data": {"script.sh": "#!/bin/sh\nset -e\n\necho 'a: b' # c\n", "x": "  indented\nlines", "y": []},
        "spec": {"args": ["--lr", "3e-4", "a: b", "- a", ""], "n": 8, "on": True, "f": 0.5, "none": None},
    }
    assert render(common) == reference(common)
    shared: list[str] = ["a"]
    for left_to_the_dumper in (
        {"a": shared, "b": shared},  # an anchor and an alias
        {"a": "tab\there"},  # double-quoted
        {"a": "line \nbreak"},  # a space before a break: double-quoted
        {"a": "kept\n\n"},  # "|+"
        {"a": "\u202eevil"},  # re-dumped in ASCII
        {"a": "\U0001f600"},  # escaped by libyaml only
        {"a": "x " * 9000},  # long enough to be folded
        {1: "a"},
        {"x" * 121: "a"},
        {"a": (1, 2)},  # a tuple is a sequence to the safe representer
        {"a": {1, 2}},  # and a set is !!set
    ):
        assert render(left_to_the_dumper) is None
        assert dump_objects([left_to_the_dumper]) == reference(left_to_the_dumper)


def test_the_writer_reads_plain_scalars_with_the_dumpers_resolver() -> None:
    from yaml.resolver import Resolver

    assert emit._Dumper.yaml_implicit_resolvers is Resolver.yaml_implicit_resolvers


def test_a_deep_or_cyclic_object_is_left_to_the_dumper() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(2000):
        node["a"] = {}
        node = node["a"]
    node["a"] = "b"
    # Deeper than the interpreter allows at its default limit (a library imported earlier in the
    # session may have raised it: hypothesis does while it runs), so pin the default here.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        assert render(deep) is None
    finally:
        sys.setrecursionlimit(limit)
    cyclic: dict[str, Any] = {"a": [1]}
    cyclic["a"].append(cyclic)
    assert render(cyclic) is None
    assert dump_objects([cyclic]) == reference(cyclic)  # &id001 ... *id001


def test_the_writers_caches_stay_bounded() -> None:
    from trainspec.compiler import yaml_writer

    writer = yaml_writer.Writer()
    for i in range(yaml_writer._CACHE_SIZE + 10):
        assert writer.render({f"k{i}": f"v{i}"}) == f"k{i}: v{i}\n"
    assert 0 < len(writer._values) <= yaml_writer._CACHE_SIZE and 0 < len(writer._keys) <= yaml_writer._CACHE_SIZE
    long = "x" * (yaml_writer._CACHED_LENGTH + 1)
    assert writer.render({"k": long}) == f"k: {long}\n" and long not in writer._values
    # Cached text is the same text: a second run through the caches writes the same bytes.
    assert writer.render({"k1": "v1", "k2": "yes"}) == yaml_writer.Writer().render({"k1": "v1", "k2": "yes"})


def test_the_ascii_shapes_agree_with_the_unicode_ones_on_ascii_text() -> None:
    """The writer checks ASCII values against patterns over printable ASCII (compiled at import)
    and the rest against the BMP-wide ones: on ASCII they must decide alike, character by
    character and on the shapes' edge cases."""
    from trainspec.compiler import yaml_writer

    ascii_shapes, unicode_shapes = yaml_writer._ASCII, yaml_writer._unicode()
    samples = [chr(c) for c in range(128)] + [
        "a: b",
        "a :b",
        "- a",
        "-a",
        "? x",
        ":x",
        "x:",
        "a #b",
        "a#b",
        " a",
        "a ",
        "---",
        "...",
        "a\nb",
        "a \nb",
        "a\n",
        "\n",
        "'q'",
        '"q"',
        "%x",
        "@x",
        "`x",
        "a,b",
        "[a]",
        "{a}",
        "&a",
        "*a",
        "!a",
        "|a",
        ">a",
        "a\tb",
    ]
    for text in samples:
        for shape in ("plain", "quotable", "block"):
            mine = getattr(ascii_shapes, shape).fullmatch(text) is not None
            assert mine == (getattr(unicode_shapes, shape).fullmatch(text) is not None), (shape, text)


# Go's YAML reader (gopkg.in/yaml.v2, behind kubectl, Argo CD and Flux), as its resolve() reads a
# plain scalar, written out here from its rules: a first character of + - or a digit makes it
# drop every "_" and try Go's ParseInt/ParseUint with base 0 (0x 0X 0b 0B 0o 0O, a leading 0 for
# octal), then its YAML float pattern; a leading "." tries ParseFloat; then a table of words.
_GO_INT = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)")
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_WORDS = {"", "~", "<<", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON"}
_GO_WORDS |= {"off", "Off", "OFF", "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL"}
_GO_WORDS |= {".nan", ".NaN", ".NAN"}
_GO_WORDS |= {f"{sign}.{inf}" for sign in ("", "+", "-") for inf in ("inf", "Inf", "INF")}


def _go_reads_as_other_than_text(text: str) -> bool:
    if text in _GO_WORDS:
        return True
    if text[:1] == ".":
        return re.fullmatch(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?", text) is not None
    if text[:1] and text[0] in "+-0123456789":
        plain = text.replace("_", "")
        return bool(_GO_INT.fullmatch(plain) or _GO_FLOAT.fullmatch(plain))
    return False


def test_no_string_is_written_plain_that_gos_reader_takes_for_something_else() -> None:
    """Every string of up to four characters over the characters numbers are made of: written
    plain only when Go's reader keeps it text (``0X1F``, ``-_1`` and ``1e_5`` were written plain)."""
    import itertools

    alphabet = "0159+-._eExXbBoO"
    wrong = [
        text
        for size in range(1, 5)
        for text in map("".join, itertools.product(alphabet, repeat=size))
        if _go_reads_as_other_than_text(text) and render({"v": text}) == f"v: {text}\n"
    ]
    assert wrong == [], wrong[:20]
    for text in ("0X1F", "0B101", "0O17", "-_1", "1e_5", "1.5e1_0", "0_x1F"):
        assert render({"v": text}) == f"v: '{text}'\n"
        assert dump_objects([{"v": text}]).endswith(f"v: '{text}'\n")  # the dumper's choice is the writer's
    assert render({"v": "0x1G"}) == "v: 0x1G\n" and render({"v": "_1"}) == "v: _1\n"  # text to every reader


_HOSTILE = st.sampled_from(
    ["\U0001f389", "\U0010fffd", "\x85", "\r", "\u2028", "\ufeff", "\x1b", "'", '"', ":", "#", " "]
)
_LINE = st.text(st.one_of(st.characters(exclude_categories=["Cs"], exclude_characters="\n"), _HOSTILE), max_size=12)


@_SETTINGS
@given(_documents(_LINE, _LINE))
def test_an_install_without_libyaml_writes_the_same_bytes(obj: dict[Any, Any]) -> None:
    """What the writer leaves to the dumper comes out of PyYAML's pure-Python emitter as libyaml
    writes it (an emoji was written raw and plain there, escaped and double-quoted by libyaml).
    Strings without a line feed: a keep-chomped block (``|+``) before more keys still ends the
    document with ``...`` under libyaml only."""
    assert emit._Dumper.__mro__[1] is yaml.CSafeDumper  # the reference below is libyaml's
    assert reference(obj, _PythonDumper) == reference(obj)


def test_an_emoji_is_written_as_libyaml_writes_it_by_either_dumper() -> None:
    obj = {"env": [{"name": "MSG", "value": "done \U0001f389"}]}
    expected = 'env:\n- name: MSG\n  value: "done \\U0001F389"\n'
    assert reference(obj, _PythonDumper) == reference(obj) == dump_objects([obj]) == expected
