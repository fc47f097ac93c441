"""The engines a spec can name (``spec.engine`` of a Runtime, ``spec.target.engine`` of a project).

Standard library only: the command line's parsers read the names without loading the spec
models. :mod:`trainspec.compiler.engines` is the registry built on it (each engine's dialect).
"""

from __future__ import annotations

import enum


class Engine(str, enum.Enum):
    """The engine that runs a job on the cluster (the compile target's lowering dialect)."""

    TRAINER = "trainer"  # Kubeflow Trainer v2: TrainJob on a (Cluster)TrainingRuntime
    RAY = "ray"  # KubeRay RayJob (Ray Train)
    TRAINING_OPERATOR = "training-operator"  # Kubeflow Training Operator v1 PyTorchJob / mpi-operator MPIJob

    # Printed as its name (``ray``), as a value written in a spec reads.
    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


__all__ = ["Engine"]
