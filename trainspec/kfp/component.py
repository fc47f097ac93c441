"""The ``launch_trainjob`` KFP component (needs ``kfp``: the ``trainspec[kfp]`` extra).

A lightweight Python component: KFP ships the *source* of :func:`launch_trainjob` to the
pod and runs it there, so the body only imports :mod:`trainspec.kfp.launcher` and calls it.
The image must therefore have trainspec and the ``kubernetes`` client: by default they are
pip-installed into a stock Python image at start-up; air-gapped clusters build an image with
them and use :func:`make_launcher`.

No ``from __future__ import annotations`` here: KFP reads the signature's real annotations.
"""

from typing import Any, NamedTuple

from kfp import dsl
from kfp.dsl import Artifact, Output

from trainspec import __version__

DEFAULT_IMAGE = "python:3.11-slim"
#: What a stock image needs; kfp itself is added by KFP (``--no-deps``), so its dependencies
#: the launcher uses (the kubernetes client) must be listed here.
DEFAULT_PACKAGES = [f"trainspec=={__version__}", "kubernetes>=27.2,<31"]

#: Scheduling and resources go to the TrainJob only: the launcher pod stays small, and a GPU
#: request on the step lands on the trainer nodes. Env and volumes also reach the launcher pod
#: (``apply_to_task``): secrets for the launcher, and the KFP workspace if it needs it.
PASSTHROUGHS = [
    dsl.TaskConfigField.RESOURCES,
    dsl.TaskConfigField.KUBERNETES_TOLERATIONS,
    dsl.TaskConfigField.KUBERNETES_NODE_SELECTOR,
    dsl.TaskConfigField.KUBERNETES_AFFINITY,
    dsl.TaskConfigPassthrough(field=dsl.TaskConfigField.ENV, apply_to_task=True),
    dsl.TaskConfigPassthrough(field=dsl.TaskConfigField.KUBERNETES_VOLUMES, apply_to_task=True),
]


def launch_trainjob(
    trainjob: str,
    run_id: str,
    status: Output[Artifact],
    trainer_api: str = "2.3",
    timeout_seconds: int = 0,
    poll_seconds: float = 10.0,
    backoff_seconds: float = 1.0,
    namespace: str = "",
    checkpoint_claim: str = "",
    task_config: dsl.TaskConfig = None,
) -> NamedTuple("Outputs", [("name", str), ("phase", str)]):  # type: ignore[valid-type]  # KFP's form
    """Apply a compiled trainspec TrainJob, follow node-0's log, and wait for it to finish.

    trainjob: the TrainJob as a JSON string (a string: KFP turns ints in dict constants into floats).
    run_id: the pipeline run id (dsl.PIPELINE_JOB_ID_PLACEHOLDER); names and labels the TrainJob.
    trainer_api: the cluster's Trainer release, 2.2 or later.
    timeout_seconds: delete the TrainJob and fail after this long (0: no limit).
    namespace: where to run the TrainJob ("" = this pod's namespace).
    checkpoint_claim: a PVC name replacing the compiled checkpoint claim ("" = keep it).
    """
    from collections import namedtuple

    from trainspec.kfp.launcher import run_launcher

    result = run_launcher(
        trainjob,
        run_id=run_id,
        trainer_api=trainer_api,
        timeout_seconds=timeout_seconds,
        poll_seconds=poll_seconds,
        backoff_seconds=backoff_seconds,
        namespace=namespace,
        checkpoint_claim=checkpoint_claim,
        task_config=task_config,
        status_path=status.path,
    )
    status.metadata.update(result.metadata())
    Outputs = namedtuple("Outputs", ["name", "phase"])
    return Outputs(result.name, result.phase)


def make_launcher(
    image: str = DEFAULT_IMAGE,
    packages_to_install: list[str] | None = None,
    *,
    install_kfp_package: bool | None = None,
    pip_index_urls: list[str] | None = None,
) -> Any:  # a kfp PythonComponent; kfp ships no types
    """A ``launch_trainjob`` component for ``image``.

    With the defaults, trainspec and the kubernetes client are pip-installed at start-up (the
    cluster needs a package index). For an air-gapped cluster pass an image that already has
    ``trainspec[kfp]`` installed and leave ``packages_to_install`` at None: nothing is installed,
    not even kfp (``install_kfp_package`` defaults to whether packages are installed).
    ``pip_index_urls`` points pip at a mirror.
    """
    if packages_to_install is None:
        packages_to_install = list(DEFAULT_PACKAGES) if image == DEFAULT_IMAGE else []
    if install_kfp_package is None:
        install_kfp_package = bool(packages_to_install)
    return dsl.component(
        _BODY,
        base_image=image,
        packages_to_install=packages_to_install,
        pip_index_urls=pip_index_urls,
        install_kfp_package=install_kfp_package,
        task_config_passthroughs=PASSTHROUGHS,
    )


#: The plain function (its source is what KFP ships); the name below becomes the component.
_BODY = launch_trainjob
#: The default launcher: a stock Python image that pip-installs trainspec at start-up.
launch_trainjob = make_launcher()
