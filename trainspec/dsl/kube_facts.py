"""Kubernetes facts the spec language relies on, defined once for the whole package.

Number bounds, name rules and the environment names the pods reserve. Everything that only
lowering, checking, Kueue or KFP code needs (label keys, container names, patch managers) is in
:mod:`trainspec.k8s.wellknown`, which re-exports these. Standard library only, nothing to
import from the rest of trainspec (``trainspec.dsl`` must stay self-contained).
"""

from __future__ import annotations

import re

# -- integer bounds ----------------------------------------------------------------------------

#: Largest value of a Kubernetes ``int32`` field (numNodes, numProcPerNode, replicas, maxRestarts,
#: ports, ``*Seconds`` of most APIs). The API server rejects larger ones ("format int32").
INT32_MAX = (1 << 31) - 1
#: Largest value of an ``int64`` field (activeDeadlineSeconds, tolerationSeconds) and of a
#: resource amount once a consumer reads it (``Quantity.Value()``).
INT64_MAX = (1 << 63) - 1
#: Largest user or group id Kubernetes accepts for ``runAsUser`` (validation.IsValidUserID).
MAX_USER_ID = INT32_MAX
#: Kueue parses ``kueue.x-k8s.io/max-exec-time-seconds`` with ``strconv.ParseInt(v, 10, 32)`` and
#: silently ignores a value that does not parse or is not positive, so it must be 1..INT32_MAX.
MAX_EXEC_TIME_SECONDS = INT32_MAX
#: CPU is read in milli-units (``MilliValue()``: kubelet, scheduler, Kueue), so its amount in
#: cores must stay at or below this many milli-cores.
MAX_CPU_MILLI = INT64_MAX

# -- name rules (k8s.io/apimachinery/pkg/util/validation) --------------------------------------

#: RFC 1035 label: TrainJob and runtime names, Service-like names.
DNS1035_LABEL_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
#: RFC 1123 label: namespaces, container names, the name part of generated pod names.
DNS1123_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
#: RFC 1123 subdomain: most object names (Secret, PVC, LocalQueue, StorageClass).
DNS1123_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
#: The name part of a label or annotation key (after an optional ``prefix/``).
QUALIFIED_NAME_PATTERN = r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
#: A label value (may be empty).
LABEL_VALUE_PATTERN = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
#: The environment names the spec takes: C identifiers (what shells and torchrun can read back).
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
#: The path part of a domain-prefixed path (``example.com/my-tool``: managedBy fields): the
#: characters RFC 3986 allows in a URL path (validation.IsDomainPrefixedPath; no '@').
HTTP_PATH_PATTERN = r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$"

# The name rules above as checks without a regular expression, for the spec's fields: each
# accepts exactly what ``re.fullmatch`` of its pattern accepts (tests/dsl/test_name_checks.py
# compares them on generated names), and no pattern is compiled at start-up for them.
_LOWER_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_LOWER_NAME = _LOWER_ALNUM | {"-"}
_ALNUM = _LOWER_ALNUM | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_QUALIFIED = _ALNUM | {"-", "_", "."}
_ENV_FIRST = _ALNUM - frozenset("0123456789") | {"_"}
_ENV = _ALNUM | {"_"}


def is_dns1035_label(text: str) -> bool:
    """``DNS1035_LABEL_PATTERN``: a lower-case letter, then lower-case letters, digits and '-',
    ending in a letter or digit."""
    return bool(text) and "a" <= text[0] <= "z" and text[-1] in _LOWER_ALNUM and _LOWER_NAME.issuperset(text)


def is_dns1123_label(text: str) -> bool:
    """``DNS1123_LABEL_PATTERN``: lower-case letters, digits and '-', a letter or digit at both ends."""
    return bool(text) and text[0] in _LOWER_ALNUM and text[-1] in _LOWER_ALNUM and _LOWER_NAME.issuperset(text)


def is_dns1123_subdomain(text: str) -> bool:
    """``DNS1123_SUBDOMAIN_PATTERN``: DNS-1123 labels joined by '.'."""
    return all(is_dns1123_label(label) for label in text.split("."))


def is_qualified_name(text: str) -> bool:
    """``QUALIFIED_NAME_PATTERN``: letters, digits, '-', '_' and '.', a letter or digit at both ends."""
    return bool(text) and text[0] in _ALNUM and text[-1] in _ALNUM and _QUALIFIED.issuperset(text)


def is_label_value(text: str) -> bool:
    """``LABEL_VALUE_PATTERN``: empty, or as a qualified name."""
    return not text or is_qualified_name(text)


def is_env_name(text: str) -> bool:
    """``ENV_NAME_PATTERN``: a C identifier."""
    return bool(text) and text[0] in _ENV_FIRST and _ENV.issuperset(text)


#: Longest RFC 1035/1123 label (names, namespaces, label values, key name parts).
DNS1123_LABEL_MAX = 63
#: Longest RFC 1123 subdomain (object names, label key prefixes).
DNS1123_SUBDOMAIN_MAX = 253
#: Longest label value and name part of a label key.
LABEL_VALUE_MAX = 63
#: Longest label/annotation key: a subdomain prefix, '/', a name part.
LABEL_KEY_MAX = DNS1123_SUBDOMAIN_MAX + 1 + DNS1123_LABEL_MAX
#: Longest environment variable name the spec accepts.
ENV_NAME_MAX = 256
#: A key of a Secret or ConfigMap (validation.IsConfigMapKey; a ``secretKeyRef.key`` is checked
#: with it when the Job's pods are created): at most DNS1123_SUBDOMAIN_MAX characters, not ``.``
#: and not starting with ``..``.
SECRET_KEY_PATTERN = r"^(?!\.\.)(?!\.$)[-._a-zA-Z0-9]+$"  # noqa: S105 (the shape of a key's name)
SECRET_KEY_MAX = DNS1123_SUBDOMAIN_MAX


def is_secret_key(text: str) -> bool:
    """``SECRET_KEY_PATTERN``, without a regular expression (as the name checks above)."""
    return bool(text) and _QUALIFIED.issuperset(text) and not text.startswith("..") and text != "."


# -- annotations (apimachinery ValidateAnnotationsSize) ------------------------------------------

#: The API server refuses an object whose annotations, keys and values together, exceed this
#: many bytes (TotalAnnotationSizeLimitB).
ANNOTATIONS_TOTAL_MAX = 256 * 1024
#: What trainspec keeps free of that for the annotations it writes itself on the same object
#: (GitOps sync options, Kueue topology requests): a spec's own annotations stay below
#: ANNOTATIONS_SPEC_MAX, so the emitted object stays below ANNOTATIONS_TOTAL_MAX.
ANNOTATIONS_RESERVED = 4 * 1024
ANNOTATIONS_SPEC_MAX = ANNOTATIONS_TOTAL_MAX - ANNOTATIONS_RESERVED

# -- resource names (pkg/apis/core/validation validateContainerResourceName) ---------------------

#: Container resources named without a domain (cpu, memory, ephemeral-storage, huge pages):
#: anything else without a '/' is refused.
STANDARD_RESOURCE_PATTERN = r"^(?:cpu|memory|ephemeral-storage|hugepages-.+)$"
#: ``hugepages-<page size>``: a standard resource whose amount is a whole number of pages.
HUGEPAGES_PREFIX = "hugepages-"
#: Names in this domain are Kubernetes' own (native): every other name with a '/' is an extended
#: resource, which only takes whole amounts (IsExtendedResourceName, IsIntegerResourceName).
NATIVE_RESOURCE_DOMAIN = "kubernetes.io/"
#: ResourceQuota counts an extended resource as ``requests.<name>``, and the API server requires
#: that to be a qualified name: the domain of an extended resource is this much shorter than a
#: label key's prefix (DefaultResourceRequestsPrefix).
QUOTA_REQUESTS_PREFIX = "requests."
EXTENDED_RESOURCE_PREFIX_MAX = DNS1123_SUBDOMAIN_MAX - len(QUOTA_REQUESTS_PREFIX)

# -- container images (distribution/reference, as the kubelet parses them) -----------------------

#: An image reference: ``[host[:port]/]path[:tag][@digest]``. The kubelet refuses any other text
#: (InvalidImageName) and the pod never starts. Groups: name, tag, digest.
IMAGE_REFERENCE_PATTERN = (
    r"^(?P<name>(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
    r"(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/|\[[a-fA-F0-9:]+\](?::[0-9]+)?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$"
)
#: Longest repository name of a reference (reference.NameTotalLengthMax), tag and digest aside.
IMAGE_NAME_MAX = 255
#: The repository's path components and the tag (the pattern's), checked without it below.
_PATH_COMPONENT = _LOWER_ALNUM | {".", "_", "-"}
#: Separators a path component may not have: one of '.', '_', '__' or a run of '-' between letters.
_BAD_SEPARATORS = ("..", "._", ".-", "_.", "_-", "-.", "-_", "___")
_TAG_FIRST = _ALNUM | {"_"}
_TAG = _ALNUM | {"_", ".", "-"}


def image_repository(text: str) -> str | None:
    """The repository of an image reference (the ``name`` group of ``IMAGE_REFERENCE_PATTERN``:
    registry and path, without tag and digest), or None when ``text`` is not a reference.

    The usual reference (``repo/path:tag``, no registry port, digest or IP address) is read
    without the pattern, which would cost every run a long compile; any other goes through it.
    """
    name, colon, tag = text.rpartition(":")
    if not colon or "/" in tag:  # no tag: a ':' before the last '/' is a registry's port
        name, tag_ok = text, True
    else:
        tag_ok = 0 < len(tag) <= 128 and tag[0] in _TAG_FIRST and _TAG.issuperset(tag)
    if tag_ok and "@" not in text and all(_is_path_component(part) for part in name.split("/")):
        return name
    match = re.fullmatch(IMAGE_REFERENCE_PATTERN, text)
    return match["name"] if match else None


def _is_path_component(text: str) -> bool:
    """``[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*``, a path component of a repository."""
    return (
        bool(text)
        and text[0] in _LOWER_ALNUM
        and text[-1] in _LOWER_ALNUM
        and _PATH_COMPONENT.issuperset(text)
        and not any(bad in text for bad in _BAD_SEPARATORS)
    )


#: Longest image field of a TrainJob (the Trainer CRD's maxLength for spec.trainer.image).
IMAGE_MAX = 500

# -- paths ---------------------------------------------------------------------------------------

#: Longest path a mount takes (Linux PATH_MAX; the Trainer CRD's maxLength for sshAuthMountPath).
PATH_MAX = 4096

# -- environment names the pods reserve --------------------------------------------------------

#: Prefixes Kubeflow Trainer sets itself (torchrun, Open MPI, JAX, XGBoost); its webhook rejects
#: a TrainJob that sets such names.
RESERVED_ENV_PREFIXES = ("PET_", "OMPI_MCA_", "JAX_", "DMLC_")
#: What Trainer's torch plugin sets in every trainer container (torchrun's env fallbacks).
PET_NNODES_ENV = "PET_NNODES"
PET_NPROC_PER_NODE_ENV = "PET_NPROC_PER_NODE"
PET_NODE_RANK_ENV = "PET_NODE_RANK"
PET_MASTER_ADDR_ENV = "PET_MASTER_ADDR"
PET_MASTER_PORT_ENV = "PET_MASTER_PORT"
#: What Trainer's MPI plugin sets in the launcher's container (Open MPI's MCA settings).
#: Where MPI launchers and workers find the SSH keys unless a runtime says otherwise.
MPI_SSH_AUTH_MOUNT_PATH = "/root/.ssh"
MPI_HOSTFILE_ENV = "OMPI_MCA_orte_default_hostfile"
MPI_RSH_ARGS_ENV = "OMPI_MCA_plm_rsh_args"
MPI_KEEP_FQDN_ENV = "OMPI_MCA_orte_keep_fqdn_hostnames"
MPI_DEFAULT_SLOTS_ENV = "OMPI_MCA_orte_set_default_slots"
#: What Trainer's JAX plugin sets in every trainer container (``jax.distributed.initialize()`` reads them).
JAX_NUM_PROCESSES_ENV = "JAX_NUM_PROCESSES"
JAX_PROCESS_ID_ENV = "JAX_PROCESS_ID"
JAX_COORDINATOR_ADDRESS_ENV = "JAX_COORDINATOR_ADDRESS"
JAX_PLUGIN_ENV = (JAX_NUM_PROCESSES_ENV, JAX_PROCESS_ID_ENV, JAX_COORDINATOR_ADDRESS_ENV)
#: Environment names Trainer sets itself, by framework (its webhook rejects a TrainJob setting them).
TRAINER_RESERVED_ENV: dict[str, tuple[str, ...]] = {
    "Torch": (PET_NNODES_ENV, PET_NPROC_PER_NODE_ENV, PET_NODE_RANK_ENV, PET_MASTER_ADDR_ENV, PET_MASTER_PORT_ENV),
    "MPI": (MPI_HOSTFILE_ENV, MPI_RSH_ARGS_ENV, MPI_KEEP_FQDN_ENV, MPI_DEFAULT_SLOTS_ENV),
    "XGBoost": ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"),
}

#: The in-pod contract: what trainspec sets in trainer and sharding pods.
CHECKPOINT_DIR_ENV = "TRAINSPEC_CHECKPOINT_DIR"
CHECKPOINT_KEEP_ENV = "TRAINSPEC_CHECKPOINT_KEEP"
DATA_DIR_ENV = "TRAINSPEC_DATA_DIR"
NUM_SHARDS_ENV = "TRAINSPEC_NUM_SHARDS"
DATA_FORMAT_ENV = "TRAINSPEC_DATA_FORMAT"
SHARD_BY_ENV = "TRAINSPEC_SHARD_BY"
SHARD_ASSIGNMENT_ENV = "TRAINSPEC_SHARD_ASSIGNMENT"
SHARD_SEED_ENV = "TRAINSPEC_SHARD_SEED"
#: Index mode (byte ranges over the source) or copy mode (materialised shard files).
SHARD_MODE_ENV = "TRAINSPEC_SHARD_MODE"
#: How index-mode boundaries are placed: equal record counts or equal byte counts.
SHARD_BALANCE_ENV = "TRAINSPEC_SHARD_BALANCE"
#: Per-file (index) or per-shard (copy) checksum the stage records: none, xxh3 or sha256.
SHARD_CHECKSUM_ENV = "TRAINSPEC_SHARD_CHECKSUM"
PVC_ROOT_ENV = "TRAINSPEC_PVC_ROOT"
#: The dataset initializer's source: Trainer sets it from ``initializer.dataset.storageUri``.
STORAGE_URI_ENV = "STORAGE_URI"
#: Trainer's TrainJobStatus feature (alpha gate): the controller injects these into trainer
#: containers. The URL is the TrainJob's status endpoint; the other two are file paths (the CA
#: bundle and the projected service-account token, which rotates: read it again for each post).
TRAINER_STATUS_URL_ENV = "KUBEFLOW_TRAINER_SERVER_URL"
TRAINER_STATUS_CA_ENV = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
TRAINER_STATUS_TOKEN_ENV = "KUBEFLOW_TRAINER_SERVER_TOKEN"  # noqa: S105 (the name of a variable, not a token)
#: The port ``trainspec.stages.serve_metrics()`` listens on when the script passes none.
METRICS_PORT_ENV = "TRAINSPEC_METRICS_PORT"
#: A directory: each rank's step timers append one JSON line per step to ``rank-<rank>.jsonl`` there
#: (``trainspec ladder run`` sets it for every rung; docs/metrics.md, "Step log").
STEP_LOG_DIR_ENV = "TRAINSPEC_STEP_LOG_DIR"
#: The parallel layout the planner chose or the spec pinned (docs/parallelism.md).
TP_SIZE_ENV = "TRAINSPEC_TP_SIZE"
PP_SIZE_ENV = "TRAINSPEC_PP_SIZE"
DP_SIZE_ENV = "TRAINSPEC_DP_SIZE"
ZERO_STAGE_ENV = "TRAINSPEC_ZERO_STAGE"
RECOMPUTE_ENV = "TRAINSPEC_RECOMPUTE"
CP_SIZE_ENV = "TRAINSPEC_CP_SIZE"
#: Only when the layout has them: the uneven first/last stages' layers, the virtual stages per
#: pipeline rank, and "false" when sequence parallelism is off.
FIRST_STAGE_LAYERS_ENV = "TRAINSPEC_FIRST_STAGE_LAYERS"
LAST_STAGE_LAYERS_ENV = "TRAINSPEC_LAST_STAGE_LAYERS"
VIRTUAL_STAGES_ENV = "TRAINSPEC_VIRTUAL_STAGES"
SEQUENCE_PARALLEL_ENV = "TRAINSPEC_SEQUENCE_PARALLEL"
#: The layout as flags of the framework spec.parallelism.framework names, one shell-quoted line.
PARALLEL_ARGS_ENV = "TRAINSPEC_PARALLEL_ARGS"
LAYOUT_ENV = (
    TP_SIZE_ENV,
    PP_SIZE_ENV,
    DP_SIZE_ENV,
    ZERO_STAGE_ENV,
    RECOMPUTE_ENV,
    CP_SIZE_ENV,
    FIRST_STAGE_LAYERS_ENV,
    LAST_STAGE_LAYERS_ENV,
    VIRTUAL_STAGES_ENV,
    SEQUENCE_PARALLEL_ENV,
    PARALLEL_ARGS_ENV,
)
#: The run a pod belongs to (``<job>-<run id>``'s id): the checkpoint lease names it (docs/gitops.md).
RUN_ID_ENV = "TRAINSPEC_RUN_ID"
#: ``spec.tracking``: which experiment tracker the job logs to (``mlflow`` or ``wandb``) and the
#: job's name, which groups its runs; ``trainspec.stages.Tracker`` names the tracker's run
#: ``<TRAINSPEC_JOB_NAME>-<TRAINSPEC_RUN_ID>`` (docs/tracking.md).
TRACKING_ENV = "TRAINSPEC_TRACKING"
JOB_NAME_ENV = "TRAINSPEC_JOB_NAME"
#: What the tracking libraries read themselves, set from ``spec.tracking``.
MLFLOW_TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"
MLFLOW_EXPERIMENT_NAME_ENV = "MLFLOW_EXPERIMENT_NAME"
WANDB_PROJECT_ENV = "WANDB_PROJECT"
WANDB_ENTITY_ENV = "WANDB_ENTITY"
#: The names of the contract a spec may not set by hand (TS303).
TRAINSPEC_ENV = (
    CHECKPOINT_DIR_ENV,
    CHECKPOINT_KEEP_ENV,
    DATA_DIR_ENV,
    NUM_SHARDS_ENV,
    RUN_ID_ENV,
    TRACKING_ENV,
    JOB_NAME_ENV,
    *LAYOUT_ENV,
)

# -- other bounds of the spec --------------------------------------------------------------------

#: The sharding stage reads its seed as 64 bits (``python -m trainspec.stages.shard --seed``).
SEED_MAX = (1 << 64) - 1
