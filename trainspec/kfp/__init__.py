"""Kubeflow Pipelines embedding: a launcher step for compiled TrainJobs (extra ``trainspec[kfp]``).

Names are loaded lazily, so ``import trainspec.kfp.launcher`` inside the launcher pod needs
only the ``kubernetes`` client, and nothing here loads ``kfp`` until a pipeline name is used.

* ``launch_trainjob`` / ``make_launcher(image=...)``: the KFP component (needs kfp);
* ``trainjob_task(spec_or_path)``: add a launcher step to a pipeline (needs kfp);
* ``build_pipeline`` / ``compile_trainjob``: what ``trainspec kfp`` uses;
* ``run_launcher``: the launcher logic itself (needs the kubernetes client);
* ``rbac_objects``: the Role/RoleBinding (+ ClusterRole for cluster runtimes) the run needs;
* ``compile_pipeline_ir`` / ``pick_graph``: a ``Pipeline`` as KFP IR (needs kfp);
* ``pipeline_function``: a ``Pipeline`` as a ``@dsl.pipeline`` function, to nest in your own;
* ``build_trainjob``: a Pipeline job step's TrainJob for a run's parameter values (no cluster).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "launch_trainjob": "trainspec.kfp.component",
    "make_launcher": "trainspec.kfp.component",
    "PASSTHROUGHS": "trainspec.kfp.component",
    "trainjob_task": "trainspec.kfp.job_pipeline",
    "build_pipeline": "trainspec.kfp.job_pipeline",
    "compile_trainjob": "trainspec.kfp.job_pipeline",
    "compile_pipeline": "trainspec.kfp.job_pipeline",
    "CompiledJob": "trainspec.kfp.job_pipeline",
    "KfpSpecError": "trainspec.kfp.job_pipeline",
    "run_launcher": "trainspec.kfp.launcher",
    "LaunchResult": "trainspec.kfp.launch_result",
    "LauncherError": "trainspec.kfp.launch_result",
    "TrainJobFailed": "trainspec.kfp.launch_result",
    "TrainJobTimeout": "trainspec.kfp.launch_result",
    "rbac_objects": "trainspec.kfp.rbac",
    "compile_pipeline_ir": "trainspec.kfp.pipeline_ir",
    "pick_graph": "trainspec.kfp.pipeline_ir",
    "pipeline_function": "trainspec.kfp.pipeline_ir",
    "build_trainjob": "trainspec.kfp.pipeline_job_step",
    "BuiltJob": "trainspec.kfp.pipeline_job_step",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 (built from the lazy table; type checkers read the X as X imports)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
