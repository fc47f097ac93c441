"""The vocabulary both spec kinds share: the base of every part, the count bounds, the enums, and
the parts of both a ``Runtime`` and a ``TrainingJob`` (``Metadata``, ``Resources``).

Import these from :mod:`trainspec.dsl.spec.models` (or ``trainspec``), which re-exports them; this
module exists to keep the contract in small files.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

from trainspec.dsl.framework.fieldchecks import After
from trainspec.dsl.framework.modeling import Invalid, Model, field
from trainspec.dsl.framework.quantity import Quantity
from trainspec.dsl.framework.types import (
    Count,
    CpuQuantity,
    LabelKey,
    LabelValue,
    Name,
    NamespaceName,
    ResourceQuantity,
    _fail,
    _label_key,
    _PlainStr,
    _shown,
)
from trainspec.dsl.kube_facts import (
    ANNOTATIONS_SPEC_MAX,
    ANNOTATIONS_TOTAL_MAX,
    EXTENDED_RESOURCE_PREFIX_MAX,
    HUGEPAGES_PREFIX,
    LABEL_KEY_MAX,
    NATIVE_RESOURCE_DOMAIN,
    QUOTA_REQUESTS_PREFIX,
    STANDARD_RESOURCE_PATTERN,
)
from trainspec.dsl.spec.engine import Engine as Engine  # the spec vocabulary, read from here by models and runtime_spec

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trainspec.dsl.framework.types import QuantityInput

# Count bounds. Each count becomes an int32 field (numNodes, numProcPerNode, maxRestarts, the
# shard count nodes x procsPerNode, GPUs x nodes): the products of these bounds stay far below
# 2^31-1, which tests/dsl/test_bounds.py keeps true.
MAX_NODES = 10000
MAX_PROCS_PER_NODE = 256
MAX_GPUS_PER_NODE = 64
MAX_RESTARTS = 1000
MAX_KEEP = 1000


class _Model(Model):
    """A spec part: unknown fields are errors, YAML names are the camelCase of the Python ones."""


# -- enums -------------------------------------------------------------------------------------


class Framework(str, enum.Enum):
    """The distributed framework a runtime launches."""

    TORCH = "torch"
    DEEPSPEED = "deepspeed"
    MPI = "mpi"
    JAX = "jax"


class Scope(str, enum.Enum):
    CLUSTER = "cluster"
    NAMESPACE = "namespace"


class Gang(str, enum.Enum):
    """How all pods of a job are scheduled together."""

    KUEUE = "kueue"
    COSCHEDULING = "coscheduling"
    VOLCANO = "volcano"
    NONE = "none"


class DataFormat(str, enum.Enum):
    JSONL = "jsonl"
    TEXT = "text"
    PARQUET = "parquet"
    FILES = "files"


class ShardBy(str, enum.Enum):
    RANK = "rank"
    NODE = "node"


class Assignment(str, enum.Enum):
    CONTIGUOUS = "contiguous"
    HASHED = "hashed"
    ROUND_ROBIN = "round-robin"


class ShardMode(str, enum.Enum):
    INDEX = "index"
    COPY = "copy"


class RunPolicy(str, enum.Enum):
    """What a change to a job's run-defining fields does on the cluster (docs/gitops.md)."""

    #: A new run object (``<name>-<run id>``) replaces the old one and resumes from the checkpoints.
    NEW = "new"
    #: The job object keeps its name; the GitOps controller deletes and recreates it on a change.
    REPLACE = "replace"


class ShardBalance(str, enum.Enum):
    RECORDS = "records"
    BYTES = "bytes"


class ShardChecksum(str, enum.Enum):
    NONE = "none"
    XXH3 = "xxh3"
    SHA256 = "sha256"


class AccessMode(str, enum.Enum):
    READ_WRITE_ONCE = "ReadWriteOnce"
    READ_WRITE_MANY = "ReadWriteMany"
    READ_WRITE_ONCE_POD = "ReadWriteOncePod"


class CheckpointWriter(str, enum.Enum):
    """Who writes a job's checkpoints, hence what one holds (docs/explain-and-diff.md)."""

    DCP = "dcp"  # PyTorch distributed checkpoint (FSDP, DDP, torchtitan); JAX/Orbax alike
    DEEPSPEED = "deepspeed"
    MEGATRON = "megatron"  # Megatron-LM and NeMo


class DType(str, enum.Enum):
    FP32 = "fp32"
    TF32 = "tf32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


class Optimizer(str, enum.Enum):
    ADAM = "adam"
    ADAMW = "adamw"
    SGD = "sgd"
    NONE = "none"


class TopologyMode(str, enum.Enum):
    REQUIRED = "required"
    PREFERRED = "preferred"


class TolerationOperator(str, enum.Enum):
    EXISTS = "Exists"
    EQUAL = "Equal"


class TaintEffect(str, enum.Enum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


# -- resource names and amounts (pkg/apis/core/validation, validateContainerResourceName) ------


def _resource_name(raw: Any) -> str:
    """A container resource name: a standard one without a domain, else a qualified name whose
    domain, for an extended resource, still fits once ResourceQuota prefixes it with ``requests.``."""
    key = _label_key(raw)
    prefix, slash, _ = key.rpartition("/")
    if not slash:
        if re.fullmatch(STANDARD_RESOURCE_PATTERN, key):
            return key
        raise _fail(
            "ts_label",
            f"{_shown(key)} is not a resource Kubernetes knows: a name without a domain must be cpu, memory, "
            f"ephemeral-storage or {HUGEPAGES_PREFIX}<page size>",
            "name a device by its resource name, with its domain (nvidia.com/gpu, rdma/ib, example.com/fpga)",
        )
    if _is_extended(key) and (key.startswith(QUOTA_REQUESTS_PREFIX) or len(prefix) > EXTENDED_RESOURCE_PREFIX_MAX):
        raise _fail(
            "ts_label",
            f"{_shown(key)} does not follow the extended resource name standard: its domain has {len(prefix)} "
            f"characters and may have at most {EXTENDED_RESOURCE_PREFIX_MAX} (quota counts it as "
            f"{QUOTA_REQUESTS_PREFIX}<name>), and must not start with {QUOTA_REQUESTS_PREFIX!r}",
            "use the name the device plugin advertises (kubectl describe node lists it under Allocatable)",
        )
    return key


def _is_extended(name: str) -> bool:
    """An extended resource: a name with a domain, outside Kubernetes' own (IsExtendedResourceName)."""
    return "/" in name and NATIVE_RESOURCE_DOMAIN not in name


def _extended_resource_name(raw: Any) -> str:
    name = _resource_name(raw)
    if not _is_extended(name):
        raise _fail(
            "ts_label",
            f"{_shown(name)} is not an extended resource name (a device plugin's resource, such as nvidia.com/gpu)",
            "name the GPUs as the device plugin advertises them: nvidia.com/gpu, amd.com/gpu, ...",
        )
    return name


_RESOURCE_NAME_SCHEMA = {"type": "string", "maxLength": LABEL_KEY_MAX}
ResourceName = Annotated[str, _PlainStr(_resource_name, _RESOURCE_NAME_SCHEMA)]
#: The resource name of a device (a GPU): an extended resource, ``<domain>/<name>``.
ExtendedResourceName = Annotated[str, _PlainStr(_extended_resource_name, {**_RESOURCE_NAME_SCHEMA, "pattern": "/"})]


def _whole_amounts(value: dict[str, Quantity]) -> Iterator[tuple[tuple[Any, ...], Invalid]]:
    for name, amount in value.items():
        problem = resource_amount_problem(name, amount)
        if problem is not None:
            yield (name,), problem


def resource_amount_problem(name: str, amount: Quantity) -> Invalid | None:
    """Why the API server refuses ``amount`` of the container resource ``name``, or None."""
    if _is_extended(name) and amount.value.denominator != 1:
        return _fail(
            "ts_quantity",
            f"{name} is an extended resource, of which Kubernetes takes whole amounts only: "
            f"{float(amount.value):g} is written {amount}, which the API server refuses",
            f"ask for a whole number of {name}, such as {math.ceil(amount.value)}",
        )
    if name.startswith(HUGEPAGES_PREFIX):
        try:
            page = Quantity.parse(name[len(HUGEPAGES_PREFIX) :]).value
        except ValueError:
            page = None  # not a size: no amount is a whole number of its pages
        # The API server reads the amount rounded up to a whole byte (Quantity.Value()).
        if page is None or page <= 0 or page.denominator != 1 or math.ceil(amount.value) % page:
            return _fail(
                "ts_quantity",
                f"{amount} of {name} is not a whole number of {name[len(HUGEPAGES_PREFIX) :]} pages",
                f"use {HUGEPAGES_PREFIX}2Mi or {HUGEPAGES_PREFIX}1Gi and a multiple of the page size",
            )
    return None


#: Resources by their Kubernetes name (``{rdma/ib: 8, hugepages-2Mi: 4Gi}``): names as containers take
#: them, whole amounts of an extended resource (``rdma/ib: 3.7`` would be written 3700m, which the
#: API server refuses), whole pages of huge pages.
ResourceList = Annotated[dict[ResourceName, ResourceQuantity], After(_whole_amounts)]


def _annotations_size(value: dict[str, str]) -> Iterator[tuple[tuple[Any, ...], Invalid]]:
    # The API server counts bytes (Go's len) of every key and value (ValidateAnnotationsSize).
    size = sum(len(k.encode()) + len(v.encode()) for k, v in value.items())
    if size > ANNOTATIONS_SPEC_MAX:
        yield (
            (),
            _fail(
                "ts_label",
                f"the annotations take {size} bytes (keys and values); a spec's take at most {ANNOTATIONS_SPEC_MAX}, "
                f"which leaves room for trainspec's own below the API server's limit of {ANNOTATIONS_TOTAL_MAX} "
                "bytes an object",
                "move large data out of annotations (into a ConfigMap, or the training code's own configuration)",
            ),
        )


#: Annotations of an object or of its pods: keys as label keys, values free, bounded in total.
Annotations = Annotated[dict[LabelKey, str], After(_annotations_size)]


# -- shared parts ------------------------------------------------------------------------------


class Metadata(_Model):
    """Kubernetes-style metadata of a spec document."""

    name: Name = field(description="RFC 1035 name of the runtime or job (lower-case, starts with a letter, <= 63).")
    namespace: NamespaceName | None = field(
        default=None,
        description="Namespace of a job or of a namespaced runtime. Jobs default to 'default'.",
    )
    labels: dict[LabelKey, LabelValue] = field(
        default_factory=dict, description="Labels put on the compiled object (TrainJob or runtime)."
    )
    annotations: Annotations = field(
        default_factory=dict, description="Annotations put on the compiled object (TrainJob or runtime)."
    )


class Resources(_Model):
    """Resources of one node (one trainer pod). Requests and limits are set equal."""

    gpu: Count | None = field(
        default=None, ge=0, le=MAX_GPUS_PER_NODE, description="GPUs per node (the runtime's gpuResource)."
    )
    cpu: CpuQuantity | None = field(default=None, description="CPU cores per node, e.g. 96 or 500m.")
    memory: ResourceQuantity | None = field(default=None, description="Memory per node, e.g. 1600Gi.")
    ephemeral_storage: ResourceQuantity | None = field(default=None, description="Local ephemeral storage per node.")
    extra: ResourceList = field(
        default_factory=dict,
        description="Other extended resources by their Kubernetes name, e.g. {hugepages-2Mi: 4Gi}.",
    )

    if TYPE_CHECKING:  # quantities as users write them: 8, 0.5, "64Gi", "500m" (validated and parsed at run time)

        def __init__(
            self,
            *,
            gpu: int | None = None,
            cpu: QuantityInput | None = None,
            memory: QuantityInput | None = None,
            ephemeral_storage: QuantityInput | None = None,
            extra: Mapping[str, QuantityInput] = ...,
        ) -> None: ...


class RaySettings(_Model):
    """The Ray cluster of a job on the ray target (KubeRay RayJob); other targets do not read it."""

    head_resources: Resources | None = field(
        default=None,
        description="Size of the head pod (GCS, dashboard and the job's driver): each resource left out keeps the "
        "default (cpu 2, memory 8Gi, no GPU); gpu counts the runtime's gpuResource. Requests equal limits.",
    )

    def _check(self) -> None:
        head = self.head_resources
        if head is None:
            return
        # The head always runs the GCS and the driver: a zero size would starve or OOM-kill them.
        for name, value in (("cpu", head.cpu), ("memory", head.memory)):
            if value is not None and not value.value:
                raise _fail("ts_value", f"headResources.{name} must be more than 0", "leave it out for the default")
