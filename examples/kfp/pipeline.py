"""Example Kubeflow Pipelines pipeline: prepare data -> trainspec TrainJob -> evaluate.

    pip install '.[kfp]'                                # in a clone of trainspec
    python examples/kfp/pipeline.py pipeline.yaml      # then upload pipeline.yaml to KFP

Every step runs in the launcher image that trainspec.yaml next to this file names
(spec.defaults.launcherImage): build the Dockerfile's `launcher` target, push it, and put its
reference there (docs/kfp.md). Nothing is pip-installed when a step starts: the data and
evaluation steps need only the standard library and KFP's executor, which that image has.

Before the first run, apply the job's runtime and the RBAC (see docs/kfp.md):

    trainspec compile examples/kfp/cpu-job.yaml -o deploy/ && kubectl apply -f deploy/runtimes/
    trainspec kfp --rbac --namespace kubeflow | kubectl apply -f -

The checkpoint volume is created per run (CreatePVC, explicit storage class from the spec),
shared by the three steps: the data step writes into it, the TrainJob mounts it at
/checkpoints (the launcher swaps the compiled claim for this one), the evaluation reads it.
"""

import sys
from pathlib import Path

from kfp import compiler, dsl, kubernetes

from trainspec.kfp import compile_trainjob, trainjob_task

HERE = Path(__file__).resolve().parent
#: Compiled once, when the pipeline is defined: the TrainJob travels as a JSON string constant.
#: The project file names the launcher image (JOB.launcher_image), which trainjob_task uses.
JOB = compile_trainjob(HERE / "cpu-job.yaml", project=HERE / "trainspec.yaml")
MOUNT = "/checkpoints"
#: The other steps run in it too: it has Python and KFP's executor, so nothing is installed at start-up.
IMAGE = JOB.launcher_image
assert IMAGE, "set spec.defaults.launcherImage in examples/kfp/trainspec.yaml"


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def prepare_data(data_dir: str, rows: int) -> int:
    """Write a small synthetic dataset (JSON lines) where the trainer will read it."""
    import json
    import os
    import random

    os.makedirs(data_dir, exist_ok=True)
    rng = random.Random(0)  # noqa: S311 (synthetic sample data, seeded so every run writes the same)
    with open(os.path.join(data_dir, "train.jsonl"), "w", encoding="utf-8") as handle:
        for i in range(rows):
            x = rng.uniform(-1, 1)
            handle.write(json.dumps({"id": i, "x": x, "y": 3 * x + rng.gauss(0, 0.1)}) + "\n")
    return rows


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def evaluate(checkpoint_dir: str, trainjob: str, phase: str, metrics: dsl.Output[dsl.Metrics]) -> str:
    """Report what the TrainJob left in the checkpoint directory."""
    import os

    found = sorted(os.listdir(checkpoint_dir)) if os.path.isdir(checkpoint_dir) else []
    metrics.log_metric("checkpoint_entries", len(found))
    metrics.metadata["trainjob"] = trainjob
    print(f"TrainJob {trainjob} finished {phase}; {checkpoint_dir}: {found}")
    return phase


@dsl.pipeline(
    name="trainspec-kfp-example",
    description="Synthetic data -> 2-node CPU DDP TrainJob compiled by trainspec -> evaluation.",
)
def example_pipeline(rows: int = 1000):
    pvc = kubernetes.CreatePVC(
        pvc_name_suffix=f"-{JOB.name}-checkpoints",
        access_modes=JOB.claim_access_modes,
        size=JOB.claim_size,
        storage_class_name=JOB.storage_class,  # explicit: CreatePVC without one silently means ""
    )
    pvc.set_caching_options(False)

    prep = prepare_data(data_dir=f"{MOUNT}/data", rows=rows).after(pvc)
    kubernetes.mount_pvc(prep, pvc_name=pvc.outputs["name"], mount_path=MOUNT)

    # The TrainJob step. Do not mount_pvc the checkpoint volume on it: the launcher already
    # points the TrainJob's checkpoint volume at this claim (checkpoint_claim), and a second
    # mount at the same path would make the trainer pods invalid.
    train = trainjob_task(JOB, checkpoint_claim=pvc.outputs["name"], timeout_seconds=2 * 3600).after(prep)
    # Forwarded to the TrainJob by the TaskConfig passthrough (env also reaches the launcher pod):
    train.set_env_variable("TRAINSPEC_DATA_DIR", f"{MOUNT}/data")
    kubernetes.add_toleration(train, key="dedicated", operator="Equal", value="training", effect="NoSchedule")
    kubernetes.add_node_selector(train, label_key="node-pool", label_value="cpu-training")

    check = evaluate(checkpoint_dir=MOUNT, trainjob=train.outputs["name"], phase=train.outputs["phase"])
    kubernetes.mount_pvc(check, pvc_name=pvc.outputs["name"], mount_path=MOUNT)
    # No DeletePVC: the checkpoints outlive the run (delete the PVC when done with them).


if __name__ == "__main__":
    compiler.Compiler().compile(example_pipeline, package_path=sys.argv[1] if len(sys.argv) > 1 else "pipeline.yaml")
