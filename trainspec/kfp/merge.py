"""Turn a compiled job object and a KFP ``TaskConfig`` into the object the launcher applies.

Every kind is renamed for the run, labelled with it and given the owner reference; a per-run
checkpoint claim replaces the compiled one wherever the object mounts the checkpoint volume. The
TaskConfig reaches TrainJobs only (below); for the other engines' kinds a TaskConfig that sets
anything is refused: which of their pods (Ray head or workers, Master or Worker) should get a GPU
request is not the step's to guess.

Pure functions on plain dicts (no client, no kfp import), so they are unit tested directly.

Where each TaskConfig field goes (Trainer >= 2.2, see the Trainer API notes):

* ``resources`` -> ``spec.trainer.resourcesPerNode`` (key by key over the compiled values);
* ``env`` -> ``spec.trainer.env`` (upserted by name; runtimePatches may not set env on ``node``);
* ``nodeSelector``, ``tolerations``, ``affinity``, ``volumes`` and ``volumeMounts`` -> one
  ``runtimePatches`` entry with manager ``trainspec.dev/kfp``, on rjob ``node`` and its
  container ``node``.
"""

from __future__ import annotations

import copy
from typing import Any

from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.versions import parse_version
from trainspec.k8s.wellknown import ANCESTOR_TRAINER
from trainspec.kfp import launcher_names as N  #: TaskConfig attribute -> its Kubernetes (camelCase) name.

FIELDS = {
    "affinity": "affinity",
    "tolerations": "tolerations",
    "node_selector": "nodeSelector",
    "env": "env",
    "volumes": "volumes",
    "volume_mounts": "volumeMounts",
    "resources": "resources",
}
#: The first Trainer release with ``runtimePatches``, which the compiler emits.
MIN_TRAINER = (2, 2)


class MergeError(ValueError, TrainspecError):
    """The TrainJob cannot be prepared as asked (a bad input, not a cluster problem)."""


def parse_trainer_api(value: str) -> tuple[int, int]:
    """``"2.3"``, ``"v2.3.0"`` -> ``(2, 3)``; refuses releases without runtimePatches."""
    try:
        version = parse_version(value)
    except ValueError:
        raise MergeError(f"trainer_api {value!r} is not a version like 2.3") from None
    if version < MIN_TRAINER or version[0] != 2:
        raise MergeError(
            f"Trainer {value} is not supported: trainspec emits runtimePatches, which need "
            f"Trainer {MIN_TRAINER[0]}.{MIN_TRAINER[1]} or later (2.x)"
        )
    return version


def intify(value: Any) -> Any:
    """Integral floats back to ints, recursively.

    KFP carries struct inputs as protobuf Structs, whose numbers are doubles: a toleration's
    ``tolerationSeconds: 300`` arrives as ``300.0``, which the API server rejects for an int64.
    Pod specs have no genuine float fields, so every integral float here was an int.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: intify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [intify(v) for v in value]
    return value


def task_config_fields(task_config: Any) -> dict[str, Any]:
    """The non-empty fields of a ``dsl.TaskConfig`` (or an equivalent dict), by Kubernetes name."""
    if task_config is None:
        return {}
    out: dict[str, Any] = {}
    for attr, wire in FIELDS.items():
        if isinstance(task_config, dict):
            value = task_config.get(wire, task_config.get(attr))
        else:
            value = getattr(task_config, attr, None)
        if value:  # None, [] and {} all mean "not set"
            out[wire] = intify(copy.deepcopy(value))
    return out


def merge_resources(base: dict[str, Any] | None, extra: dict[str, Any] | None) -> dict[str, Any] | None:
    """``requests`` and ``limits`` merged key by key, ``extra`` winning."""
    if not extra:
        return base
    merged = copy.deepcopy(base) if base else {}
    for part in ("requests", "limits"):
        if extra.get(part):
            merged[part] = {**(merged.get(part) or {}), **extra[part]}
    for key, value in extra.items():  # e.g. "claims": kept as given
        if key not in ("requests", "limits"):
            merged[key] = value
    return merged


def upsert_env(env: list[dict[str, Any]] | None, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``env`` with each variable of ``extra`` replacing the one of the same name, or appended."""
    merged = {item["name"]: item for item in env or []}
    for item in extra:
        merged[item["name"]] = item
    return list(merged.values())


def runtime_node_resources(runtime: dict[str, Any] | None) -> dict[str, Any] | None:
    """The resources of container ``node`` in the runtime's trainer rjob, if any."""
    rjobs = ((((runtime or {}).get("spec") or {}).get("template") or {}).get("spec") or {}).get("replicatedJobs")
    for rjob in rjobs or []:
        template = rjob.get("template") or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        if labels.get(N.ANCESTOR_LABEL) != ANCESTOR_TRAINER:
            continue
        pod = ((template.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in pod.get("containers") or []:
            if container.get("name") == N.TRAINER_CONTAINER:
                return container.get("resources")
    return None


def runtime_patch(fields: dict[str, Any]) -> dict[str, Any] | None:
    """The launcher's ``runtimePatches`` entry, or None when the TaskConfig sets no pod field."""
    pod: dict[str, Any] = {}
    if fields.get("volumes"):
        pod["volumes"] = fields["volumes"]
    if fields.get("volumeMounts"):
        pod["containers"] = [{"name": N.TRAINER_CONTAINER, "volumeMounts": fields["volumeMounts"]}]
    for key in ("nodeSelector", "affinity", "tolerations"):
        if fields.get(key):
            pod[key] = fields[key]
    if not pod:
        return None
    rjob = {"name": N.TRAINER_RJOB, "template": {"spec": {"template": {"spec": pod}}}}
    return {"manager": N.PATCH_MANAGER, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [rjob]}}}}


def rewrite_checkpoint_claim(spec: dict[str, Any], claim: str) -> None:
    """Point the compiler's checkpoint volume at ``claim`` (a PVC the pipeline created)."""
    found = False
    for patch in spec.get("runtimePatches") or []:
        if patch.get("manager") != N.COMPILER_PATCH_MANAGER:
            continue
        rjobs = (((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec") or {}).get(
            "replicatedJobs"
        ) or []
        for rjob in rjobs:
            pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            for volume in pod.get("volumes") or []:
                if volume.get("name") == N.CHECKPOINT_VOLUME and "persistentVolumeClaim" in volume:
                    volume["persistentVolumeClaim"]["claimName"] = claim
                    found = True
    if not found:
        raise MergeError(
            f"checkpoint_claim {claim!r} was given, but the TrainJob mounts no checkpoint "
            f"volume (the spec has no checkpoint on a volume)"
        )


def rewrite_any_claim(obj: Any, claim: str) -> bool:
    """Point every checkpoint volume in ``obj`` (any pod template of any kind) at ``claim``."""
    found = False
    if isinstance(obj, dict):
        volumes = obj.get("volumes")
        for volume in volumes if isinstance(volumes, list) else []:
            if (
                isinstance(volume, dict)
                and volume.get("name") == N.CHECKPOINT_VOLUME
                and "persistentVolumeClaim" in volume
            ):
                volume["persistentVolumeClaim"]["claimName"] = claim
                found = True
        for value in obj.values():
            found = rewrite_any_claim(value, claim) or found
    elif isinstance(obj, list):
        for item in obj:
            found = rewrite_any_claim(item, claim) or found
    return found


def _identify(body: dict[str, Any], *, name: str, namespace: str, run_id: str, owner: dict[str, Any] | None) -> None:
    """Rename ``body`` for the run, label it with the run id, set the owner; drop server fields."""
    body.pop("status", None)
    meta = body.setdefault("metadata", {})
    for server_field in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
        meta.pop(server_field, None)
    meta["name"] = name
    meta["namespace"] = namespace
    meta["labels"] = {**(meta.get("labels") or {}), N.RUN_ID_LABEL: N.label_value(run_id)}
    if owner is not None:
        meta["ownerReferences"] = [owner]


def _prepare_other(
    manifest: dict[str, Any], *, task_config: Any, checkpoint_claim: str, **identity: Any
) -> dict[str, Any]:
    """Another engine's job object (RayJob, PyTorchJob, MPIJob...) for the run."""
    kind = manifest.get("kind")
    try:
        N.dialect_of(manifest)
    except ValueError:
        raise MergeError(
            f"expected a {N.TRAINER_API_VERSION} TrainJob or another job object trainspec compiles, "
            f"got {manifest.get('apiVersion')}/{kind}"
        ) from None
    fields = task_config_fields(task_config)
    if fields:
        raise MergeError(
            f"the step's TaskConfig sets {', '.join(sorted(fields))}: the launcher forwards it to TrainJobs only; "
            f"set them in the spec for a {kind} (resourcesPerNode, env, nodeSelector, tolerations)"
        )
    body = copy.deepcopy(manifest)
    _identify(body, **identity)
    if checkpoint_claim and not rewrite_any_claim(body.get("spec"), checkpoint_claim):
        raise MergeError(
            f"checkpoint_claim {checkpoint_claim!r} was given, but the {kind} mounts no checkpoint "
            f"volume (the spec has no checkpoint on a volume)"
        )
    return body


def prepare(
    manifest: dict[str, Any],
    *,
    name: str,
    namespace: str,
    run_id: str,
    task_config: Any = None,
    trainer_api: str = "2.3",
    checkpoint_claim: str = "",
    runtime: dict[str, Any] | None = None,
    owner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The job object to apply: renamed, labelled with the run, TaskConfig merged (TrainJobs), owner set.

    ``runtime`` (the fetched runtime) matters for Trainer 2.2 only, which *replaces* the
    runtime's resources with ``resourcesPerNode``: the runtime's values are copied in first so a
    GPU request from the pipeline does not drop the runtime's memory request. Trainer 2.3
    merges them itself.
    """
    version = parse_trainer_api(trainer_api)
    identity: dict[str, Any] = {"name": name, "namespace": namespace, "run_id": run_id, "owner": owner}
    if manifest.get("apiVersion") != N.TRAINER_API_VERSION or manifest.get("kind") != "TrainJob":
        return _prepare_other(manifest, task_config=task_config, checkpoint_claim=checkpoint_claim, **identity)
    body = copy.deepcopy(manifest)
    _identify(body, **identity)
    spec = body.setdefault("spec", {})
    if checkpoint_claim:
        rewrite_checkpoint_claim(spec, checkpoint_claim)

    fields = task_config_fields(task_config)
    trainer = spec.get("trainer")
    if fields.get("resources") or fields.get("env"):
        trainer = spec.setdefault("trainer", {})
    if fields.get("resources"):
        base = trainer.get("resourcesPerNode")
        if version < (2, 3):
            base = merge_resources(runtime_node_resources(runtime), base)
        trainer["resourcesPerNode"] = merge_resources(base, fields["resources"])
    if fields.get("env"):
        trainer["env"] = upsert_env(trainer.get("env"), fields["env"])
    patch = runtime_patch(fields)
    if patch is not None:
        patches = [p for p in spec.get("runtimePatches") or [] if p.get("manager") != N.PATCH_MANAGER]
        spec["runtimePatches"] = [*patches, patch]
    return body
