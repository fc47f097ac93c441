"""The environment of one local process: what Kubeflow Trainer's controller injects, on this machine.

Trainer's framework plugins (``pkg/runtime/framework/plugins/{torch,jax,mpi}``) upsert these into
the trainer container, after the runtime template's env and ``trainer.env``:

* torch: ``PET_NNODES``, ``PET_NPROC_PER_NODE``, ``PET_NODE_RANK`` (the Job completion index),
  ``PET_MASTER_ADDR`` (``<job>-node-0-0.<job>``), ``PET_MASTER_PORT`` (29500);
* JAX: ``JAX_NUM_PROCESSES`` (nodes), ``JAX_PROCESS_ID`` (completion index),
  ``JAX_COORDINATOR_ADDRESS`` (``<job>-node-0-0.<job>:29500``);
* MPI (the launcher): ``OMPI_MCA_orte_default_hostfile`` (``/etc/mpi/hostfile``),
  ``OMPI_MCA_orte_keep_fqdn_hostnames=true``, ``OMPI_MCA_orte_set_default_slots`` (processes per
  node), ``OMPI_MCA_plm_rsh_args``.

Locally every node is this machine: the rendezvous address is 127.0.0.1 and the port a free one
(two local runs must not collide on 29500). Paths under a volume the work directory provides
(the shard volume, the checkpoint volume) are rewritten to their local homes.

``TRAINSPEC_RUN_ID`` is the compiled run's (``<job>-<run id>``) when the TrainJob carries one;
otherwise every local run gets an id of its own (:func:`local_run_id`), so two local runs on one
work directory take turns on the checkpoint lease as two runs in a cluster would.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path

from trainspec.dsl.kube_facts import (
    CHECKPOINT_DIR_ENV,
    JAX_COORDINATOR_ADDRESS_ENV,
    JAX_NUM_PROCESSES_ENV,
    JAX_PLUGIN_ENV,
    JAX_PROCESS_ID_ENV,
    MPI_DEFAULT_SLOTS_ENV,
    MPI_HOSTFILE_ENV,
    MPI_KEEP_FQDN_ENV,
    MPI_RSH_ARGS_ENV,
    PET_MASTER_ADDR_ENV,
    PET_MASTER_PORT_ENV,
    PET_NNODES_ENV,
    PET_NODE_RANK_ENV,
    PET_NPROC_PER_NODE_ENV,
    STORAGE_URI_ENV,
    TRAINER_RESERVED_ENV,
)
from trainspec.dsl.spec.models import Framework
from trainspec.k8s.wellknown import MPI_RSH_ARGS_VALUE

LOOPBACK = "127.0.0.1"

#: Variables of the shell trainspec runs in that would tell a process the wrong rank or world:
#: the controller's own names and what torchrun / mpirun set per process. A pod never inherits
#: them, so neither does a local process (one left over from an earlier session would
#: otherwise win over the job's).
INHERITED_NOT_PASSED = frozenset(
    {
        *TRAINER_RESERVED_ENV["Torch"],
        *TRAINER_RESERVED_ENV["MPI"],
        *JAX_PLUGIN_ENV,
        STORAGE_URI_ENV,
        "RANK",
        "WORLD_SIZE",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
        "GROUP_RANK",
        "GROUP_WORLD_SIZE",
        "ROLE_RANK",
        "ROLE_WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "TORCHELASTIC_RUN_ID",
        "CUDA_VISIBLE_DEVICES",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
    }
)
#: The in-pod contract's prefix: none of the shell's TRAINSPEC_* variables reach the job either.
_CONTRACT_PREFIX = CHECKPOINT_DIR_ENV.split("_", 1)[0] + "_"


def local_run_id() -> str:
    """The run id of a local run whose job was compiled without one: ``local-<pid of trainspec>``.

    Unique among the runs alive on this machine, and easy to match with the command in logs.
    """
    return f"local-{os.getpid()}"


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def base_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The local shell's environment (PATH, HOME, a virtualenv...) minus what a pod never inherits."""
    return {k: v for k, v in environ.items() if k not in INHERITED_NOT_PASSED and not k.startswith(_CONTRACT_PREFIX)}


def controller_env(
    framework: Framework, *, node: int, nodes: int, procs_per_node: int, port: int, hostfile: Path | None = None
) -> dict[str, str]:
    """What Trainer's plugin for ``framework`` injects into node ``node``'s trainer container, locally."""
    if framework is Framework.TORCH:
        return {
            PET_NNODES_ENV: str(nodes),
            PET_NPROC_PER_NODE_ENV: str(procs_per_node),
            PET_NODE_RANK_ENV: str(node),
            PET_MASTER_ADDR_ENV: LOOPBACK,
            PET_MASTER_PORT_ENV: str(port),
        }
    if framework is Framework.JAX:
        return {
            JAX_NUM_PROCESSES_ENV: str(nodes),
            JAX_PROCESS_ID_ENV: str(node),
            JAX_COORDINATOR_ADDRESS_ENV: f"{LOOPBACK}:{port}",
        }
    # MPI and DeepSpeed run an mpirun launcher; the workers' sshd has no local counterpart.
    assert hostfile is not None
    return {
        MPI_HOSTFILE_ENV: str(hostfile),
        MPI_KEEP_FQDN_ENV: "true",
        MPI_DEFAULT_SLOTS_ENV: str(procs_per_node),
        MPI_RSH_ARGS_ENV: MPI_RSH_ARGS_VALUE,
    }


def hostfile_text(nodes: int, procs_per_node: int) -> str:
    """The launcher's hostfile when every node is this machine: one host with all the slots."""
    return f"localhost slots={nodes * procs_per_node}\n"


def map_path(value: str, homes: Mapping[str, Path]) -> str:
    """``value`` with a pod path under a mount in ``homes`` (mount path -> local dir) made local."""
    best = None
    for mount in homes:
        root = mount.rstrip("/") or "/"
        if (value == root or value.startswith(root + "/")) and (best is None or len(root) > len(best)):
            best = root
    if best is None:
        return value
    rest = value[len(best) :].lstrip("/")
    return str(homes[best] / rest) if rest else str(homes[best])


def map_paths(env: Mapping[str, str], homes: Mapping[str, Path]) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Every value of ``env`` through :func:`map_path`; also returns name -> (pod value, local value)."""
    out: dict[str, str] = {}
    changed: dict[str, tuple[str, str]] = {}
    for name, value in env.items():
        local = map_path(value, homes) if value.startswith("/") else value
        out[name] = local
        if local != value:
            changed[name] = (value, local)
    return out, changed
