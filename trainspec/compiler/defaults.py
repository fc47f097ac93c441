"""Project defaults (``trainspec.yaml``) applied to specs before resolution.

A default fills a field only where the spec leaves it unset; the names of the fields it filled
are kept so explain can say a value came from the project defaults.
"""

from __future__ import annotations

from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.record import replace
from trainspec.dsl.spec.models import Runtime, TrainingJob
from trainspec.dsl.spec.project import Defaults


def apply_to_job(loaded: LoadedSpec, defaults: Defaults) -> tuple[LoadedSpec, frozenset[str]]:
    """``loaded`` with the project's defaults filled where the job sets none, and the names filled."""
    job: TrainingJob = loaded.spec
    filled: set[str] = set()
    metadata, spec = job.metadata, job.spec
    if metadata.namespace is None and defaults.namespace:
        metadata = metadata.model_copy(update={"namespace": defaults.namespace})
        filled.add("namespace")
    updates: dict = {}
    if spec.queue is None and defaults.queue:
        updates["queue"] = defaults.queue
        filled.add("queue")
    if spec.priority is None and defaults.priority:
        updates["priority"] = defaults.priority
        filled.add("priority")
    ckpt = spec.checkpoint
    if ckpt is not None and ckpt.size is not None and ckpt.storage_class is None and defaults.storage_class:
        updates["checkpoint"] = ckpt.model_copy(update={"storage_class": defaults.storage_class})
        filled.add("checkpoint.storageClass")
    if spec.tracking is None and defaults.tracking is not None:
        updates["tracking"] = defaults.tracking
        filled.add("tracking")
    if not filled:
        return loaded, frozenset()
    new = job.model_copy(update={"metadata": metadata, "spec": spec.model_copy(update=updates)})
    return replace(loaded, spec=new), frozenset(filled)


def apply_to_runtime(loaded: LoadedSpec, defaults: Defaults) -> LoadedSpec:
    """``loaded`` with the project's gang policy and stage image filled where the runtime sets none."""
    runtime: Runtime = loaded.spec
    updates: dict = {}
    if defaults.gang is not None and not loaded.has(("spec", "gang")):
        updates["gang"] = defaults.gang
    sharding = runtime.spec.data_sharding
    # Only a runtime that runs the stage gets the image: the default never adds dataSharding itself.
    if sharding is not None and sharding.image is None and defaults.stage_image:
        updates["data_sharding"] = sharding.model_copy(update={"image": defaults.stage_image})
    if not updates:
        return loaded
    new = runtime.model_copy(update={"spec": runtime.spec.model_copy(update=updates)})
    return replace(loaded, spec=new)
