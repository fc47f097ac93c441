"""Differential test: the offline checker against what a real kube-apiserver said.

``../shared/apiserver-verdicts`` holds 77 objects, each sent to kube-apiserver 1.36 (server-side
apply, ``dryRun=All``, ``fieldValidation=Strict``, the CRDs of ``../shared/crds``, no webhooks)
with the verdict and message it gave (header lines ``# verdict:`` and ``# message:``). For every
file, the checker must:

* for the rules the API server itself enforces (TS500 structural schema and built-in
  validation, TS501 CEL): reach the same verdict; on a rejection, have a finding at every field
  the server named (the same field or one inside it); on a complete 422 answer (the server ran
  every rule), reject nothing the server did not name; evaluate every rule (no TS502) and know
  every kind (no TS504);
* for what it rejects beyond the server (admission webhooks, controllers: TS503 and others):
  say in the message which component would reject it.

The recorded verdicts are fixed data: regenerating them needs a kube-apiserver binary, which no
package registry ships. Under ``CI=true`` a missing ``../shared`` fails instead of skipping.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.check import check_manifest, check_manifests, load_crds
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.load.strict_yaml import load_file

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
VERDICTS = SHARED / "apiserver-verdicts"
CRDS = SHARED / "crds"
#: The API server's own rules: structural schema and built-in validation, CEL.
SERVER_CODES = frozenset({"TS500", "TS501"})
#: "Which component would reject it", as a finding beyond the API server must say.
COMPONENT = re.compile(
    r"\b(Trainer|JobSet|Kueue|KubeRay|Training Operator|MPI Operator|trainspec)('s)?"
    r"( [a-z-]+)? (webhook|controller|policy)\b"
)
#: Server paths that are not the path of the offending value in the object. The API server's
#: PVC validation names the storage request ``spec.resources[storage]`` (upstream's
#: ``fldPath.Child("resources").Key("storage")``); the value is ``spec.resources.requests.storage``.
PATH_ALIASES = {("spec", "resources", "storage"): ("spec", "resources", "requests", "storage")}
#: Rejections whose message names no field (the server failed converting the object), with the
#: field the object gets wrong.
UNNAMED_FIELDS = {"90-pvc-storage-lots.yaml": ("spec", "resources", "requests", "storage")}


def _require_shared() -> None:
    if VERDICTS.is_dir() and CRDS.is_dir():
        return
    message = f"{VERDICTS} or {CRDS} not found"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {message}: the differential test cannot run", pytrace=False)
    pytest.skip(message)


# -- the recorded verdicts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    name: str
    accepted: bool
    message: str
    manifest: dict[str, Any]

    @property
    def complete(self) -> bool:
        """The server ran every rule (a 422 without "some validation rules were not checked"):
        then it named every problem, and a finding it did not name is a false rejection."""
        return self.message.startswith("HTTP 422") and "rules were not checked" not in self.message


def _verdicts() -> list[str]:
    return sorted(p.name for p in VERDICTS.glob("*.yaml")) if VERDICTS.is_dir() else []


def _read(name: str) -> Verdict:
    path = VERDICTS / name
    text = path.read_text(encoding="utf-8")
    verdict = re.search(r"^# verdict: (ACCEPTED|REJECTED)$", text, re.MULTILINE)
    assert verdict, f"{name}: no '# verdict:' header"
    message = re.search(r"^# message: (.*)$", text, re.MULTILINE)
    docs, problems = load_file(path)
    assert [d for d in problems if d.severity is Severity.ERROR] == [] and len(docs) == 1, name
    # The project's YAML 1.1 loader and a plain reader agree on every file: the verdict never
    # hinges on how a scalar is read.
    assert docs[0].data == yaml.safe_load(text), name
    return Verdict(name, verdict.group(1) == "ACCEPTED", message.group(1) if message else "", docs[0].data)


# -- the server's message -> the fields it named --------------------------------------------------

# One error of a 422 list: "<path>: <reason>: ...", reasons as k8s.io/apimachinery field errors.
_FIELD_ERROR = re.compile(
    r"(?:^|(?<=\[)|(?<=, ))(<nil>|[.\w\[\]\"=/-]+): (?=Invalid value|Unsupported value|Required value|Too long"
    r"|Too many|Forbidden|Duplicate value|Not found|Internal error)"
)
# "... failed to create typed patch object (ns/name; group/version, Kind=K): <path>: <reason>"
_TYPED_PATCH = re.compile(r"failed to create typed patch object \([^)]*\): (\.[^:]+): ")
_FORMAT_PATH = re.compile(r"with format \w+ in ([\w.\[\]]+)")
_PART = re.compile(r"\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[(\w+)=\"([^\"]*)\"\]|\[([^\]\"]+)\]")


def server_fields(verdict: Verdict) -> list[tuple[str | int, ...]]:
    """The fields the server's message names, as paths into the object (one per error)."""
    message = verdict.message
    if verdict.accepted:
        return []
    patch = _TYPED_PATCH.search(message)
    if patch:
        return [_resolve(patch.group(1), verdict.manifest)]
    if not message.startswith("HTTP 422"):
        assert verdict.name in UNNAMED_FIELDS, f"{verdict.name}: no field in {message!r}"
        return [UNNAMED_FIELDS[verdict.name]]
    details = message.split(" is invalid: ", 1)[1]
    starts = list(_FIELD_ERROR.finditer(details))
    assert starts, f"{verdict.name}: cannot read {details!r}"
    out = []
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(details)
        text = details[match.end() : end]
        if "some validation rules were not checked" in text:
            continue  # the server's note that CEL was skipped, not an error of its own
        where = match.group(1)
        if where == "<nil>":  # a root-level rule; a format error names its field in the text
            named = _FORMAT_PATH.search(text)
            where = named.group(1) if named else ""
        out.append(_resolve(where, verdict.manifest))
    return out


def _resolve(text: str, manifest: Any) -> tuple[str | int, ...]:
    """A server field path (``.a.b[name="x"].c[0]``, ``a[key]``) as a path into ``manifest``:
    list-map keys become the index of the matching item."""
    parts: list[str | int] = []
    node = manifest
    for name, index, key_field, key_value, map_key in _PART.findall(text):
        part: str | int
        if name or map_key:
            part = name or map_key
        elif index:
            part = int(index)
        else:
            items = node if isinstance(node, list) else []
            matches = [i for i, item in enumerate(items) if isinstance(item, dict) and item.get(key_field) == key_value]
            assert matches, f"no item with {key_field}={key_value!r} at {parts}"
            part = matches[0]
        parts.append(part)
        node = _child(node, part)
    return PATH_ALIASES.get(tuple(parts), tuple(parts))


def _child(node: Any, part: str | int) -> Any:
    if isinstance(part, int):
        return node[part] if isinstance(node, list) and part < len(node) else None
    return node.get(part) if isinstance(node, dict) else None


# -- the checker's findings -> fields -------------------------------------------------------------

_OUR_PART = re.compile(r"\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")


def our_field(diagnostic: Diagnostic) -> tuple[str | int, ...]:
    """A finding's rendered path (``spec.a[2]['x.y/z']``) as a path tuple."""
    out: list[str | int] = []
    for name, index, quoted in _OUR_PART.findall(diagnostic.path):
        out.append(int(index) if index else name or re.sub(r"\\(.)", r"\1", quoted))
    return tuple(out)


def _within(ours: tuple[str | int, ...], theirs: tuple[str | int, ...]) -> bool:
    return ours[: len(theirs)] == theirs


def _errors(found: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in found if d.severity is Severity.ERROR]


def _show(found: list[Diagnostic]) -> str:
    return "\n".join(f"  {d.code} {d.path or '<root>'}: {d.message}" for d in found) or "  (none)"


# -- the tests ------------------------------------------------------------------------------------


def test_the_recorded_verdicts_are_there():
    _require_shared()
    names = _verdicts()
    assert len(names) == 77
    verdicts = [_read(n) for n in names]
    assert sum(v.accepted for v in verdicts) == 21
    assert all(v.message for v in verdicts if not v.accepted)


def test_a_missing_shared_folder_fails_under_ci_and_skips_otherwise(monkeypatch, tmp_path):
    monkeypatch.setattr(f"{__name__}.VERDICTS", tmp_path / "no-such-folder")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception):
        _require_shared()
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        _require_shared()


@pytest.fixture(scope="module")
def registry() -> Any:
    _require_shared()
    return load_crds([CRDS])


@pytest.mark.parametrize("name", _verdicts() or ["(no verdicts)"])
def test_server_rules_reach_the_servers_verdict(name, registry):
    verdict = _read(name)
    found = check_manifest(verdict.manifest, registry)
    unevaluated = [d for d in found if d.code in ("TS502", "TS504")]
    assert unevaluated == [], f"{name}: not checked offline:\n{_show(unevaluated)}"
    ours = [d for d in _errors(found) if d.code in SERVER_CODES]
    assert [d for d in _errors(found) if d.code not in SERVER_CODES] == []
    if verdict.accepted:
        assert ours == [], f"{name}: the server accepted it; offline:\n{_show(ours)}"
        return
    fields = server_fields(verdict)
    missed = [f for f in fields if not any(_within(our_field(d), f) for d in ours)]
    assert missed == [], f"{name}: the server rejected {missed} ({verdict.message}); offline:\n{_show(ours)}"
    if verdict.complete:
        extra = [d for d in ours if not any(_within(our_field(d), f) for f in fields)]
        assert extra == [], f"{name}: the server named only {fields}; offline also:\n{_show(extra)}"


@pytest.mark.parametrize("name", _verdicts() or ["(no verdicts)"])
def test_what_trainspec_rejects_beyond_the_server_names_the_component(name, registry):
    verdict = _read(name)
    found = check_manifests([(name, verdict.manifest)], [CRDS], policy=False)
    beyond = [d for d in _errors(found) if d.code not in SERVER_CODES]
    unnamed = [d for d in beyond if not COMPONENT.search(d.message)]
    assert unnamed == [], f"{name}: findings that do not say which component rejects:\n{_show(unnamed)}"
    if verdict.accepted:  # the server-rule subset of the full check accepts it too
        assert [d for d in _errors(found) if d.code in SERVER_CODES] == []


def test_trainspec_check_on_the_whole_folder_gives_the_same_verdicts(monkeypatch, tmp_path):
    """End to end, as ``trainspec check DIR --crds CRDS`` runs: read as files, located findings."""
    _require_shared()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # never the user's verdict cache
    from trainspec.check import CheckRequest, run_check

    report = run_check(CheckRequest([str(VERDICTS)], crds=[str(CRDS)]))
    assert report.files == 77
    by_file: dict[str, list[Diagnostic]] = {}
    for d in report.diagnostics:
        assert d.file is not None, d
        by_file.setdefault(Path(d.file).name, []).append(d)
    assert set(by_file) <= set(_verdicts())
    wrong = []
    for name in _verdicts():
        verdict = _read(name)
        ours = [d for d in _errors(by_file.get(name, [])) if d.code in SERVER_CODES]
        assert all(d.line for d in ours), f"{name}: findings without a line: {_show(ours)}"
        fields = server_fields(verdict)
        missed = [f for f in fields if not any(_within(our_field(d), f) for d in ours)]
        if verdict.accepted != (not ours) or missed:
            wrong.append(f"{name} ({'ACCEPTED' if verdict.accepted else 'REJECTED'}): {_show(ours)}")
    assert wrong == []


# -- the parsing above, on the shapes of message the server gives ---------------------------------


@pytest.mark.parametrize(
    ("message", "manifest", "expected"),
    [
        (
            'HTTP 422 Invalid: X "a" is invalid: spec.trainer.numNodes: Invalid value: -1: must be >= 0',
            {},
            [("spec", "trainer", "numNodes")],
        ),
        (
            (
                'HTTP 422 Invalid: X "a" is invalid: <nil>: Invalid value: "": Checked value must be of type integer '
                "with format int32 in spec.a.b"
            ),
            {},
            [("spec", "a", "b")],
        ),
        ('HTTP 422 Invalid: X "a" is invalid: <nil>: Invalid value: metadata.name must match', {}, [()]),
        (
            (
                'HTTP 422 Invalid: X "a" is invalid: [spec.x: Unsupported value: "M": supported values: "All", "Any", '
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid]"
            ),
            {},
            [("spec", "x")],
        ),
        (
            'HTTP 422 Invalid: X "a" is invalid: [spec.l: Invalid value: must be unique, spec.l: Invalid value: b]',
            {},
            [("spec", "l"), ("spec", "l")],
        ),
        (
            (
                "HTTP 500 : failed to create typed patch object (ns/a; g/v, Kind=X): "
                '.spec.jobs[name="b"].c: field not declared in schema'
            ),
            {"spec": {"jobs": [{"name": "a"}, {"name": "b"}]}},
            [("spec", "jobs", 1, "c")],
        ),
        (
            (
                'HTTP 422 Invalid: PersistentVolumeClaim "c" is invalid: spec.resources[storage]: Invalid value: "-5Gi": '
                "must be greater than zero"
            ),
            {},
            [("spec", "resources", "requests", "storage")],
        ),
    ],
)
def test_server_messages_are_read_field_by_field(message, manifest, expected):
    assert server_fields(Verdict("x.yaml", False, message, manifest)) == expected


def test_a_finding_matches_the_field_or_inside_it():
    finding = Diagnostic(code="TS500", message="m", path="metadata.labels['bad key']")
    assert our_field(finding) == ("metadata", "labels", "bad key")
    assert _within(our_field(finding), ("metadata", "labels"))
    assert not _within(our_field(finding), ("metadata", "annotations"))
    assert not _within(("spec",), ("spec", "x"))
