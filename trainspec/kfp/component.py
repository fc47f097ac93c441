"""The launcher component (needs ``kfp``: the ``trainspec[kfp]`` extra).

:func:`launch_trainjob` is the component's Python function; :func:`make_launcher` makes the
component. It is a lightweight Python component: KFP ships the *source* of the function to the
pod and runs it there with its executor, so the body only imports :mod:`trainspec.kfp.launcher`
and calls it. The image must therefore already hold trainspec with the ``kube`` and ``kfp``
extras: the ``launcher`` target of the repository's Dockerfile. Nothing is installed when the
step starts (no ``pip install``, not even of kfp), so there is no default image: no public image
or package index serves trainspec, and one named by default could be taken over by whoever
publishes it first.

No ``from __future__ import annotations`` here: KFP reads the signature's real annotations.
"""

from typing import Any, NamedTuple

from kfp import dsl
from kfp.dsl import Artifact, Output

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


def make_launcher(image: str) -> Any:  # a kfp PythonComponent; kfp ships no types
    """The ``launch_trainjob`` component running in ``image``, an image built from the ``launcher``
    target of trainspec's Dockerfile (``docker build --target launcher ...``, docs/kfp.md).

    The image is required: nothing is installed at start-up, so it must already hold
    ``trainspec[kube,kfp]``. Pin it by digest for reproducible runs.
    """
    if not isinstance(image, str) or not image or any(c.isspace() for c in image):
        raise ValueError(
            f"make_launcher needs the launcher image (build the launcher target of trainspec's Dockerfile); "
            f"got {image!r}"
        )
    return dsl.component(
        launch_trainjob,
        base_image=image,
        packages_to_install=[],
        install_kfp_package=False,  # kfp is in the image: KFP would otherwise pip-install it at start-up
        task_config_passthroughs=PASSTHROUGHS,
    )
