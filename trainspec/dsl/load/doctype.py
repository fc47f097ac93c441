"""Is a YAML document a trainspec spec, someone else's document, or a spec gone wrong?

Spec files may sit beside other YAML (Kubernetes manifests, values files, kustomizations),
so a document with another ``apiVersion`` is left alone. But a spec is never skipped just
because its ``apiVersion`` was mistyped: a document that *looks like* a spec and is not read
as one is an error (design: "Nothing vanishes"). Evidence that a document is meant as a spec:

* its ``apiVersion`` group is close to ``trainspec.dev`` (``trainspec.dv``, ``Trainspec.dev``,
  ``trainspec.dev`` without a version) -> TS111 with a did-you-mean;
* its ``kind`` is a trainspec kind or a close misspelling of one (``TrainingJobs``,
  ``Runtim``), unless its ``spec`` plainly is another tool's (a mapping with none of trainspec's
  fields: SageMaker's ``TrainingJob``, OpenShift's ``Project``). Kubeflow's real kinds
  (``TrainJob``, ``TrainingRuntime``...) are never taken for misspellings -> TS114;
* it has no ``apiVersion`` (or only a misspelled key such as ``apiVesion``) and its ``spec``
  holds two or more trainspec fields (``runtime``, ``nodes``, ``framework``...) -> TS114;
* whatever its ``apiVersion`` and ``kind``, its ``spec`` holds three or more trainspec fields:
  no other tool's resource has ``runtime``, ``procsPerNode`` and ``maxRunTime`` together -> TS114.

Everything else is foreign and is returned as such (``--verbose`` lists it).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.load.strict_yaml import SourceDoc
from trainspec.dsl.load.validation import error_at
from trainspec.dsl.record import TupleRecord
from trainspec.dsl.spec.models import API_GROUP, API_VERSION

#: Kinds a trainspec document may declare.
OUR_KINDS = ("TrainingJob", "Runtime", "Pipeline", "Project")
#: Real kinds of neighbouring tools that a fuzzy match would take for ours.
FOREIGN_KINDS = frozenset(
    {
        "TrainJob",
        "TrainingRuntime",
        "ClusterTrainingRuntime",
        "AppProject",
        "ProjectRequest",
        "RuntimeClass",
        "ServingRuntime",
        "ClusterServingRuntime",
        "PyTorchJob",
        "TFJob",
        "MPIJob",
        "XGBoostJob",
        "PaddleJob",
        "JAXJob",
        "Job",
        "CronJob",
        "TrainedModel",
    }
)
_CUTOFF = 0.8
#: ``spec`` fields shared with no other tool's resources needed to call a document a spec.
_FIELDS_WITHOUT_API_VERSION = 2
_FIELDS_WHATEVER_THE_HEADER = 3


class Verdict(TupleRecord):
    """``spec``: read it as a spec; else ``problem`` (an error) or neither (a foreign document)."""

    spec: bool = False
    problem: Diagnostic | None = None


@lru_cache(maxsize=1)
def spec_fields() -> frozenset[str]:
    """Wire names of the ``spec`` fields of TrainingJob and Runtime."""
    from trainspec.dsl.spec.models import KINDS

    names: set[str] = set()
    for model in KINDS.values():
        spec_model = model.model_fields["spec"].annotation
        for name, field in getattr(spec_model, "model_fields", {}).items():
            names.add(field.alias or name)
    return frozenset(names)


def classify(doc: SourceDoc) -> Verdict:
    """Decide what ``doc`` is (see the module docstring)."""
    data = doc.data
    api = data.get("apiVersion")
    if isinstance(api, str) and api.startswith(API_GROUP + "/") and "kind" in data:
        # The common case, decided without scanning the spec's fields (spec_sources decides it
        # too, before importing this module).
        return Verdict(spec=True)
    av_key = "apiVersion" if "apiVersion" in data else _near_key(data, "apiVersion")
    kind_key = "kind" if "kind" in data else _near_key(data, "kind")
    api_version = data.get(av_key) if av_key else None
    kind = data.get(kind_key) if kind_key else None
    ours = _our_kind(kind)
    fields = _trainspec_fields(data.get("spec"))
    if av_key == "apiVersion" and isinstance(api_version, str) and api_version.startswith(API_GROUP + "/"):
        if kind_key not in (None, "kind"):
            return Verdict(
                problem=_at_key(
                    doc,
                    kind_key,
                    codes.UNKNOWN_KIND,
                    f"unknown key {kind_key!r}, and no kind",
                    f"did you mean kind? (kind: {ours or 'TrainingJob'})",
                )
            )
        return Verdict(spec=True)
    fix = f"apiVersion: {API_VERSION}" + (f" and kind: {ours}" if ours and ours != kind else "")
    if av_key is not None and av_key != "apiVersion":
        if _near_group(api_version) or ours or len(fields) >= _FIELDS_WITHOUT_API_VERSION:
            return Verdict(
                problem=_at_key(
                    doc,
                    av_key,
                    codes.NOT_READ_AS_SPEC,
                    f"unknown key {av_key!r}, and no apiVersion: the document is not read as a spec",
                    f"did you mean apiVersion? ({fix})",
                )
            )
        return Verdict()
    if isinstance(api_version, str) and api_version.strip():
        if _near_group(api_version):
            return Verdict(
                problem=_at_value(
                    doc,
                    codes.UNSUPPORTED_API_VERSION,
                    f"apiVersion {api_version!r} is not a trainspec apiVersion",
                    f"did you mean {fix}?",
                )
            )
        other_tools = isinstance(data.get("spec"), dict) and data["spec"] and not fields
        if (ours and not other_tools) or len(fields) >= _FIELDS_WHATEVER_THE_HEADER:
            what = (
                _fields_phrase(fields)
                if not ours
                else (
                    f"kind {kind} is a trainspec kind"
                    if ours == kind
                    else f"kind {kind!r} looks like trainspec's {ours}"
                )
            )
            return Verdict(
                problem=_at_value(
                    doc,
                    codes.NOT_READ_AS_SPEC,
                    f"{what}, but apiVersion is {api_version}",
                    f"use {fix}; documents of other groups are not read as specs",
                )
            )
        return Verdict()
    # No apiVersion at all (or an empty or non-string one).
    if ours or len(fields) >= _FIELDS_WITHOUT_API_VERSION:
        what = (
            _fields_phrase(fields)
            if not ours
            else (f"kind {kind}" if ours == kind else f"kind {kind!r} (trainspec's {ours}?)")
        )
        where = "apiVersion" in data
        message = f"document has {what} but {'no usable' if where else 'no'} apiVersion: not read as a spec"
        problem = (
            _at_value(doc, codes.NOT_READ_AS_SPEC, message, f"add {fix}")
            if where
            else _at_start(doc, message, f"add {fix}")
        )
        return Verdict(problem=problem)
    return Verdict()


def _fields_phrase(fields: list[str]) -> str:
    shown = ", ".join(fields[:4]) + (", ..." if len(fields) > 4 else "")
    return f"spec has trainspec fields ({shown})"


def _near_key(data: dict[str, Any], wanted: str) -> str | None:
    """A key that is a misspelling of ``wanted`` (``apiVesion``, ``api_version``, ``Kind``)."""
    import difflib  # here, not at the top: a well-formed spec never needs it (start-up time)

    folded = {k.lower().replace("_", "").replace("-", ""): k for k in data if isinstance(k, str)}
    if wanted.lower() in folded:
        return folded[wanted.lower()]
    if len(wanted) < 6:  # short keys (kind): only case and separators, else "kinds"/"kimd" style slips
        close = difflib.get_close_matches(
            wanted, [k for k in data if isinstance(k, str) and len(k) <= 6], n=1, cutoff=0.75
        )
        return close[0] if close else None
    close = difflib.get_close_matches(wanted, [k for k in data if isinstance(k, str)], n=1, cutoff=_CUTOFF)
    return close[0] if close else None


def _near_group(api_version: Any) -> bool:
    """Whether ``api_version``'s group is (nearly) ``trainspec.dev``."""
    import difflib

    if not isinstance(api_version, str):
        return False
    group = api_version.strip().split("/", 1)[0].lower()
    if group == API_GROUP or group.split(".")[0] == "trainspec":
        return True
    return difflib.SequenceMatcher(None, group, API_GROUP).ratio() >= _CUTOFF


def _our_kind(kind: Any) -> str | None:
    """The trainspec kind ``kind`` is or nearly is (None when it is another tool's)."""
    import difflib

    if not isinstance(kind, str) or not kind or kind in FOREIGN_KINDS:
        return None
    if kind in OUR_KINDS:
        return kind
    by_case = {k.lower(): k for k in OUR_KINDS}
    if kind.lower() in by_case:
        return by_case[kind.lower()]
    close = difflib.get_close_matches(kind, OUR_KINDS, n=1, cutoff=_CUTOFF)
    return close[0] if close else None


def _trainspec_fields(spec: Any) -> list[str]:
    if not isinstance(spec, dict):
        return []
    known = spec_fields()
    return [k for k in spec if isinstance(k, str) and k in known]


def _at_key(doc: SourceDoc, key: str, code: Code, message: str, hint: str) -> Diagnostic:
    return error_at(doc, code, (key,), doc.keys.get((key,), doc.start), message, hint=hint)


def _at_value(doc: SourceDoc, code: Code, message: str, hint: str) -> Diagnostic:
    return error_at(doc, code, ("apiVersion",), doc.mark(("apiVersion",)), message, hint=hint)


def _at_start(doc: SourceDoc, message: str, hint: str) -> Diagnostic:
    return error_at(doc, codes.NOT_READ_AS_SPEC, (), doc.start, message, hint=hint)
