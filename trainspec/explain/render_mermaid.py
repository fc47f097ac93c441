"""Explanations as one Mermaid flowchart that GitHub renders: a subgraph per job.

Each job reads left to right: its Kueue queue, the data-sharding stage (when the job shards
data), the trainer pods with their GPUs, and where checkpoints go. Node ids are generated
(``j1_queue``), so nothing a user wrote ends up in the syntax; every label is quoted and
escaped with Mermaid's entity codes, so names with quotes or brackets cannot break the chart.
"""

from __future__ import annotations

from trainspec.compiler.sizing import human_bytes
from trainspec.explain.explanation import Explanation

#: Characters with a meaning inside a quoted Mermaid label, and their entity codes.
#: ``#`` goes first: the other codes start with it.
_ESCAPES = (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("&", "#amp;"), ("`", "#96;"))
BREAK = "<br/>"


def escape(text: str) -> str:
    """``text`` safe inside a double-quoted Mermaid label."""
    for raw, code in _ESCAPES:
        text = text.replace(raw, code)
    return text


def label(*lines: str) -> str:
    """A quoted label of escaped lines joined by line breaks."""
    return '"' + BREAK.join(escape(line) for line in lines if line) + '"'


def _job(ex: Explanation, prefix: str) -> list[str]:
    ind = "    "
    gpu = ex.accelerator.value if ex.accelerator else "GPU"
    title = f"{ex.key}: {ex.gpus_total} x {gpu}" if ex.gpus_total else f"{ex.key}: CPU only"
    queue = f"queue {ex.queue.value}" if ex.queue else "no queue"
    priority = f"priority {ex.priority.value}" if ex.priority else ""
    lines = [
        f"  subgraph {prefix}[{label(title)}]",
        f"{ind}direction LR",
        f"{ind}{prefix}_queue([{label(queue, priority)}])",
    ]
    previous = [f"{prefix}_queue"]
    edges: list[str] = []
    if ex.data is not None:
        lines.append(f"{ind}{prefix}_shard[[{label('data sharding', ex.data.source, f'{ex.data.shards} shards')}]]")
        edges += [f"{ind}{p} --> {prefix}_shard" for p in previous]
        previous = [f"{prefix}_shard"]
    trainers: list[str] = []
    for index, stage in enumerate(s for s in ex.stages if s.trains):
        node_id = f"{prefix}_train{index}"
        per_pod = f"{ex.gpus_per_node.value} x {gpu} each" if ex.gpus_per_node.value else "CPU only"
        pods = f"{stage.pods} pod{'s' * (stage.pods != 1)}"
        lines.append(f"{ind}{node_id}[{label(f'{stage.name}: {pods}', per_pod)}]")
        trainers.append(node_id)
    edges += [f"{ind}{p} --> {t}" for p in previous for t in trainers]
    if ex.checkpoint is not None:
        ckpt = ex.checkpoint
        if ckpt.kind == "uri":
            where = ckpt.location
        elif ckpt.kind == "claim":
            where = f"claim {ckpt.claim}"
        else:
            where = f"volume {ckpt.volume}" + (f" ({human_bytes(ckpt.volume_bytes)})" if ckpt.volume_bytes else "")
        lines.append(f"{ind}{prefix}_ckpt[({label('checkpoints', where, f'keep {ckpt.keep.value}')})]")
        edges += [f"{ind}{t} --> {prefix}_ckpt" for t in trainers]
    return [*lines, *edges, "  end"]


def render(explanations: list[Explanation]) -> str:
    """One ``flowchart LR`` with a subgraph per job (an empty chart says so in a node)."""
    out = ["flowchart LR"]
    for number, ex in enumerate(explanations, start=1):
        out.extend(_job(ex, f"j{number}"))
    if not explanations:
        out.append(f"  empty[{label('no jobs')}]")
    return "\n".join(out) + "\n"
