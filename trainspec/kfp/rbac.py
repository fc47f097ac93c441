"""RBAC for the launcher: what a pipeline's service account needs to run trainspec's jobs.

Standalone KFP grants its ``pipeline-runner`` account nothing on ``trainer.kubeflow.org``,
``ray.io`` or ``kubeflow.org``, so the launcher fails with 403 until these are applied. Typed objects in the style of
``trainspec.k8s`` (frozen dataclasses serialised by ``trainspec.k8s.to_dict``).

* Role + RoleBinding in the pipeline's namespace: the job kinds of every engine whose jobs can
  be a step (TrainJobs, RayJobs, PyTorchJobs, JAXJobs, MPIJobs: the launcher applies, watches
  and deletes them; the kinds and their groups are the dialects' ``launch_facts``), namespaced
  TrainingRuntimes (get), pods and pods/log (owner reference and the rank-0 pod's log), events
  (list, for debugging);
* ClusterRole + ClusterRoleBinding: ``get`` on ClusterTrainingRuntimes, which are
  cluster-scoped and so cannot be granted by a Role.
"""

from __future__ import annotations

from typing import ClassVar

from trainspec.k8s.base import Model, Resource, model
from trainspec.k8s.meta import ObjectMeta
from trainspec.k8s.wellknown import COMPONENT_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, TRAINER_GROUP

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
ROLE_NAME = "trainspec-kfp-launcher"
CLUSTER_ROLE_NAME = "trainspec-kfp-runtime-reader"
#: Standalone KFP runs pipelines as this account; Kubeflow profiles use ``default-editor``.
DEFAULT_SERVICE_ACCOUNT = "pipeline-runner"
DEFAULT_NAMESPACE = "kubeflow"
LABELS = {MANAGED_BY_LABEL: MANAGED_BY_VALUE, COMPONENT_LABEL: "kfp-launcher"}

__all__ = [
    "ClusterRole",
    "ClusterRoleBinding",
    "PolicyRule",
    "Role",
    "RoleBinding",
    "RoleRef",
    "Subject",
    "rbac_objects",
]


@model
class PolicyRule(Model):
    """Verbs allowed on resources of API groups (``""`` is the core group)."""

    api_groups: list[str]
    resources: list[str]
    verbs: list[str]


@model
class Subject(Model):
    """Who a binding grants to; here always a ServiceAccount."""

    kind: str
    name: str
    namespace: str | None = None


@model
class RoleRef(Model):
    """The Role or ClusterRole a binding grants."""

    api_group: str
    kind: str
    name: str


@model
class Role(Resource):
    api_version: ClassVar[str] = RBAC_API_VERSION
    kind: ClassVar[str] = "Role"

    metadata: ObjectMeta
    rules: list[PolicyRule]


@model
class ClusterRole(Resource):
    api_version: ClassVar[str] = RBAC_API_VERSION
    kind: ClassVar[str] = "ClusterRole"

    metadata: ObjectMeta
    rules: list[PolicyRule]


@model
class RoleBinding(Resource):
    api_version: ClassVar[str] = RBAC_API_VERSION
    kind: ClassVar[str] = "RoleBinding"

    metadata: ObjectMeta
    subjects: list[Subject]
    role_ref: RoleRef


@model
class ClusterRoleBinding(Resource):
    api_version: ClassVar[str] = RBAC_API_VERSION
    kind: ClassVar[str] = "ClusterRoleBinding"

    metadata: ObjectMeta
    subjects: list[Subject]
    role_ref: RoleRef


#: What the launcher does to a job object: look it up, apply it (create or patch), poll, delete.
JOB_VERBS = ["get", "list", "watch", "create", "patch", "delete"]


def job_rules() -> tuple[PolicyRule, ...]:
    """One rule per API group: the job kinds of every engine whose jobs can be a KFP step."""
    from trainspec.compiler.engines import DIALECT_MODULES
    from trainspec.compiler.lower.dialects import dialect_for

    by_group: dict[str, list[str]] = {}
    for engine in DIALECT_MODULES:
        dialect = dialect_for(engine=engine)
        if not dialect.kfp_step:
            continue
        for kind in dialect.job_kinds:
            facts = dialect.launch_facts({"kind": kind, "metadata": {"name": "x"}})
            by_group.setdefault(facts.api_group, []).append(facts.plural)
    return tuple(PolicyRule(api_groups=[g], resources=p, verbs=list(JOB_VERBS)) for g, p in by_group.items())


NAMESPACED_RULES = (
    PolicyRule(api_groups=[TRAINER_GROUP], resources=["trainingruntimes"], verbs=["get"]),
    PolicyRule(api_groups=[""], resources=["pods"], verbs=["get", "list", "watch"]),
    PolicyRule(api_groups=[""], resources=["pods/log"], verbs=["get"]),
    PolicyRule(api_groups=[""], resources=["events"], verbs=["list"]),
)
CLUSTER_RULES = (PolicyRule(api_groups=[TRAINER_GROUP], resources=["clustertrainingruntimes"], verbs=["get"]),)


def rbac_objects(namespace: str = DEFAULT_NAMESPACE, service_account: str = DEFAULT_SERVICE_ACCOUNT) -> list[Resource]:
    """Role, RoleBinding, ClusterRole and ClusterRoleBinding for ``service_account`` in ``namespace``.

    The ClusterRole is shared; its binding is named after the namespace and account, so several
    pipeline namespaces can each bind it.
    """
    subject = Subject(kind="ServiceAccount", name=service_account, namespace=namespace)
    binding = f"{CLUSTER_ROLE_NAME}-{namespace}-{service_account}"[:253]
    return [
        Role(
            metadata=ObjectMeta(name=ROLE_NAME, namespace=namespace, labels=dict(LABELS)),
            rules=[*job_rules(), *NAMESPACED_RULES],
        ),
        RoleBinding(
            metadata=ObjectMeta(name=ROLE_NAME, namespace=namespace, labels=dict(LABELS)),
            subjects=[subject],
            role_ref=RoleRef(api_group=RBAC_GROUP, kind="Role", name=ROLE_NAME),
        ),
        ClusterRole(metadata=ObjectMeta(name=CLUSTER_ROLE_NAME, labels=dict(LABELS)), rules=list(CLUSTER_RULES)),
        ClusterRoleBinding(
            metadata=ObjectMeta(name=binding, labels=dict(LABELS)),
            subjects=[subject],
            role_ref=RoleRef(api_group=RBAC_GROUP, kind="ClusterRole", name=CLUSTER_ROLE_NAME),
        ),
    ]
