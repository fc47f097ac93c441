"""Read a pod template into the specs: image, command, env, resources, volumes, scheduling.

What belongs to the platform (image, resources per node, GPU resource, ``/dev/shm``, the
interconnect: NCCL env and RDMA devices, scheduling) goes to the Runtime; what belongs to the run
(command, args, env, Secrets, the checkpoint volume, pod labels and annotations, Kueue's
topology request) to the TrainingJob. :func:`compare` checks that another replica type's pod
is the same shape, since a spec describes one node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.framework.quantity import Quantity, QuantityError
from trainspec.dsl.kube_facts import (
    CHECKPOINT_DIR_ENV,
    CHECKPOINT_KEEP_ENV,
    RESERVED_ENV_PREFIXES,
    TRAINER_RESERVED_ENV,
    TRAINSPEC_ENV,
)
from trainspec.dsl.spec.semantics import looks_like_credential
from trainspec.k8s.wellknown import RAY_ENV, SHM_MOUNT_PATH, TOPOLOGY_PREFERRED, TOPOLOGY_REQUIRED
from trainspec.migrate.draft import Draft
from trainspec.migrate.source import Path, Source

#: Env names of the interconnect (NCCL, UCX, libfabric, Gloo's interface): the runtime's network profile.
NETWORK_ENV = re.compile(r"^(NCCL_|NVSHMEM_|UCX_|FI_|GLOO_SOCKET_IFNAME$|TP_SOCKET_IFNAME$)")
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
_FIXED = ("cpu", "memory", "ephemeral-storage")
_SPEC_NAMES = {"cpu": "cpu", "memory": "memory", "ephemeral-storage": "ephemeralStorage"}
_RESERVED = frozenset(name for names in TRAINER_RESERVED_ENV.values() for name in names)


class MigrationError(TrainspecError):
    """The manifest cannot become specs (carries the TS543 diagnostic)."""

    def __init__(self, diagnostic: Any) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass
class Pod:
    """Where the main container of a pod template is, once found."""

    template: Path
    container: Path
    #: Volume name -> index in spec.volumes.
    volumes: dict[str, int] = field(default_factory=dict)


def find_pod(src: Source, template: Path, container_name: str | None = None) -> Pod:
    """The pod template at ``template`` and its main container (by name, else the first)."""
    containers = src.sequence((*template, "spec", "containers"))
    if not containers or not all(isinstance(c, dict) for c in containers):
        raise MigrationError(
            src.error(
                (*template, "spec", "containers"),
                "the pod template has no containers",
                hint="a job's pods need a container with an image",
            )
        )
    index = next((i for i, c in enumerate(containers) if c.get("name") == container_name), 0)
    for other in range(len(containers)):
        if other != index:
            src.drop(
                (*template, "spec", "containers", other),
                "a spec describes one trainer container per pod (sidecars are not modelled)",
            )
    volumes = {
        v["name"]: i
        for i, v in enumerate(src.sequence((*template, "spec", "volumes")))
        if isinstance(v, dict) and isinstance(v.get("name"), str)
    }
    pod = Pod(template, (*template, "spec", "containers", index), volumes)
    if not isinstance(src.get((*pod.container, "image")), str):
        raise MigrationError(
            src.error(
                (*pod.container, "image") if src.has((*pod.container, "image")) else pod.container,
                "the trainer container has no image",
            )
        )
    src.use((*pod.container, "name"))
    return pod


def read_image(src: Source, draft: Draft, pod: Pod) -> None:
    draft.set_runtime(("image",), src.take((*pod.container, "image")), (*pod.container, "image"))


def read_command(src: Source, draft: Draft, pod: Pod) -> None:
    """The container's command and args become the job's (they are the run, not the platform)."""
    for key in ("command", "args"):
        value = src.take((*pod.container, key))
        if value is None:
            continue
        words = _words(src, (*pod.container, key), value)
        draft.set_job((key,), words, (*pod.container, key))


def _words(src: Source, path: Path, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(
        isinstance(w, (str, int, float)) and not isinstance(w, bool) for w in value
    ):
        raise MigrationError(src.error(path, f"{path[-1]} must be a list of strings"))
    return [str(w) for w in value]


def read_env(src: Source, draft: Draft, pod: Pod, *, contract: frozenset[str] = frozenset()) -> None:
    """Plain env and Secret references into the job (the interconnect's into the runtime's network).

    ``contract``: env names trainspec itself sets on this target (dropped silently: compiling
    sets them again from the spec).
    """
    base = (*pod.container, "env")
    src.use(base)
    for index, entry in enumerate(src.sequence(base)):
        path = (*base, index)
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            src.drop(path, "an env entry without a name")
            continue
        if name in contract or name in TRAINSPEC_ENV or name in RAY_ENV:
            continue  # trainspec's own in-pod contract: compiling the spec sets it again
        if name in _RESERVED or name.startswith(RESERVED_ENV_PREFIXES):
            src.drop(
                path,
                f"{name} is set by the training operator or Kubeflow Trainer from the job's shape",
                hint="nodes and procsPerNode set it",
            )
            continue
        source = entry.get("valueFrom")
        if source is not None:
            ref = source.get("secretKeyRef") if isinstance(source, dict) else None
            if (
                isinstance(ref, dict)
                and set(source) == {"secretKeyRef"}
                and isinstance(ref.get("name"), str)
                and isinstance(ref.get("key"), str)
                and not ref.get("optional")
            ):
                draft.set_job(("secretEnv", name), {"secret": ref["name"], "key": ref["key"]}, path)
            else:
                src.drop(
                    path,
                    f"{name} comes from a source other than a Secret key (secretEnv is the only reference a spec has)",
                    hint="give it a plain value, or put it in a Secret",
                )
            continue
        value = entry.get("value", "")
        value = value if isinstance(value, str) else str(value)
        what = looks_like_credential(name, value)
        if what:
            src.drop(
                path,
                f"the value of {name} looks like {what}, and credentials never go into specs",
                hint=f"put it in a Secret and add secretEnv: {{{name}: {{secret: <name>, key: <key>}}}}",
            )
        elif NETWORK_ENV.match(name):
            draft.set_runtime(("network", "env", name), value, path)
        else:
            draft.set_job(("env", name), value, path)


def read_resources(src: Source, draft: Draft, pod: Pod) -> None:
    """Per-node resources (requests equal limits in specs) into the runtime; RDMA devices into its network."""
    read_resource_block(src, draft, (*pod.container, "resources"))


def read_resource_block(src: Source, draft: Draft, base: Path, *, job: bool = False) -> None:
    """``limits``/``requests`` at ``base`` into resourcesPerNode (the job's with ``job``, else the runtime's)."""
    limits = src.mapping((*base, "limits"))
    requests = src.mapping((*base, "requests"))
    src.use((*base, "limits"), (*base, "requests"))
    for name in [*limits, *(n for n in requests if n not in limits)]:
        where = (*base, "limits" if name in limits else "requests", name)
        value = _quantity(src, where, limits.get(name, requests.get(name)))
        if name in limits and name in requests:
            asked = _quantity(src, (*base, "requests", name), requests[name])
            if asked.value != value.value:
                src.warn(
                    (*base, "requests", name),
                    f"the request of {name} ({asked}) differs from its limit "
                    f"({value}); specs set requests equal to limits, so it becomes {value}",
                )
        elif name not in limits:
            src.warn(
                where, f"{name} is only requested; specs set requests equal to limits, so it is also limited to {value}"
            )
        _resource(src, draft, name, value, where, job)
    for key in src.mapping(base):
        if key not in ("limits", "requests"):
            src.drop((*base, key), "a spec has no per-container resource claims")


def _quantity(src: Source, path: Path, raw: Any) -> Quantity:
    try:
        return Quantity.parse(raw)
    except (QuantityError, ValueError) as exc:
        raise MigrationError(src.error(path, f"not a Kubernetes quantity: {exc}")) from None


def _resource(src: Source, draft: Draft, name: str, value: Quantity, where: Path, job: bool) -> None:
    put = draft.set_job if job else draft.set_runtime
    current = (draft.job if job else draft.runtime).get("resourcesPerNode", {})
    if name in _FIXED:
        put(("resourcesPerNode", _SPEC_NAMES[name]), value.to_k8s(), where)
    elif not job and (name.startswith("rdma/") or "rdma" in name):
        draft.set_runtime(("network", "resources", name), value.to_k8s(), where)
    elif name.endswith("/gpu") and "gpu" not in current:
        if not value.is_integer:
            raise MigrationError(src.error(where, f"{name} must be a whole number of GPUs, got {value}"))
        put(("resourcesPerNode", "gpu"), int(value.value), where)
        if name != DEFAULT_GPU_RESOURCE and not job:
            draft.set_runtime(("gpuResource",), name, where)
    else:
        put(("resourcesPerNode", "extra", name), value.to_k8s(), where)


def read_volumes(src: Source, draft: Draft, pod: Pod) -> None:
    """``/dev/shm`` as a memory emptyDir -> sharedMemory; a mounted PVC -> the job's checkpoint claim."""
    mounts = src.sequence((*pod.container, "volumeMounts"))
    src.use((*pod.container, "volumeMounts"))
    checkpoint = False
    for index, mount in enumerate(mounts):
        path = (*pod.container, "volumeMounts", index)
        name = mount.get("name") if isinstance(mount, dict) else None
        volume_index = pod.volumes.get(name) if isinstance(name, str) else None
        if not isinstance(name, str) or volume_index is None or not isinstance(mount.get("mountPath"), str):
            src.drop(path, "the mount names no volume of the pod")
            continue
        volume_path = (*pod.template, "spec", "volumes", volume_index)
        volume = src.mapping(volume_path)
        extra = sorted(set(mount) - {"name", "mountPath"})
        if mount["mountPath"] == SHM_MOUNT_PATH and _is_memory(volume) and not extra:
            size = volume["emptyDir"].get("sizeLimit")
            if size is None:
                src.drop(
                    volume_path,
                    "sharedMemory needs a size and this /dev/shm has no sizeLimit",
                    hint="set spec.sharedMemory on the runtime, e.g. 64Gi",
                )
                src.use(path)
                continue
            draft.set_runtime(
                ("sharedMemory",),
                _quantity(src, (*volume_path, "emptyDir", "sizeLimit"), size).to_k8s(),
                (*volume_path, "emptyDir", "sizeLimit"),
            )
            src.use(path, volume_path)
        elif set(volume) == {"name", "persistentVolumeClaim"} and not checkpoint and not extra:
            claim = src.get((*volume_path, "persistentVolumeClaim", "claimName"))
            if not isinstance(claim, str):
                continue
            checkpoint = True
            draft.set_job(("checkpoint", "path"), mount["mountPath"], (*path, "mountPath"))
            draft.set_job(("checkpoint", "claimName"), claim, (*volume_path, "persistentVolumeClaim", "claimName"))
            if src.get((*volume_path, "persistentVolumeClaim", "readOnly")):
                continue  # left over: TS540 (a checkpoint volume is written to)
            src.use(path, volume_path)
            if not _named_checkpoint(name, mount["mountPath"]):
                src.warn(
                    path,
                    f"the claim {claim} mounted at {mount['mountPath']} becomes the job's checkpoint "
                    "volume (a spec mounts one claim, and sets TRAINSPEC_CHECKPOINT_DIR to its path)",
                )
    for index, _volume in enumerate(src.sequence((*pod.template, "spec", "volumes"))):
        volume_path = (*pod.template, "spec", "volumes", index)
        if volume_path not in src.used:
            src.drop(volume_path, "a spec mounts only /dev/shm and one checkpoint claim")


def _is_memory(volume: dict[str, Any]) -> bool:
    empty = volume.get("emptyDir")
    return set(volume) == {"name", "emptyDir"} and isinstance(empty, dict) and empty.get("medium") == "Memory"


def _named_checkpoint(name: str, path: str) -> bool:
    text = f"{name} {path}".lower()
    return "checkpoint" in text or "ckpt" in text


def read_checkpoint_env(src: Source, draft: Draft, pod: Pod) -> None:
    """A manifest trainspec compiled carries the checkpoint contract: keep its ``keep`` count."""
    for index, entry in enumerate(src.sequence((*pod.container, "env"))):
        if isinstance(entry, dict) and entry.get("name") == CHECKPOINT_KEEP_ENV and "checkpoint" in draft.job:
            value = str(entry.get("value", ""))
            if value.isdigit() and int(value) != 3:
                draft.set_job(("checkpoint", "keep"), int(value), (*pod.container, "env", index))
        if isinstance(entry, dict) and entry.get("name") == CHECKPOINT_DIR_ENV and "checkpoint" not in draft.job:
            src.drop((*pod.container, "env", index), "the checkpoint directory has no mounted claim in this pod")


def read_scheduling(src: Source, draft: Draft, pod: Pod) -> None:
    """nodeSelector, tolerations, schedulerName and priorityClassName into the runtime's scheduling."""
    spec = (*pod.template, "spec")
    selector = src.take((*spec, "nodeSelector"))
    if isinstance(selector, dict) and selector:
        draft.set_runtime(
            ("scheduling", "nodeSelector"), {str(k): str(v) for k, v in selector.items()}, (*spec, "nodeSelector")
        )
    tolerations = src.take((*spec, "tolerations"))
    if isinstance(tolerations, list) and tolerations:
        out = []
        for index, item in enumerate(tolerations):
            known = {
                k: item[k]
                for k in ("key", "operator", "value", "effect", "tolerationSeconds")
                if isinstance(item, dict) and item.get(k) is not None
            }
            if isinstance(item, dict) and set(item) - set(known):
                src.drop(
                    (*spec, "tolerations", index),
                    "a toleration has key, operator, value, effect, tolerationSeconds only",
                )
            out.append(known)
        draft.set_runtime(("scheduling", "tolerations"), out, (*spec, "tolerations"))
    for key in ("schedulerName", "priorityClassName"):
        value = src.take((*spec, key))
        if isinstance(value, str):
            draft.set_runtime(("scheduling", key), value, (*spec, key))


def read_pod_metadata(src: Source, draft: Draft, pod: Pod) -> None:
    """Pod labels and annotations into the job; Kueue's topology annotation into ``topology``."""
    meta = (*pod.template, "metadata")
    for key, field_name in (("labels", "podLabels"), ("annotations", "podAnnotations")):
        for name, value in src.mapping((*meta, key)).items():
            path = (*meta, key, name)
            src.use(path)
            if key == "annotations" and name in (TOPOLOGY_REQUIRED, TOPOLOGY_PREFERRED):
                mode = "required" if name == TOPOLOGY_REQUIRED else "preferred"
                draft.set_job(
                    ("topology",),
                    {"mode": mode, "level": str(value)} if mode != "required" else {"level": str(value)},
                    path,
                )
                continue
            draft.set_job((field_name, str(name)), "" if value is None else str(value), path)
    src.use((*meta, "labels"), (*meta, "annotations"))


def read_security(src: Source, draft: Draft, pod: Pod) -> None:
    """IPC_LOCK comes with RDMA devices in specs: carried when the pod asks for an RDMA resource."""
    base = (*pod.container, "securityContext")
    add = src.get((*base, "capabilities", "add"))
    rdma = "resources" in draft.runtime.get("network", {})
    if (
        add == ["IPC_LOCK"]
        and rdma
        and set(src.mapping(base)) == {"capabilities"}
        and set(src.mapping((*base, "capabilities"))) == {"add"}
    ):
        src.use(base)
    elif add == ["IPC_LOCK"] and not rdma:
        src.warn(
            (*base, "capabilities", "add"),
            "IPC_LOCK without an RDMA device: specs add it only with "
            "network.resources (rdma/...), so it is not carried",
            code=codes.FIELD_NOT_CARRIED,
        )


def read_pod(src: Source, draft: Draft, pod: Pod, *, contract: frozenset[str] = frozenset()) -> None:
    """Everything of a trainer pod the specs carry."""
    read_image(src, draft, pod)
    read_command(src, draft, pod)
    read_resources(src, draft, pod)
    read_env(src, draft, pod, contract=contract)
    read_volumes(src, draft, pod)
    read_checkpoint_env(src, draft, pod)
    read_scheduling(src, draft, pod)
    read_pod_metadata(src, draft, pod)
    read_security(src, draft, pod)


def compare(
    src: Source, other: Path, primary: Path, what: tuple[str, str], *, skip: frozenset[Path] = frozenset()
) -> None:
    """Check that the subtree at ``other`` equals the one at ``primary``; warn where it does not.

    ``what`` names the pods in the warnings: (the primary's, the other's).

    ``skip`` holds paths relative to both that the caller reads itself. A spec has one pod shape,
    so the primary's value is the one carried.
    """
    _compare(src, other, primary, (), what, skip)


def _compare(src: Source, other: Path, primary: Path, rel: Path, what: tuple[str, str], skip: frozenset[Path]) -> None:
    if rel in skip:
        return
    mine, theirs = src.get((*other, *rel)), src.get((*primary, *rel))
    if mine == theirs:
        src.use((*other, *rel))
        return
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs), key=str):
            if key in mine or (*rel, key) in skip:
                _compare(src, other, primary, (*rel, key), what, skip)
            else:
                src.warn(
                    (*other, *rel),
                    f"{'.'.join(map(str, (*rel, key)))} is set on the {what[0]} pods but not "
                    f"on the {what[1]} pods; a spec has one pod shape, the {what[0]}'s",
                )
        return
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for index in range(len(mine)):
            _compare(src, other, primary, (*rel, index), what, skip)
        return
    if theirs is None:
        src.warn(
            (*other, *rel),
            f"is set only on the {what[1]} pods; a spec has one pod shape, the {what[0]}'s, so it is not carried",
            code=codes.FIELD_NOT_CARRIED,
        )
        return
    src.warn(
        (*other, *rel),
        f"differs from the {what[0]} pods ({_short(theirs)}); a spec has one pod shape, so "
        f"the {what[0]}'s value is carried",
        code=codes.FIELD_NOT_CARRIED,
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["MigrationError", "Pod", "compare", "find_pod", "read_pod"]
