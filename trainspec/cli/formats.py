"""``-o json|yaml|wide|name`` for ``status`` and ``list``: the option and the renderers.

``-o`` is ``--output``, and ``--format`` its older long form: ``--format json`` is ``-o json``.
The forms, as kubectl users expect them:

* ``text`` (default): ``status`` prints each job's lines, ``list`` a table;
* ``wide``: the same, plus who the TrainJob is (the trainspec job it is a run of, the run id,
  its runtime, its Kueue LocalQueue) and where its pods run (the Kubernetes node of each);
* ``json`` / ``yaml``: trainspec's reading of each job (``JobView.to_dict``: phase, Kueue's word,
  pods, progress, times, the wide fields), an object for ``status JOB``, else a list. YAML is the
  same data as JSON, keys sorted: deterministic, diffable. For the TrainJob object itself, use
  ``kubectl get trainjob NAME -o yaml``;
* ``name``: ``trainjob.trainer.kubeflow.org/NAME``, one a line, as ``kubectl -o name`` prints
  (no namespace), to pipe into ``xargs``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from typing import Any

from trainspec.k8s.wellknown import TRAINER_GROUP

FORMS = ("text", "json", "yaml", "wide", "name")
#: How ``-o name`` and kubectl name a TrainJob: resource.group/NAME.
TRAINJOB_RESOURCE = f"trainjob.{TRAINER_GROUP}"


def add_output_option(parser: argparse.ArgumentParser) -> None:
    """``-o/--output`` (``--format`` is its long form): text, json, yaml, wide or name."""
    parser.add_argument(
        "-o",
        "--output",
        "--format",
        dest="format",
        choices=FORMS,
        default="text",
        help="output form: text (default), wide (also job, run, runtime, queue and the node of each pod), "
        "json or yaml (the same data), name (trainjob.trainer.kubeflow.org/NAME, as kubectl -o name)",
    )


def diagnostics_format(form: str) -> str:
    """How diagnostics are written for an output form: JSON for ``-o json``, else text."""
    return "json" if form == "json" else "text"


def data(views: Sequence[Any], *, many: bool) -> Any:
    """The JSON/YAML data: one job's dict, or a list of them."""
    items = [v.to_dict() for v in views]
    return items if many else items[0]


def dump(value: Any, form: str) -> str:
    """``value`` as JSON (indented, keys sorted) or YAML (block style, keys sorted), newline-terminated."""
    if form == "json":
        return json.dumps(value, indent=2, sort_keys=True) + "\n"
    import yaml

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    # Round-trip through JSON first: YAML then holds exactly the JSON's types and nothing else.
    text: str = yaml.dump(
        json.loads(json.dumps(value)),
        Dumper=dumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 16,
    )
    return text


def names(views: Sequence[Any]) -> str:
    """``-o name``: one ``trainjob.trainer.kubeflow.org/NAME`` a line."""
    return _text(f"{TRAINJOB_RESOURCE}/{v.name}" for v in views)


def status_text(views: Sequence[Any], form: str, *, many: bool) -> str:
    """What ``trainspec status`` prints for ``views`` in ``form``."""
    if form in ("json", "yaml"):
        return dump(data(views, many=many), form)
    if form == "name":
        return names(views)
    lines: list[str] = []
    for v in views:
        lines += v.lines()
        if form == "wide":
            lines += wide_lines(v)
    return _text(lines)


def wide_lines(v: Any) -> list[str]:
    """What ``-o wide`` adds to a job's status: who it is, and the node of each pod."""
    who = []
    if v.job:
        who.append(f"job {v.job}" + (f", run {v.run}" if v.run else ""))
    if v.runtime:
        who.append(f"runtime {v.runtime}")
    queue = v.queue_name or (v.queue.queue if v.queue is not None else "")
    if queue:
        who.append(f"queue {queue}")
    out = ["  " + "; ".join(who)] if who else []
    for group in v.groups:
        for index, pod in sorted(group.newest.items()):
            node = group.nodes.get(index)
            out.append(f"  {group.name}-{index}: pod {pod} " + (f"on {node}" if node else "(not scheduled)"))
    return out


def list_text(views: Sequence[Any], form: str) -> str:
    """What ``trainspec list`` prints for ``views`` in ``form`` (a table for text and wide)."""
    if form in ("json", "yaml"):
        return dump(data(views, many=True), form)
    if form == "name":
        return names(views)
    from trainspec.kube.state import human_duration

    wide = form == "wide"
    head = ["NAMESPACE", "NAME", "PHASE", "PODS", "AGE"]
    if wide:
        head += ["JOB", "RUN", "RUNTIME", "QUEUE", "NODES"]
    rows = [head]
    details = ["DETAIL"]
    for v in views:
        ready = sum(g.ready for g in v.groups)
        total = sum(g.pods for g in v.groups)
        age = human_duration(v.age_seconds) if v.age_seconds is not None else "-"
        row = [v.namespace, v.name, v.phase, f"{ready}/{total}", age]
        if wide:
            nodes = sorted({n for g in v.groups for n in g.nodes.values()})
            queue = v.queue_name or (v.queue.queue if v.queue is not None else "")
            row += [
                v.job or "-",
                v.run or "-",
                v.runtime.rpartition("/")[2] or "-",
                queue or "-",
                ",".join(nodes) or "-",
            ]
        rows.append(row)
        details.append(v.detail())
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    # DETAIL is free text: last, unpadded, and only when some job has one.
    show_detail = any(details[1:])
    out = []
    for row, detail in zip(rows, details, strict=True):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        out.append((line + ("  " + detail if show_detail and detail else "")).rstrip())
    return _text(out)


def _text(lines: Iterable[str]) -> str:
    """The lines for a terminal. Names, reasons and messages come from the API server (a Workload's
    message is any controller's words): a control or bidi character is shown escaped, never obeyed."""
    from trainspec.dsl.diagnostics import escape_text

    return "".join(escape_text(line, backslashes=False) + "\n" for line in lines)
