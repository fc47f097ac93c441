"""Where a Pipeline's job steps keep their checkpoints on Kubeflow Pipelines, and how later steps
reach them.

A job step whose job checkpoints to a new volume gets a claim of its own in every run: a
``CreatePVC`` task before the job step, sized and classed like the compiled claim, whose name the
launcher puts in place of the compiled one (``--checkpoint-claim``). One claim per run, not the
job's fixed claim: a run trains on its own data with its own parameters, and resuming another
run's checkpoints would be wrong; a retried step of the same run resumes from its own. The claim is
kept after the run (nothing deletes checkpoints silently); delete it with the run's other objects.

A container step that reads ``$(steps.s.outputs.checkpoint)`` gets the directory the local run
gives it: the claim mounted read-only at :func:`mount_path` (``kfp-kubernetes`` ``mount_pvc``).
For a job that checkpoints to an existing claim, that claim is mounted; for an object-store URI
known at compile time, the URI itself is passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainspec.compiler.plan import CheckpointKind
from trainspec.dsl.spec.parts import AccessMode
from trainspec.dsl.spec.pipeline_refs import refs_in

#: The output of a job step that names its checkpoints.
CHECKPOINT_OUTPUT = "checkpoint"


@dataclass(frozen=True)
class StepCheckpoint:
    """Where one job step's checkpoints are on the cluster."""

    step: str
    kind: CheckpointKind
    #: VOLUME: the compiled claim's name (replaced per run); CLAIM: the existing claim.
    claim_name: str | None = None
    size: str | None = None
    access_modes: tuple[str, ...] = ()
    storage_class: str | None = None
    #: URI: the object-store URI, when the spec writes it without run-time references.
    uri: str | None = None
    #: A ``CreatePVC`` task gives each run its own claim.
    per_run: bool = False

    @property
    def mounted(self) -> bool:
        """Later container steps get the claim mounted (else the URI, or the output's file)."""
        return self.kind is not CheckpointKind.URI


def mount_path(step: str) -> str:
    """Where a container step finds job step ``step``'s checkpoints."""
    return f"/trainspec/steps/{step}/checkpoint"


def step_checkpoint(result: Any, step: str, job: str, raw: Any, *, create_pvc: bool) -> StepCheckpoint | None:
    """The checkpoints of job step ``step`` (running TrainingJob ``job``; ``raw`` the step's job
    fields as written, references left in), or None when the job keeps none."""
    plan = next((p for p in result.plans if p.resolved.name == job), None)
    checkpoint = plan.checkpoint if plan is not None else None
    if checkpoint is None:
        return None
    written = (raw or {}).get("checkpoint") if isinstance(raw, dict) else None
    written = written if isinstance(written, dict) else {}
    if checkpoint.kind is CheckpointKind.URI:
        uri = written.get("uri", checkpoint.path)
        return StepCheckpoint(step, checkpoint.kind, uri=None if any(refs_in(str(uri))) else checkpoint.path)
    if checkpoint.kind is CheckpointKind.CLAIM:
        return StepCheckpoint(step, checkpoint.kind, claim_name=checkpoint.claim_name)
    assert checkpoint.access_mode is not None and checkpoint.size is not None
    modes = (checkpoint.access_mode.value,)
    nodes = (raw or {}).get("nodes") if isinstance(raw, dict) else None
    if "accessMode" not in written and isinstance(nodes, str) and any(refs_in(nodes)):
        # A run may give the job more nodes than the default: their pods share the claim.
        modes = (AccessMode.READ_WRITE_MANY.value,)
    return StepCheckpoint(
        step,
        checkpoint.kind,
        claim_name=checkpoint.claim_name,
        size=checkpoint.size.to_k8s(),
        access_modes=modes,
        storage_class=checkpoint.storage_class,
        per_run=create_pvc,
    )


__all__ = ["CHECKPOINT_OUTPUT", "StepCheckpoint", "mount_path", "step_checkpoint"]
