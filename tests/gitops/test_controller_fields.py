"""A sync never fights a controller: render, let the controllers write what they write on the live
object, render again, and there is nothing to apply.

"Nothing to apply" is server-side apply's rule: every field the manifest sets already has that
value on the live object (lists keyed by ``name`` or ``manager`` are matched by key, as their
CRDs declare them ``x-kubernetes-list-type: map``); fields only the live object has belong to
other managers and are left alone. Each GitOps controller is modelled as it applies: Argo CD
sends the live values of the ``ignoreDifferences`` paths (``RespectIgnoreDifferences=true``);
Flux does not update an object marked ``ssa: IfNotPresent``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.compiler.pipeline import Options, run
from trainspec.compiler.runs import RUN_KINDS
from trainspec.gitops.controller_fields import controller_fields

ROOT = Path(__file__).resolve().parents[2]
_KEYS = ("manager", "name")


def missing(desired: Any, live: Any, path: str = "") -> list[str]:
    """Paths the manifest sets to a value the live object does not have (what an apply would change)."""
    if isinstance(desired, dict):
        if not isinstance(live, dict):
            return [path or "."]
        out: list[str] = []
        for key, value in desired.items():
            out += missing(value, live.get(key), f"{path}.{key}")
        return out
    if isinstance(desired, list) and desired and all(isinstance(i, dict) for i in desired):
        key = next((k for k in _KEYS if all(k in item for item in desired)), None)
        if key is not None and isinstance(live, list):
            by_key = {item.get(key): item for item in live if isinstance(item, dict)}
            out = []
            for item in desired:
                out += missing(item, by_key.get(item[key]), f"{path}[{key}={item[key]}]")
            return out
    return [] if desired == live else [path]


def kueue_admits(obj: dict[str, Any]) -> dict[str, Any]:
    """The live object after Kueue's webhook, its admission, and the engine's own writes."""
    live = copy.deepcopy(obj)
    spec = live["spec"]
    flavor = {"cloud.google.com/gke-nodepool": "a100"}
    kind = live["kind"]
    if kind == "TrainJob":
        spec["suspend"] = False  # the webhook suspended it at creation; admission unsuspends it
        patches = spec.setdefault("runtimePatches", [])
        for patch in patches:
            patch["time"] = "2026-12-01T10:00:00Z"  # Trainer's webhook stamps every entry
        patches.append(
            {
                "manager": "kueue.x-k8s.io/manager",
                "time": "2026-12-01T10:00:01Z",
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {"name": "node", "template": {"spec": {"template": {"spec": {"nodeSelector": flavor}}}}}
                            ]
                        }
                    }
                },
            }
        )
    elif kind == "RayJob":
        spec["suspend"] = False
        cluster = spec["rayClusterSpec"]
        for group in [cluster["headGroupSpec"], *cluster.get("workerGroupSpecs", [])]:
            group["template"]["spec"].setdefault("nodeSelector", {}).update(flavor)
    else:  # PyTorchJob, JAXJob, MPIJob
        spec.setdefault("runPolicy", {})["suspend"] = False
        replicas = next(value for key, value in spec.items() if key.endswith("ReplicaSpecs"))
        for replica in replicas.values():
            replica["template"]["spec"].setdefault("nodeSelector", {}).update(flavor)
    live.setdefault("status", {})["conditions"] = [{"type": "Running", "status": "True"}]
    live["metadata"]["finalizers"] = ["ray.io/rayjob-finalizer"] if kind == "RayJob" else []
    return live


def rendered(paths: list[str], engine: str, gitops: str = "argocd") -> list[dict[str, Any]]:
    result = run([str(ROOT / p) for p in paths], Options(target={"engine": engine}, project=None))
    assert result.ok, [d.message for d in result.diagnostics]
    return [d for d in yaml.safe_load_all(result.to_yaml(gitops=gitops)) if d["kind"] in RUN_KINDS]


def argocd_sends(desired: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    """What Argo CD applies: the manifest with the live values at its ignoreDifferences paths."""
    options = desired["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-options", "")
    assert "RespectIgnoreDifferences=true" in options
    sent = copy.deepcopy(desired)
    group = desired["apiVersion"].rpartition("/")[0]
    for path in controller_fields().get((group, desired["kind"]), ()):
        _copy_path(live, sent, path)
    return sent


def _copy_path(source: Any, target: Any, path: tuple[str, ...]) -> None:
    if not path or not isinstance(source, (dict, list)) or not isinstance(target, (dict, list)):
        return
    head, rest = path[0], path[1:]
    if head == "*":
        pairs = (
            zip(source.values(), target.values(), strict=False)
            if isinstance(source, dict) and isinstance(target, dict)
            else zip(source, target, strict=False)
        )
        for one, other in pairs:
            _copy_path(one, other, rest)
        return
    if not isinstance(source, dict) or not isinstance(target, dict) or head not in source:
        return
    if not rest:
        target[head] = copy.deepcopy(source[head])
    else:
        target.setdefault(head, {} if not isinstance(source[head], list) else [])
        _copy_path(source[head], target[head], rest)


CASES = [
    (["examples/ddp-cpu.yaml"], "trainer"),
    (["examples/llama-sft"], "trainer"),
    (["examples/ddp-cpu.yaml"], "ray"),
    (["examples/ray-train"], "ray"),
    (["examples/ddp-cpu.yaml"], "training-operator"),
    (["examples/mpijob.yaml"], "training-operator"),
    (["examples/jax.yaml"], "training-operator"),
]


@pytest.mark.parametrize(("paths", "engine"), CASES, ids=[f"{e}-{p[0]}" for p, e in CASES])
def test_after_the_controllers_write_an_argocd_sync_has_nothing_to_apply(paths: list[str], engine: str) -> None:
    jobs = rendered(paths, engine)
    assert jobs
    for obj in jobs:
        assert obj["metadata"]["labels"].get("kueue.x-k8s.io/queue-name"), "the examples are queued jobs"
        live = kueue_admits(obj)
        again = next(o for o in rendered(paths, engine) if o["metadata"]["name"] == obj["metadata"]["name"])
        assert missing(argocd_sends(again, live), live) == [], obj["metadata"]["name"]


@pytest.mark.parametrize(("paths", "engine"), CASES, ids=[f"{e}-{p[0]}" for p, e in CASES])
def test_flux_creates_a_run_once_and_never_updates_it(paths: list[str], engine: str) -> None:
    for obj in rendered(paths, engine, gitops="flux"):
        assert obj["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/ssa"] == "IfNotPresent"


def test_without_respecting_ignored_differences_a_ray_sync_would_undo_kueue() -> None:
    """Why the ignoreDifferences exist: workerGroupSpecs is an atomic list, Kueue writes into it."""
    obj = rendered(["examples/ray-train"], "ray")[0]
    live = kueue_admits(obj)
    assert ".spec.rayClusterSpec.workerGroupSpecs" in missing(obj, live)
    assert missing(argocd_sends(obj, live), live) == []


def test_the_rule_finds_a_fought_over_field() -> None:
    """The check above can fail: a manifest that set suspend would undo Kueue's admission."""
    obj = rendered(["examples/ddp-cpu.yaml"], "trainer")[0]
    obj["spec"]["suspend"] = True
    assert missing(obj, kueue_admits({**obj, "spec": {**obj["spec"]}})) == [".spec.suspend"]
