"""trainspec: validate training specs and compile them into the Kubernetes resources that run distributed training.

The public Python API is re-exported here lazily, so that ``import trainspec.stages`` inside a
training image stays standard-library only and start-up stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    # spec models (the Python DSL)
    "TrainingJob": "trainspec.dsl.models",
    "Runtime": "trainspec.dsl.models",
    "Resources": "trainspec.dsl.models",
    "Checkpoint": "trainspec.dsl.models",
    "ModelSize": "trainspec.dsl.models",
    "Data": "trainspec.dsl.models",
    "Network": "trainspec.dsl.models",
    "Restarts": "trainspec.dsl.models",
    "Scheduling": "trainspec.dsl.models",
    "Toleration": "trainspec.dsl.models",
    "Topology": "trainspec.dsl.models",
    "SecretRef": "trainspec.dsl.models",
    "DataSharding": "trainspec.dsl.models",
    "Metadata": "trainspec.dsl.models",
    # diagnostics
    "Diagnostic": "trainspec.dsl.diagnostics",
    "Severity": "trainspec.dsl.diagnostics",
    # library entry points
    "load": "trainspec.api",
    "validate": "trainspec.api",
    "compile": "trainspec.api",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'trainspec' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from trainspec.api import compile, load, validate
    from trainspec.dsl.diagnostics import Diagnostic, Severity
    from trainspec.dsl.models import (
        Checkpoint, Data, DataSharding, Metadata, ModelSize, Network, Resources, Restarts,
        Runtime, Scheduling, SecretRef, Toleration, Topology, TrainingJob,
    )
