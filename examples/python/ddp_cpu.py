"""The ddp-cpu example (../ddp-cpu.yaml) written with the Python API.

`trainspec compile examples/python/ddp_cpu.py -o -` prints exactly what the YAML version does.
"""

from trainspec import Resources, TrainingJob

ddp_cpu = TrainingJob(
    name="ddp-cpu",
    namespace="ml-dev",
    labels={"team": "platform"},
    runtime="trainspec-torch",
    image="pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
    command=["torchrun", "/workspace/examples/train.py"],
    args=["--backend", "gloo", "--epochs", "2"],
    nodes=2,
    procs_per_node=2,
    resources_per_node=Resources(cpu=4, memory="8Gi"),
    queue="ml-dev",
    max_run_time="30m",
)
