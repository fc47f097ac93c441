"""Lower a planned torch or JAX job to a Training Operator 1.9 PyTorchJob or JAXJob (``kubeflow.org/v1``).

* **PyTorchJob, fixed size:** one ``Master`` (the operator's webhook requires exactly 1) and
  ``nodes - 1`` ``Worker`` replicas, container ``pytorch``; the operator sets ``MASTER_ADDR``,
  ``WORLD_SIZE``, ``PET_NNODES``, ``PET_NODE_RANK`` and ``PET_NPROC_PER_NODE`` (from
  ``nprocPerNode``) for torchrun.
* **PyTorchJob, elastic** (``nodes: {min, max}``): ``Worker`` replicas only (``max`` of them:
  Kueue admits what the replicas ask for), ``elasticPolicy`` with the c10d rendezvous, which
  the operator hosts on ``<job>-worker-0`` and passes as ``PET_RDZV_ENDPOINT``, and
  ``PET_NNODES=min:max``.
* **JAXJob:** ``Worker`` replicas only, container ``jax``; the operator sets the coordinator.
"""

from __future__ import annotations

from trainspec.compiler.lower.training_operator import operator_pod as pods
from trainspec.compiler.plan import JobPlan
from trainspec.k8s import ElasticPolicy, JAXJob, JAXJobSpec, PyTorchJob, PyTorchJobSpec, ReplicaSpec
from trainspec.k8s.wellknown import (
    ELASTIC_RDZV_BACKEND,
    JAX_CONTAINER,
    PYTORCH_CONTAINER,
    REPLICA_MASTER,
    REPLICA_WORKER,
)


def pytorchjob(plan: JobPlan) -> PyTorchJob:
    """The PyTorchJob of a torch job (Master + Workers, or elastic Workers)."""
    resolved = plan.resolved
    command, args = pods.command_of(plan)
    template = pods.pod_template(plan, pods.container(plan, PYTORCH_CONTAINER, command=command, args=args))
    restart = pods.restart_policy(plan)
    nodes = resolved.nodes.value
    elastic = None
    if plan.elastic is not None:
        replicas = {
            REPLICA_WORKER: ReplicaSpec(replicas=plan.elastic.max_nodes, template=template, restart_policy=restart)
        }
        elastic = ElasticPolicy(
            min_replicas=plan.elastic.min_nodes,
            max_replicas=plan.elastic.max_nodes,
            rdzv_backend=ELASTIC_RDZV_BACKEND,
            max_restarts=plan.elastic.max_restarts,
        )
    else:
        replicas = {REPLICA_MASTER: ReplicaSpec(replicas=1, template=template, restart_policy=restart)}
        if nodes > 1:
            replicas[REPLICA_WORKER] = ReplicaSpec(replicas=nodes - 1, template=template, restart_policy=restart)
    return PyTorchJob(
        metadata=pods.job_metadata(plan),
        spec=PyTorchJobSpec(
            run_policy=pods.run_policy(plan, nodes, backoff=pods.backoff_limit(plan)),
            elastic_policy=elastic,
            pytorch_replica_specs=replicas,
            nproc_per_node=str(resolved.procs_per_node.value),
        ),
    )


def jaxjob(plan: JobPlan) -> JAXJob:
    """The JAXJob of a JAX job: one Worker per node."""
    command, args = pods.command_of(plan)
    template = pods.pod_template(plan, pods.container(plan, JAX_CONTAINER, command=command, args=args))
    nodes = plan.resolved.nodes.value
    return JAXJob(
        metadata=pods.job_metadata(plan),
        spec=JAXJobSpec(
            run_policy=pods.run_policy(plan, nodes, backoff=pods.backoff_limit(plan)),
            jax_replica_specs={
                REPLICA_WORKER: ReplicaSpec(replicas=nodes, template=template, restart_policy=pods.restart_policy(plan))
            },
        ),
    )
