"""The JobSet webhook's create rules (TS503), on JobSets, runtime templates and TrainJobs.

Cases written from reading kubernetes-sigs/jobset ``pkg/webhooks/jobset_webhook.go`` (the
version of ../shared/crds/jobset): each rule has a case that passes and one that fails, and the
boundaries are the webhook's own (63, 128, int32, 1024, 58 + 5 for generateName).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from trainspec.check.webhooks.admission import check_webhooks
from trainspec.check.webhooks.jobset_trainer import trainer_jobset_spec
from trainspec.dsl.diagnostics import Severity
from trainspec.dsl.kube_facts import INT32_MAX

JS_API = "jobset.x-k8s.io/v1alpha2"
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def rj(
    name: str,
    *,
    mounts: tuple[str, ...] = (),
    init_mounts: tuple[str, ...] = (),
    volumes: tuple[str, ...] = (),
    ancestor: str | None = None,
    container: str = "main",
    **job: Any,
) -> dict[str, Any]:
    """A replicatedJob; ``job`` holds Job spec fields (parallelism, completions, ...), except
    ``replicas``/``groupName``/``dependsOn`` which go on the replicatedJob."""
    pod: dict[str, Any] = {
        "containers": [
            {
                "name": container,
                "image": "example.com/x:1",
                "volumeMounts": [{"name": m, "mountPath": f"/{m}"} for m in mounts],
            }
        ]
    }
    if init_mounts:
        pod["initContainers"] = [
            {
                "name": "init",
                "image": "example.com/x:1",
                "volumeMounts": [{"name": m, "mountPath": f"/{m}"} for m in init_mounts],
            }
        ]
    if volumes:
        pod["volumes"] = [{"name": v, "emptyDir": {}} for v in volumes]
    out: dict[str, Any] = {"name": name}
    for key in ("replicas", "groupName", "dependsOn"):
        if key in job:
            out[key] = job.pop(key)
    out["template"] = {"spec": {**job, "template": {"spec": pod}}}
    if ancestor:
        out["template"]["metadata"] = {"labels": {ANCESTOR: ancestor}}
    return out


def jobset(
    *rjobs: dict[str, Any], name: str | None = "train", meta: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    metadata = dict(meta or {})
    if name is not None:
        metadata["name"] = name
    return {
        "apiVersion": JS_API,
        "kind": "JobSet",
        "metadata": metadata,
        "spec": {"replicatedJobs": list(rjobs or [rj("workers")]), **spec},
    }


def run(*manifests: dict[str, Any], **kwargs: Any):
    return check_webhooks([(f"m{i}.yaml", m) for i, m in enumerate(manifests)], **kwargs)


def errors(*manifests: dict[str, Any], **kwargs: Any) -> list[tuple[str, str]]:
    return [(d.file, d.path) for d in run(*manifests, **kwargs) if d.severity is Severity.ERROR]


def only(*manifests: dict[str, Any], **kwargs: Any):
    """The single error, or fail."""
    found = [d for d in run(*manifests, **kwargs) if d.severity is Severity.ERROR]
    assert len(found) == 1, [(d.path, d.message) for d in found]
    return found[0]


# -- a JobSet that uses every rule's field correctly ---------------------------------------------


def good_jobset() -> dict[str, Any]:
    return jobset(
        rj("leader", completions=1, parallelism=1, mounts=("scratch",)),
        rj(
            "workers",
            replicas=2,
            completions=4,
            parallelism=4,
            groupName="pool-a",
            dependsOn=[{"name": "leader", "status": "Ready"}],
        ),
        network={"subdomain": "train-net"},
        managedBy="example.com/batch-controller",
        successPolicy={"operator": "All", "targetReplicatedJobs": ["workers"]},
        failurePolicy={
            "maxRestarts": 3,
            "rules": [
                {
                    "name": "fail_fast",
                    "action": "FailJobSet",
                    "onJobFailureReasons": ["PodFailurePolicy"],
                    "targetReplicatedJobs": ["leader"],
                },
                {"action": "RestartJobSet", "onJobFailureReasons": ["BackoffLimitExceeded", "DeadlineExceeded"]},
            ],
        },
        coordinator={"replicatedJob": "workers", "jobIndex": 1, "podIndex": 3},
        volumeClaimPolicies=[
            {
                "templates": [
                    {
                        "metadata": {"name": "scratch"},
                        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                    }
                ]
            }
        ],
    )


def test_a_jobset_using_every_rule_field_correctly_passes():
    assert run(good_jobset()) == []


# -- network, managedBy, groupName -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("subdomain", "ok"),
    [
        ("train-net", True),
        ("", True),
        ("Train", False),
        ("a.b", False),
        ("9net", False),
        ("n" * 63, True),
        ("n" * 64, False),
    ],
)
def test_network_subdomain_is_a_subdomain_and_an_rfc1035_label(subdomain, ok):
    found = errors(jobset(network={"subdomain": subdomain}))
    assert found == ([] if ok else [("m0.yaml", "spec.network.subdomain")])


def test_subdomain_message_names_the_component_and_the_problem():
    found = only(jobset(network={"subdomain": "n" * 64}))
    assert "JobSet webhook rejects" in found.message and "no more than 63 characters (has 64)" in found.message


@pytest.mark.parametrize(
    ("manager", "ok"),
    [
        ("example.com/batch", True),
        ("example.com/a/b:c", True),
        ("tool", False),
        ("example.com/", False),
        ("/tool", False),
        ("", False),
        ("Example.com/x", False),
        ("example.com/a@b", False),
        ("example.com/" + "x" * 51, True),
        ("example.com/" + "x" * 52, False),
    ],
)
def test_managed_by_is_a_domain_prefixed_path_of_at_most_63(manager, ok):
    found = errors(jobset(managedBy=manager))
    assert found == ([] if ok else [("m0.yaml", "spec.managedBy")])


@pytest.mark.parametrize(
    ("group", "ok"),
    [
        (None, True),
        ("pool-a", True),
        ("g" * 63, True),
        ("g" * 64, False),
        ("", False),
        ("Pool", False),
        ("1pool", False),
    ],
)
def test_group_name_is_an_rfc1035_label(group, ok):
    job = rj("workers") if group is None else rj("workers", groupName=group)
    found = errors(jobset(job))
    assert found == ([] if ok else [("m0.yaml", "spec.replicatedJobs[0].groupName")])


# -- generated names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rjob", "ok"),
    [
        ("train", "workers", True),
        ("train", "2nd", True),
        ("train.v1", "workers", False),
        ("1train", "workers", False),
        ("train", "Workers", False),
        ("train", "w_1", False),
    ],
)
def test_generated_job_names_are_rfc1035_labels(name, rjob, ok):
    found = errors(jobset(rj(rjob), name=name))
    assert found == ([] if ok else [("m0.yaml", "spec.replicatedJobs[0].name")])


def test_job_name_budget_uses_the_largest_job_index():
    # <name>-workers-<replicas-1>: 53 + 9 + 1 = 63 with up to 10 replicas; 11 make the index two digits.
    assert errors(jobset(rj("workers", replicas=10), name="j" * 53)) == []
    found = only(jobset(rj("workers", replicas=11), name="j" * 53))
    assert found.path == "spec.replicatedJobs[0].name"
    assert f"job name '{'j' * 53}-workers-10' is 64 characters" in found.message
    assert "at most 52 characters" in found.message


def test_pod_name_budget_counts_completions_of_indexed_jobs():
    # <name>-workers-1-<completions-1>-abcde: 45 + 8 + 2 + 2 + 6 = 63 with 10 completions.
    name = "j" * 45
    assert errors(jobset(rj("workers", replicas=2, completions=10, parallelism=10), name=name)) == []
    found = only(jobset(rj("workers", replicas=2, completions=11, parallelism=11), name=name))
    assert found.path == "spec.replicatedJobs[0].name"
    assert f"pod name '{name}-workers-1-10-abcde' is 64 characters" in found.message
    assert "at most 44 characters" in found.message


@pytest.mark.parametrize(
    "job",
    [
        {"parallelism": 100},  # no completions: the webhook does not compute pod names
        {"completions": 100, "parallelism": 100, "completionMode": "NonIndexed"},
    ],
)
def test_pod_name_budget_applies_only_to_indexed_jobs_with_completions(job):
    assert errors(jobset(rj("workers", replicas=2, **job), name="j" * 45)) == []


def test_generate_name_is_completed_to_58_plus_5_characters():
    # 60 characters of generateName are cut to 58, plus 5 random: 63; "-w-0" makes the job name 67.
    js = jobset(rj("w"), name=None, meta={"generateName": "g" * 60})
    found = only(js)
    assert found.path == "spec.replicatedJobs[0].name"
    assert "generateName" in (found.hint or "") and "58" in (found.hint or "")
    # 40 characters + 5 random + "-w-0" fit.
    assert errors(jobset(rj("w"), name=None, meta={"generateName": "g" * 40})) == []


def test_pod_count_is_replicas_times_parallelism_within_int32():
    assert errors(jobset(rj("workers", replicas=1, parallelism=INT32_MAX))) == []
    found = only(jobset(rj("workers", replicas=2, parallelism=INT32_MAX // 2 + 1)))
    assert found.path == "spec.replicatedJobs[0].replicas" and str(INT32_MAX) in found.message


# -- dependsOn -------------------------------------------------------------------------------------


def test_depends_on_rules():
    first = jobset(rj("a", dependsOn=[]), rj("b"))
    assert errors(first) == [("m0.yaml", "spec.replicatedJobs[0].dependsOn")]  # even an empty list
    later = jobset(rj("a"), rj("b", dependsOn=[{"name": "c", "status": "Ready"}]), rj("c"))
    assert errors(later) == [("m0.yaml", "spec.replicatedJobs[1].dependsOn[0].name")]
    unknown = jobset(rj("a"), rj("b", dependsOn=[{"name": "x", "status": "Ready"}]))
    assert errors(unknown) == [("m0.yaml", "spec.replicatedJobs[1].dependsOn[0].name")]
    ok = jobset(
        rj("a"),
        rj("b", dependsOn=[{"name": "a", "status": "Complete"}]),
        rj("c", dependsOn=[{"name": "a", "status": "Ready"}, {"name": "b", "status": "Ready"}]),
    )
    assert run(ok) == []


def test_depending_on_itself_is_accepted_by_the_webhook_but_never_starts():
    found = run(jobset(rj("a"), rj("b", dependsOn=[{"name": "b", "status": "Ready"}])))
    assert [(d.path, d.severity) for d in found] == [("spec.replicatedJobs[1].dependsOn[0].name", Severity.WARNING)]
    assert "JobSet controller never creates" in found[0].message


# -- successPolicy and failurePolicy ---------------------------------------------------------------


def test_success_policy_targets_must_exist():
    found = errors(jobset(rj("a"), successPolicy={"operator": "Any", "targetReplicatedJobs": ["a", "b"]}))
    assert found == [("m0.yaml", "spec.successPolicy.targetReplicatedJobs[1]")]


def _with_rules(*rules: dict[str, Any], **policy: Any) -> dict[str, Any]:
    return jobset(rj("a"), rj("b"), failurePolicy={"rules": list(rules), **policy})


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("r", True),
        ("rule_1", True),
        ("a:b,c_", True),
        ("r" * 128, True),
        ("r" * 129, False),
        ("1rule", False),
        ("rule,", False),
        ("rule-1", False),
        ("_rule", False),
    ],
)
def test_failure_policy_rule_names(name, ok):
    found = errors(_with_rules({"name": name, "action": "FailJobSet"}))
    assert found == ([] if ok else [("m0.yaml", "spec.failurePolicy.rules[0].name")])


def test_failure_policy_rule_names_are_unique_after_defaulting():
    # The mutating webhook names rule 1 "failurePolicyRule1" when it has none.
    clash = _with_rules({"name": "failurePolicyRule1", "action": "FailJobSet"}, {"action": "RestartJobSet"})
    assert errors(clash) == [("m0.yaml", "spec.failurePolicy.rules[1].name")]
    assert "[0, 1]" in only(clash).message
    twice = _with_rules({"name": "same", "action": "FailJobSet"}, {"name": "same", "action": "RestartJobSet"})
    assert errors(twice) == [("m0.yaml", "spec.failurePolicy.rules[1].name")]
    unnamed = _with_rules({"action": "FailJobSet"}, {"name": "", "action": "RestartJobSet"})
    assert errors(unnamed) == []


def test_failure_policy_reasons_and_targets():
    found = errors(
        _with_rules(
            {
                "name": "r",
                "action": "FailJobSet",
                "targetReplicatedJobs": ["a", "c"],
                "onJobFailureReasons": ["FailedIndexes", "OOMKilled"],
            }
        )
    )
    assert found == [
        ("m0.yaml", "spec.failurePolicy.rules[0].targetReplicatedJobs[1]"),
        ("m0.yaml", "spec.failurePolicy.rules[0].onJobFailureReasons[1]"),
    ]


@pytest.mark.parametrize("action", ["RestartJob", "RestartJobAndIgnoreMaxRestarts"])
def test_restart_job_actions_need_the_feature_gate(action):
    js = _with_rules({"name": "r", "action": action})
    found = only(js)
    assert found.path == "spec.failurePolicy.rules[0].action" and "feature gate RestartJob" in found.message
    assert errors(js, jobset_gates={"RestartJob"}) == []
    big = jobset(rj("a", replicas=1025), failurePolicy={"rules": [{"name": "r", "action": action}]})
    assert errors(big, jobset_gates={"RestartJob"}) == [("m0.yaml", "spec.replicatedJobs[0].replicas")]
    fits = jobset(rj("a", replicas=1024), failurePolicy={"rules": [{"name": "r", "action": action}]})
    assert errors(fits, jobset_gates={"RestartJob"}) == []


def test_in_place_restart_needs_the_gate_and_its_job_settings():
    ready = rj("a", completions=2, parallelism=2, backoffLimit=INT32_MAX, podReplacementPolicy="Failed")
    js = jobset(ready, failurePolicy={"restartStrategy": "InPlaceRestart"})
    assert errors(js) == [("m0.yaml", "spec.failurePolicy.restartStrategy")]
    assert errors(js, jobset_gates={"InPlaceRestart"}) == []
    plain = jobset(rj("a", completions=2, parallelism=1), failurePolicy={"restartStrategy": "InPlaceRestart"})
    base = "spec.replicatedJobs[0].template.spec"
    assert errors(plain, jobset_gates={"InPlaceRestart"}) == [
        ("m0.yaml", f"{base}.backoffLimit"),
        ("m0.yaml", f"{base}.podReplacementPolicy"),
        ("m0.yaml", f"{base}.completions"),
    ]
    assert errors(jobset(rj("a"), failurePolicy={"restartStrategy": "Recreate"})) == []


# -- coordinator -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("coordinator", "job", "path"),
    [
        ({"replicatedJob": "w"}, {"completions": 2}, None),
        ({"replicatedJob": "w", "jobIndex": 1, "podIndex": 1}, {"replicas": 2, "completions": 2}, None),
        ({"replicatedJob": "x"}, {"completions": 2}, "spec.coordinator.replicatedJob"),
        ({"replicatedJob": "w", "jobIndex": 1}, {"completions": 2}, "spec.coordinator.jobIndex"),
        ({"replicatedJob": "w", "jobIndex": -1}, {"completions": 2}, "spec.coordinator.jobIndex"),
        ({"replicatedJob": "w"}, {"parallelism": 2}, "spec.coordinator.replicatedJob"),
        ({"replicatedJob": "w"}, {"completions": 2, "completionMode": "NonIndexed"}, "spec.coordinator.replicatedJob"),
        ({"replicatedJob": "w", "podIndex": 2}, {"completions": 2}, "spec.coordinator.podIndex"),
    ],
)
def test_coordinator_rules(coordinator, job, path):
    found = errors(jobset(rj("w", **job), coordinator=coordinator))
    assert found == ([] if path is None else [("m0.yaml", path)])


def test_coordinator_label_value_fits_63_characters():
    # <name>-w-0-0.<subdomain>: 20 + 7 + 36 = 63 fits, one more character does not.
    ok = jobset(
        rj("w", completions=1), name="j" * 20, coordinator={"replicatedJob": "w"}, network={"subdomain": "s" * 36}
    )
    assert errors(ok) == []
    long = jobset(
        rj("w", completions=1), name="j" * 20, coordinator={"replicatedJob": "w"}, network={"subdomain": "s" * 37}
    )
    found = only(long)
    assert found.path == "spec.coordinator" and "jobset.sigs.k8s.io/coordinator" in found.message
    # Without a subdomain the JobSet name stands in for it.
    assert errors(jobset(rj("w", completions=1), name="j" * 28, coordinator={"replicatedJob": "w"})) == []
    assert errors(jobset(rj("w", completions=1), name="j" * 29, coordinator={"replicatedJob": "w"})) == [
        ("m0.yaml", "spec.coordinator")
    ]


# -- volumeClaimPolicies ---------------------------------------------------------------------------


def _claims(*names: Any) -> list[dict[str, Any]]:
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return [{"templates": [{"metadata": {} if n is None else {"name": n}, "spec": spec} for n in names]}]


def test_claim_templates_must_be_mounted_by_a_container_or_init_container():
    assert errors(jobset(rj("w", mounts=("data",)), volumeClaimPolicies=_claims("data"))) == []
    assert errors(jobset(rj("w", init_mounts=("data",)), volumeClaimPolicies=_claims("data"))) == []
    assert errors(jobset(rj("w"), volumeClaimPolicies=_claims("data"))) == [
        ("m0.yaml", "spec.volumeClaimPolicies[0].templates[0].metadata.name")
    ]


def test_claim_template_names_are_unique_subdomains():
    path = "spec.volumeClaimPolicies[0].templates[{}].metadata.name"
    dup = jobset(rj("w", mounts=("data",)), volumeClaimPolicies=_claims("data", "data"))
    assert errors(dup) == [("m0.yaml", path.format(1))]
    upper = jobset(rj("w", mounts=("Data",)), volumeClaimPolicies=_claims("Data"))
    assert errors(upper) == [("m0.yaml", path.format(0))]
    nameless = jobset(rj("w"), volumeClaimPolicies=_claims(None))
    assert errors(nameless) == [("m0.yaml", path.format(0)), ("m0.yaml", path.format(0))]  # name, mount


def test_claim_pvc_names_fit_63_characters():
    # PVC <template>-<jobset>: 4 + 1 + 58 = 63 fits.
    assert errors(jobset(rj("w", mounts=("data",)), name="j" * 50, volumeClaimPolicies=_claims("data"))) == []
    long = jobset(rj("w", mounts=("datas",)), name="j" * 58, volumeClaimPolicies=_claims("datas"))
    found = only(long)
    assert found.path.endswith("metadata.name") and "PVC name" in found.message


def test_claim_templates_must_not_clash_with_pod_volumes():
    js = jobset(
        rj("a", mounts=("data",)), rj("b", mounts=("data",), volumes=("data",)), volumeClaimPolicies=_claims("data")
    )
    assert errors(js) == [("m0.yaml", "spec.replicatedJobs[1].template.spec.template.spec.volumes[0].name")]


# -- runtimes and TrainJobs: the JobSet Trainer builds -------------------------------------------------


def runtime(*rjobs: dict[str, Any], mlpolicy: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": TRAINER_API,
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "rt", "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {
            "mlPolicy": mlpolicy or {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {"replicatedJobs": list(rjobs or [rj("node", ancestor="trainer", container="node")]), **spec}
            },
        },
    }


def trainjob(name: str = "llama", num_nodes: int | None = None, **spec: Any) -> dict[str, Any]:
    trainer = {} if num_nodes is None else {"numNodes": num_nodes}
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"runtimeRef": {"name": "rt"}, "trainer": trainer, **spec},
    }


def node(**job: Any) -> dict[str, Any]:
    return rj("node", ancestor="trainer", container="node", **job)


def test_runtime_template_rules_are_reported_at_the_runtime():
    rt = runtime(
        node(), network={"subdomain": "Bad"}, failurePolicy={"rules": [{"name": "1x", "action": "FailJobSet"}]}
    )
    assert errors(rt, policy=False) == [
        ("m0.yaml", "spec.template.spec.network.subdomain"),
        ("m0.yaml", "spec.template.spec.failurePolicy.rules[0].name"),
    ]
    assert "JobSet Trainer builds from this runtime" in run(rt, policy=False)[0].message
    # ... and not again at each TrainJob using it.
    assert errors(rt, trainjob(), policy=False) == errors(rt, policy=False)


def test_a_runtime_whose_names_fit_no_trainjob():
    rt = runtime(node(), rj("p" * 50))  # a-ppp...-0-0-abcde: 1 + 51 + 4 + 6 = 62 fits
    assert errors(rt, policy=False) == []
    rt = runtime(node(), rj("p" * 52))
    found = only(rt, policy=False)
    assert found.path == "spec.template.spec.replicatedJobs[1].name" and "even one named 'a'" in found.message
    assert errors(rt, trainjob(), policy=False) == [("m0.yaml", "spec.template.spec.replicatedJobs[1].name")]


def test_trainjob_names_use_the_pod_counts_trainer_sets():
    # Trainer sets completions = numNodes on the trainer job: <name>-node-0-9-abcde is 15 + name.
    rt = runtime(node())
    assert errors(rt, trainjob("t" * 48, num_nodes=10), policy=False) == []
    found = only(rt, trainjob("t" * 48, num_nodes=11), policy=False)
    assert (found.file, found.path) == ("m1.yaml", "metadata.name")
    assert "-node-0-10-abcde" in found.message and "Trainer creates for this TrainJob" in found.message
    # Without numNodes on the TrainJob, the runtime's mlPolicy.numNodes counts.
    rt11 = runtime(node(), mlpolicy={"numNodes": 11, "torch": {}})
    assert errors(rt11, trainjob("t" * 48), policy=False) == [("m1.yaml", "metadata.name")]


def test_mpi_node_count_with_run_launcher_as_node():
    launcher = rj("launcher", container="node", ancestor="trainer")
    workers = rj("node", container="node")
    for as_node, bad in ((True, []), (False, [("m1.yaml", "metadata.name")])):
        rt = runtime(launcher, workers, mlpolicy={"numNodes": 1, "mpi": {"runLauncherAsNode": as_node}})
        # <name>-launcher-0-0-abcde caps the name at 44. With 100001 nodes the job node runs 100000
        # pods when the launcher is a node (<name>-node-0-99999-abcde, 63), else 100001 (64).
        assert errors(rt, trainjob("t" * 44, num_nodes=100001), policy=False) == bad


def test_coordinator_in_a_runtime_counts_trainer_pods():
    coordinator = {"replicatedJob": "node", "podIndex": 1}
    rt = runtime(node(), coordinator=coordinator, mlpolicy={"numNodes": 2, "torch": {}})
    assert errors(rt, policy=False) == []  # Trainer sets completions = 2, so pod index 1 exists
    assert errors(rt, trainjob(num_nodes=1), policy=False) == [("m1.yaml", "spec.trainer.numNodes")]
    rt1 = runtime(node(), coordinator=coordinator, mlpolicy={"numNodes": 1, "torch": {}})
    assert errors(rt1, policy=False) == [("m0.yaml", "spec.template.spec.coordinator.podIndex")]


def test_runtime_patches_that_clash_with_claim_templates():
    rt = runtime(node(mounts=("initializer",)), volumeClaimPolicies=_claims("initializer"))
    patch = {
        "manager": "example.com/tool",
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "spec": {"template": {"spec": {"volumes": [{"name": "initializer", "emptyDir": {}}]}}}
                            },
                        }
                    ]
                }
            }
        },
    }
    assert errors(rt, trainjob(), policy=False) == []
    assert errors(rt, trainjob(runtimePatches=[patch]), policy=False) == [("m1.yaml", "spec.runtimePatches")]


def test_runtime_patches_can_add_the_claim_mount():
    rt = runtime(node(), volumeClaimPolicies=_claims("scratch"))
    spec = trainer_jobset_spec(
        rt,
        trainjob(
            runtimePatches=[
                {
                    "manager": "example.com/tool",
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": "node",
                                        "template": {
                                            "spec": {
                                                "template": {
                                                    "spec": {
                                                        "containers": [
                                                            {
                                                                "name": "node",
                                                                "volumeMounts": [
                                                                    {"name": "scratch", "mountPath": "/s"}
                                                                ],
                                                            }
                                                        ]
                                                    }
                                                }
                                            }
                                        },
                                    }
                                ]
                            }
                        }
                    },
                }
            ]
        ),
    )
    mounts = spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    assert [m["name"] for m in mounts] == ["scratch"]


def test_trainer_jobset_spec_sets_parallelism_and_completions():
    rt = runtime(rj("prep", parallelism=3), node(parallelism=7), mlpolicy={"numNodes": 4, "torch": {}})
    before = copy.deepcopy(rt)
    jobs = [r["template"]["spec"] for r in trainer_jobset_spec(rt, trainjob(num_nodes=6))["replicatedJobs"]]
    assert [(j["parallelism"], j["completions"]) for j in jobs] == [(3, 3), (6, 6)]
    jobs = [r["template"]["spec"] for r in trainer_jobset_spec(rt)["replicatedJobs"]]
    assert [(j["parallelism"], j["completions"]) for j in jobs] == [(3, 3), (4, 4)]
    assert rt == before  # the runtime itself is not changed


def test_trainjob_generate_name():
    rt = runtime(node())
    tj = trainjob(num_nodes=2)
    del tj["metadata"]["name"]
    tj["metadata"]["generateName"] = "g" * 50  # 50 + 5 + "-node-0-1-abcde" = 70
    found = only(rt, tj, policy=False)
    assert found.path == "metadata.generateName" and "generateName" in (found.hint or "")
    tj["metadata"]["generateName"] = "g" * 40  # 40 + 5 + 15 = 60
    assert errors(rt, tj, policy=False) == []


def test_a_known_runtime_reports_its_template_problems_at_the_trainjob():
    rt = runtime(node(), network={"subdomain": "Bad"})
    found = [d for d in check_webhooks([("tj.yaml", trainjob())], known_runtimes=[rt]) if d.severity is Severity.ERROR]
    assert [(d.file, d.path) for d in found] == [("tj.yaml", "spec.runtimeRef.name")]
    assert "JobSet field spec.network.subdomain" in found[0].message


def test_the_shortest_name_is_valid_and_upstream_runtimes_shapes_pass():
    # A torch runtime shaped like trainspec's and upstream's: initializer, then node; claim mounted.
    rt = runtime(
        rj(
            "dataset-initializer",
            container="dataset-initializer",
            ancestor="dataset-initializer",
            mounts=("initializer",),
        ),
        node(mounts=("initializer",), dependsOn=[{"name": "dataset-initializer", "status": "Complete"}]),
        volumeClaimPolicies=_claims("initializer"),
        successPolicy={"operator": "All", "targetReplicatedJobs": ["node"]},
    )
    assert run(rt, trainjob("t" * 33, num_nodes=4), policy=False) == []


# -- malformed input never raises -------------------------------------------------------------------


_ODD = (None, 0, -1, 1.5, True, "", "X y", [], {}, [1], {"a": [None]}, "n" * 300)


def _nodes(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _nodes(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += _nodes(child, (*path, i))
    return out


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    value = copy.deepcopy(value)
    node = value
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return value


def test_malformed_jobsets_runtimes_and_trainjobs_give_diagnostics_never_exceptions():
    rng = random.Random(11)
    rules = {"rules": [{"name": "r", "action": "RestartJob"}]}
    rt = runtime(
        node(mounts=("scratch",)),
        coordinator={"replicatedJob": "node"},
        volumeClaimPolicies=_claims("scratch"),
        failurePolicy=rules,
    )
    patch = {
        "manager": "example.com/tool",
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "volumes": [{"name": "v", "emptyDir": {}}],
                                            "containers": [
                                                {"name": "node", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}
                                            ],
                                        }
                                    }
                                }
                            },
                        }
                    ]
                }
            }
        },
    }
    seeds = (good_jobset(), rt, trainjob(num_nodes=2, runtimePatches=[patch]))
    checked = 0
    for base in seeds:
        paths = _nodes(base)
        for _ in range(150):
            broken = _replace(base, rng.choice(paths), rng.choice(_ODD))
            others = [s for s in seeds if s is not base and s["kind"] != "JobSet"]
            found = run(broken, *others, policy=False)
            assert all(d.code == "TS503" for d in found)
            checked += 1
    assert checked == 450
