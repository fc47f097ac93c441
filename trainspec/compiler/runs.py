"""A job's runs: the name, labels and id of the object that runs a job, decided from its content.

A spec in Git is edited many times. The engines refuse most in-place changes of a running job
(Trainer's TrainJob has ``self == oldSelf`` on ``spec.trainer``, ``spec.runtimeRef``,
``spec.activeDeadlineSeconds``, ...; the other engines' controllers ignore or refuse them), so a
change to what a job *runs* becomes a **new run of the same job**:

* The run id is a short digest of the run object as emitted (its ``spec`` and the Kueue labels
  that the admission webhook treats as immutable: the queue and the maximum execution time;
  whether it has a priority class, not which), plus ``spec.rerun`` when a user bumps it. The
  object is named ``<job>-<run id>`` and labelled ``trainspec.dev/job`` and ``trainspec.dev/run``;
  its pods carry both labels and ``TRAINSPEC_RUN_ID``.
* Metadata that may change in place (the job's own labels and annotations) is not part of the id:
  editing it updates the running job.
* The checkpoint claim keeps the job's name (``<job>-checkpoints``), so a new run resumes from the
  newest checkpoint; the in-pod lease (:mod:`trainspec.stages.lease`) keeps two runs from writing
  at once while a GitOps sync has created the new run and not yet pruned the old one.
* ``runs: replace`` keeps the object's name: the GitOps controller is told to delete and recreate
  it (Argo CD ``Force=true,Replace=true``, Flux ``force: enabled``; see :mod:`trainspec.compiler.emit`).

The id is computed from the lowered object, not from the spec: a trainspec upgrade that changes
what a job emits gives it a new run too, instead of an update the API server refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainspec.dsl.spec.models import RunPolicy
from trainspec.dsl.spec.semantics import RUN_ID_PLACEHOLDER
from trainspec.k8s.wellknown import (
    FLUX_FORCE_ANNOTATION,
    JOB_LABEL,
    MAX_EXEC_TIME_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    RUN_LABEL,
    SYNC_OPTIONS_ANNOTATION,
)

if TYPE_CHECKING:
    from trainspec.compiler.lower.dialects import Lowered
    from trainspec.compiler.plan import JobPlan

#: Characters of a run id: 30 bits of the digest, in Kubernetes' name alphabet.
RUN_ID_LENGTH = 6
#: What a run adds to the job's name: ``-`` and the id.
RUN_SUFFIX_LENGTH = 1 + RUN_ID_LENGTH
#: Lowering writes this where the run id goes (pod labels, ``TRAINSPEC_RUN_ID``); :func:`finish`
#: computes the id with it in place (the id cannot be part of what it digests) and then puts the
#: id there. A valid label value, so every rule that looks at a lowered object accepts it.
PLACEHOLDER = RUN_ID_PLACEHOLDER  # a spec value equal to it is TS316
#: The job object's labels that Kueue's webhook refuses to change on a running job: part of a run.
RUN_DEFINING_LABELS = (QUEUE_NAME_LABEL, MAX_EXEC_TIME_LABEL)
#: Kueue lets a running job move to another priority class, but not gain or lose one: whether the
#: label is there is part of a run, its value is not (a new priority updates the run in place).
#: ``runs: replace``: the GitOps controller deletes and recreates the job object when the API
#: server refuses its update (Argo CD: Force with Replace; Flux: force).
RECREATE_ANNOTATIONS = ((SYNC_OPTIONS_ANNOTATION, "Force=true,Replace=true"), (FLUX_FORCE_ANNOTATION, "enabled"))
#: The kinds that run a job, per engine: the object a run renames.
RUN_KINDS = frozenset({"TrainJob", "RayJob", "PyTorchJob", "JAXJob", "MPIJob"})


def suffix_length(plan: JobPlan) -> int:
    """How many characters a run adds to the job's name (0 with ``runs: replace``)."""
    return 0 if plan.resolved.job.spec.runs is RunPolicy.REPLACE else RUN_SUFFIX_LENGTH


def run_object_name(plan: JobPlan, run_id: str) -> str:
    """The name of the object that runs ``plan``'s job in run ``run_id``."""
    name = plan.resolved.name
    return name if plan.resolved.job.spec.runs is RunPolicy.REPLACE else f"{name}-{run_id}"


def run_digest(document: dict[str, Any], rerun: int = 0) -> str:
    """The run id of an emitted run object (a plain dict, as rendered, with the placeholder)."""
    import hashlib
    import json

    metadata = document.get("metadata") or {}
    labels = metadata.get("labels") or {}
    defining = {
        "apiVersion": document.get("apiVersion"),
        "kind": document.get("kind"),
        "namespace": metadata.get("namespace"),
        "labels": {key: labels[key] for key in RUN_DEFINING_LABELS if key in labels},
        "prioritized": PRIORITY_CLASS_LABEL in labels,
        "spec": document.get("spec"),
    }
    if rerun:
        defining["rerun"] = rerun
    canonical = json.dumps(defining, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    digest = hashlib.sha256(canonical).digest()
    # base32 (RFC 4648), lowercased: a-z and 2-7 only, a valid part of a name and a label value.
    # The id is the encoding's first characters, 5 bits each from the digest's first bits.
    bits = int.from_bytes(digest[:4], "big") >> (32 - 5 * RUN_ID_LENGTH)
    return "".join(_BASE32[(bits >> (5 * place)) & 31] for place in reversed(range(RUN_ID_LENGTH)))


_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"


def finish(plan: JobPlan, lowered: list[Lowered]) -> list[Lowered]:
    """``lowered`` (one job's objects) with the run id in place: the run object renamed and labelled."""
    from trainspec.compiler.lower.dialects import Lowered
    from trainspec.k8s import to_dict

    runs = [item for item in lowered if getattr(item.obj, "kind", None) in RUN_KINDS]
    if len(runs) != 1:
        return lowered  # nothing runs (or a shape no engine emits): nothing to name
    run_id = run_digest(to_dict(runs[0].obj), plan.resolved.job.spec.rerun)
    out: list[Lowered] = []
    for item in lowered:
        obj = substitute(item.obj, PLACEHOLDER, run_id)
        if item is runs[0]:
            replace = plan.resolved.job.spec.runs is RunPolicy.REPLACE
            obj = _rename(obj, run_object_name(plan, run_id), plan.resolved.name, run_id, replace)
        out.append(Lowered(obj, item.sources))
    return out


def _rename(obj: Any, name: str, job: str, run_id: str, replace: bool) -> Any:
    metadata = obj.metadata
    labels = {**(metadata.labels or {}), JOB_LABEL: job, RUN_LABEL: run_id}
    annotations = metadata.annotations
    if replace:  # both controllers' words, whichever applies the tree; the job's own win
        annotations = dict(sorted({**dict(RECREATE_ANNOTATIONS), **(annotations or {})}.items()))
    from trainspec.k8s.base import with_fields

    metadata = with_fields(metadata, {"name": name, "labels": dict(sorted(labels.items())), "annotations": annotations})
    return with_fields(obj, {"metadata": metadata})


def substitute(value: Any, old: str, new: str) -> Any:
    """``value`` (a typed model, list, dict or scalar) with every string equal to ``old`` replaced.

    Only whole strings are replaced (never a part of one), and unchanged parts are returned as
    they are (the same objects), so the cost is one walk of the object.
    """
    from trainspec.k8s.base import given_fields, with_fields  # dataclasses: not among validate's imports

    return _walk(value, old, new, given_fields, with_fields)


#: Values that hold no string to replace, by their exact type (bool is an int subclass: listed).
_LEAVES = frozenset({int, float, bool, type(None)})


# A module-level function, not a closure: a recursive closure is a reference cycle that keeps
# every object it walked alive until the next full collection (tests/compiler/test_no_reference_cycles.py).
# It runs over every object of every job: scalars are decided inline, without a call each.
def _walk(value: Any, old: str, new: str, fields_of: Any, rebuild: Any) -> Any:
    kind = type(value)
    if kind is str:
        return new if value == old else value
    if kind in _LEAVES:
        return value
    if kind is list:
        items = [
            (new if item == old else item) if type(item) is str else _walk(item, old, new, fields_of, rebuild)
            for item in value
        ]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if kind is dict:
        pairs = {
            (new if k == old else k) if type(k) is str else _walk(k, old, new, fields_of, rebuild): (
                (new if v == old else v) if type(v) is str else _walk(v, old, new, fields_of, rebuild)
            )
            for k, v in value.items()
        }
        same = all(a is b for a, b in zip(pairs.values(), value.values(), strict=True)) and list(pairs) == list(value)
        return value if same else pairs
    if getattr(kind, "__dataclass_fields__", None) is None:  # not a model: kept as it is
        if isinstance(value, str):  # a str subclass (an enum's value): compared as text
            return new if value == old else value
        return value
    changes = {}
    for name, current in fields_of(value):  # the fields given: most of a model's are not
        kind = type(current)
        if kind in _LEAVES:
            continue
        if kind is str:
            if current == old:
                changes[name] = new
            continue
        updated = _walk(current, old, new, fields_of, rebuild)
        if updated is not current:
            changes[name] = updated
    return rebuild(value, changes) if changes else value


__all__ = [
    "PLACEHOLDER",
    "RECREATE_ANNOTATIONS",
    "RUN_DEFINING_LABELS",
    "RUN_ID_LENGTH",
    "RUN_KINDS",
    "RUN_SUFFIX_LENGTH",
    "finish",
    "run_digest",
    "run_object_name",
    "substitute",
    "suffix_length",
]
