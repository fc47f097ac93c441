"""flavorFungibility: which flavor each PodSet takes, as Kueue's flavor assigner decides it.

Cases of our own, written from reading kubernetes-sigs/kueue pkg/scheduler/flavorassigner
(findFlavorForPodSets, shouldTryNextFlavor, isPreferred) and the scheduler's retry bookmark
(LastTriedFlavorIdx) at the Kueue version of ../shared/crds/kueue. Every cluster is idle:
a PodSet fits a flavor or not, by borrowing or not; nothing is preempted.
"""

from __future__ import annotations

import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from trainspec.dsl.diagnostics import Severity
from trainspec.kueue import assigner
from trainspec.kueue.assigner import assign
from trainspec.kueue.cluster_files import Cluster, load_cluster
from trainspec.kueue.podsets import PodSet
from trainspec.kueue.preflight import preflight
from trainspec.kueue.quota import capacity

POLICIES = [  # (flavorFungibility as written, None: absent) -> whether whenCanBorrow tries the next flavor
    (None, False),
    ({"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}, False),
    ({"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}, False),
    ({"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}, True),
    ({"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}, True),
    ({"whenCanBorrow": "TryNextFlavor"}, True),
    ({"whenCanPreempt": "MayStopSearch"}, False),
]
LEGACY = [  # v1beta1 spellings (Kueue 0.14's only words)
    ({"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}, False),
    ({"whenCanBorrow": "Borrow", "whenCanPreempt": "TryNextFlavor"}, False),
    ({"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "Preempt"}, True),
]


def _flow(mapping: dict[str, str] | None) -> str:
    if mapping is None:
        return ""
    return "  flavorFungibility: {" + ", ".join(f"{k}: {v}" for k, v in mapping.items()) + "}\n"


def _flavor_quotas(flavors: list[tuple[str, int]], indent: str = "    ") -> str:
    return "".join(
        f"{indent}- name: {name}\n{indent}  resources: [{{name: cpu, nominalQuota: {cpu}}}]\n" for name, cpu in flavors
    )


def make_cluster(
    tmp_path: Path,
    flavors: list[tuple[str, int]],
    *,
    policy: dict[str, str] | None = None,
    lend: list[tuple[str, int]] | None = None,
    api: str = "v1beta2",
    extra: str = "",
) -> Cluster:
    """ClusterQueue ``team`` (cpu only) with ``flavors`` [(name, nominal cpu)] in that order.

    With ``lend``, ``team`` is in cohort ``pool`` beside ClusterQueue ``lender``, whose
    nominal quotas [(flavor, cpu)] it may borrow (no lending limit: all of it).
    """
    cohort_key = "cohortName" if api == "v1beta2" else "cohort"
    names = sorted({name for name, _ in flavors} | {name for name, _ in lend or []})
    text = "".join(
        f"---\napiVersion: kueue.x-k8s.io/{api}\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\n" for name in names
    )
    text += f"""---
apiVersion: kueue.x-k8s.io/{api}
kind: ClusterQueue
metadata: {{name: team}}
spec:
  namespaceSelector: {{}}
{f"  {cohort_key}: pool" + chr(10) if lend else ""}{_flow(policy)}  resourceGroups:
  - coveredResources: [cpu]
    flavors:
{_flavor_quotas(flavors)}---
apiVersion: kueue.x-k8s.io/{api}
kind: LocalQueue
metadata: {{namespace: ml, name: q}}
spec: {{clusterQueue: team}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: ml}}
"""
    if lend:
        text += f"""---
apiVersion: kueue.x-k8s.io/{api}
kind: ClusterQueue
metadata: {{name: lender}}
spec:
  namespaceSelector: {{}}
  {cohort_key}: pool
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
{_flavor_quotas(lend)}"""
    path = tmp_path / "cluster.yaml"
    path.write_text(text + textwrap.dedent(extra), encoding="utf-8")
    cluster = load_cluster([path])
    assert cluster.problems == []
    return cluster


def podset(name: str, pods: int, cpu: int) -> PodSet:
    return PodSet(
        name=name,
        count=pods,
        requests={"cpu": Fraction(cpu)},
        node_selector={},
        tolerations=(),
        affinity_terms=(),
        annotations={},
        count_path=("spec", "runtimeRef", "name"),
        resources_path=("spec", "runtimeRef", "name"),
        annotation_paths={},
    )


def taken(cluster: Cluster, *podsets: PodSet) -> list[str | None]:
    """The flavor each PodSet ends up with (None: none), after Kueue's retries."""
    outcome = assign(cluster, cluster.cluster_queues["team"], list(podsets))
    return [result.flavors.get(0) if outcome.admitted is not None else None for result in outcome.results]


# -- one PodSet: whenCanBorrow decides between borrowing now and a later flavor's own quota --------


@pytest.mark.parametrize(("policy", "tries_next"), POLICIES)
def test_borrowing_flavor_first_then_own_quota(tmp_path: Path, policy: dict | None, tries_next: bool) -> None:
    """spot fits 6 cpu only by borrowing from the cohort, ondemand from team's own quota."""
    cluster = make_cluster(tmp_path, [("spot", 4), ("ondemand", 8)], policy=policy, lend=[("spot", 16)])
    assert taken(cluster, podset("node", 1, 6)) == ["ondemand" if tries_next else "spot"]


@pytest.mark.parametrize(("policy", "tries_next"), LEGACY)
def test_v1beta1_spellings(tmp_path: Path, policy: dict, tries_next: bool) -> None:
    """Borrow and Preempt are the v1beta1 words for MayStopSearch."""
    cluster = make_cluster(tmp_path, [("spot", 4), ("ondemand", 8)], policy=policy, lend=[("spot", 16)], api="v1beta1")
    assert cluster.cluster_queues["team"].cohort == "pool"
    assert taken(cluster, podset("node", 1, 6)) == ["ondemand" if tries_next else "spot"]


@pytest.mark.parametrize(("policy", "tries_next"), POLICIES + LEGACY)
def test_a_fit_without_borrowing_always_ends_the_search(tmp_path: Path, policy: dict | None, tries_next: bool) -> None:
    cluster = make_cluster(tmp_path, [("spot", 8), ("ondemand", 8)], policy=policy, lend=[("spot", 16)])
    assert taken(cluster, podset("node", 1, 6)) == ["spot"]


@pytest.mark.parametrize(("policy", "tries_next"), POLICIES)
def test_every_flavor_borrows_the_first_of_equals_is_taken(
    tmp_path: Path, policy: dict | None, tries_next: bool
) -> None:
    cluster = make_cluster(
        tmp_path, [("spot", 2), ("ondemand", 2)], policy=policy, lend=[("spot", 16), ("ondemand", 16)]
    )
    assert taken(cluster, podset("node", 1, 6)) == ["spot"]


@pytest.mark.parametrize(("policy", "tries_next"), POLICIES)
def test_a_flavor_that_cannot_hold_it_is_passed_over(tmp_path: Path, policy: dict | None, tries_next: bool) -> None:
    cluster = make_cluster(tmp_path, [("small", 2), ("big", 4)], policy=policy, lend=[("big", 8)])
    assert taken(cluster, podset("node", 1, 6)) == ["big"]  # small holds at most 2, big 12 by borrowing


NESTED = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: pool}
spec: {parentName: org}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: far-lender}
spec:
  namespaceSelector: {}
  cohortName: org
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: far
      resources: [{name: cpu, nominalQuota: 16}]
    - name: near
      resources: [{name: cpu, nominalQuota: 0}]
"""


@pytest.mark.parametrize(("policy", "tries_next"), POLICIES)
def test_borrowing_from_the_nearest_cohort_wins_under_try_next_flavor(
    tmp_path: Path, policy: dict | None, tries_next: bool
) -> None:
    """far is lent by a ClusterQueue of the parent cohort (borrowing level 2), near by one in
    team's own cohort (level 1): TryNextFlavor takes the lower level, MayStopSearch the first."""
    cluster = make_cluster(
        tmp_path, [("far", 0), ("near", 0)], policy=policy, lend=[("far", 0), ("near", 16)], extra=NESTED
    )
    cq = cluster.cluster_queues["team"]
    outcome = assign(cluster, cq, [podset("node", 1, 6)])
    assert outcome.first[0].fits[0] == ([("far", 2), ("near", 1)] if tries_next else [("far", 2)])
    assert taken(cluster, podset("node", 1, 6)) == ["near" if tries_next else "far"]


# -- several PodSets: Kueue's retries, and where the policy decides admission --------------------


@pytest.mark.parametrize(("policy", "tries_next"), POLICIES)
def test_a_retry_moves_an_earlier_podset_on(tmp_path: Path, policy: dict | None, tries_next: bool) -> None:
    """No cohort. launcher (4) takes big first, then node (6) fits nowhere; Kueue retries with
    launcher scanning on from small, and node then fits big. The old one-pass model said never."""
    cluster = make_cluster(tmp_path, [("big", 8), ("small", 4)], policy=policy)
    outcome = assign(cluster, cluster.cluster_queues["team"], [podset("launcher", 1, 4), podset("node", 1, 6)])
    assert [r.flavors[0] for r in outcome.first[:1]] == ["big"] and not outcome.first[1].placed
    assert outcome.admitted is not None and outcome.tries == 2
    assert [r.flavors[0] for r in outcome.admitted] == ["small", "big"]


@pytest.mark.parametrize(("policy", "tries_next"), POLICIES + LEGACY)
def test_try_next_flavor_can_leave_a_job_pending_forever(tmp_path: Path, policy: dict | None, tries_next: bool) -> None:
    """Both flavors lend team everything it gets (big 8, small 4). Under TryNextFlavor launcher
    scans both, takes big (the first of equal borrowing) and, having scanned to the end, is never
    moved: node (6) never fits. Under MayStopSearch launcher stopped at big, so the retry moves it."""
    api = "v1beta1" if policy in [p for p, _ in LEGACY] else "v1beta2"
    cluster = make_cluster(
        tmp_path, [("big", 0), ("small", 0)], policy=policy, lend=[("big", 8), ("small", 4)], api=api
    )
    outcome = assign(cluster, cluster.cluster_queues["team"], [podset("launcher", 1, 4), podset("node", 1, 6)])
    if tries_next:
        assert outcome.admitted is None and outcome.settled and outcome.tries == 1
        assert outcome.feasible is True and outcome.witness == {(0, 0): "small", (1, 0): "big"}
    else:
        assert [r.flavors[0] for r in outcome.admitted or []] == ["small", "big"]


def test_no_choice_of_flavors_holds_the_job(tmp_path: Path) -> None:
    for policy, _ in POLICIES:
        cluster = make_cluster(tmp_path, [("big", 8), ("small", 4)], policy=policy)
        outcome = assign(cluster, cluster.cluster_queues["team"], [podset("a", 1, 6), podset("b", 1, 6)])
        assert (outcome.admitted, outcome.feasible) == (None, False)


def test_a_podset_that_gets_no_flavor_reserves_nothing(tmp_path: Path) -> None:
    """launcher needs two groups; it fails in the gpu group, so its cpu does not count against node."""
    cluster = make_cluster(
        tmp_path,
        [("cpu-pool", 8)],
        extra="""
        ---
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ResourceFlavor
        metadata: {name: gpus}
    """,
    )
    cq = cluster.cluster_queues["team"]
    gpu_group = type(cq.groups[0])(("nvidia.com/gpu",), (), ("spec", "resourceGroups", 1))
    cluster.cluster_queues["team"] = cq = type(cq)(**{**cq.__dict__, "groups": (*cq.groups, gpu_group)})
    launcher = podset("launcher", 1, 6)
    launcher = type(launcher)(**{**launcher.__dict__, "requests": {"cpu": Fraction(6), "nvidia.com/gpu": Fraction(1)}})
    outcome = assign(cluster, cq, [launcher, podset("node", 1, 6)])
    assert outcome.first[0].missing == [1]
    assert outcome.first[1].flavors == {0: "cpu-pool"}  # 6 of 8: launcher's 6 were never reserved


# -- what the pre-flight reports ------------------------------------------------------------------


def _job_and_runtime(jobs: list[tuple[str, int, int]]) -> tuple[dict, dict]:
    """A TrainJob in namespace ml on queue q, on a runtime whose replicatedJobs are [(name, pods, cpu)]."""
    runtime = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "two-step"},
        "spec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": name,
                            "template": {
                                "spec": {
                                    "parallelism": pods,
                                    "completions": pods,
                                    "template": {
                                        "spec": {
                                            "containers": [
                                                {
                                                    "name": name,
                                                    "image": "example.com/x:1",
                                                    "resources": {"requests": {"cpu": str(cpu)}},
                                                }
                                            ]
                                        }
                                    },
                                }
                            },
                        }
                        for name, pods, cpu in jobs
                    ]
                }
            }
        },
    }
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "j", "namespace": "ml", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {"runtimeRef": {"name": "two-step"}},
    }
    return job, runtime


def _quota_findings(found: list) -> list:
    """Without TS517: a flavor with no nominal quota of its own also warns that pods run on borrowed quota."""
    return [f for f in found if f.code != "TS517"]


def test_preflight_warns_when_the_assigner_never_reaches_a_fitting_choice(tmp_path: Path) -> None:
    policy = {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
    cluster = make_cluster(tmp_path, [("big", 0), ("small", 0)], policy=policy, lend=[("big", 8), ("small", 4)])
    job, runtime = _job_and_runtime([("launcher", 1, 4), ("node", 1, 6)])
    [finding] = _quota_findings(preflight(cluster, job, runtime))
    assert (finding.code, finding.severity) == ("TS514", Severity.WARNING)
    assert finding.message.startswith(
        "Kueue's flavor assigner never admits the job on an idle ClusterQueue team: "
        "PodSet launcher takes big: every flavor that holds it borrows and "
        "whenCanBorrow is TryNextFlavor"
    )
    assert (
        "then PodSet node (1 pods) fits no flavor (needs 10 cpu on big, at most 8; needs 6 cpu on small, "
        "at most 4)" in finding.message
    )
    assert finding.message.endswith("The quota can hold the job (launcher on small, node on big)")
    cluster_file = str(tmp_path / "cluster.yaml")
    policy_line = next(
        i
        for i, text in enumerate((tmp_path / "cluster.yaml").read_text().splitlines(), 1)
        if "flavorFungibility" in text
    )
    assert (finding.related[0].file, finding.related[0].line) == (cluster_file, policy_line)
    assert "MayStopSearch" in (finding.hint or "")
    # The same cluster under the default policy admits the job (second try): nothing to report.
    cluster = make_cluster(tmp_path, [("big", 0), ("small", 0)], lend=[("big", 8), ("small", 4)])
    assert _quota_findings(preflight(cluster, job, runtime)) == []


def test_preflight_error_when_no_choice_holds_the_job(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path, [("big", 8), ("small", 4)])
    job, runtime = _job_and_runtime([("a", 1, 6), ("b", 1, 6)])
    [finding] = preflight(cluster, job, runtime)
    assert (finding.code, finding.severity) == ("TS514", Severity.ERROR)
    assert "PodSet b (1 pods) can never be admitted: needs 12 cpu on flavor big" in finding.message


def test_preflight_no_longer_rejects_what_a_retry_admits(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path, [("big", 8), ("small", 4)])
    job, runtime = _job_and_runtime([("launcher", 1, 4), ("node", 1, 6)])
    assert preflight(cluster, job, runtime) == []


SHAPED = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: ondemand
  annotations: {trainspec.dev/node-allocatable: "cpu=4"}
"""


@pytest.mark.parametrize(("policy", "tries_next"), POLICIES)
def test_the_flavor_taken_is_the_one_whose_nodes_are_checked(
    tmp_path: Path, policy: dict | None, tries_next: bool
) -> None:
    """ondemand's nodes have 4 cpu: a 6-cpu pod never runs there (TS517), but only a job that
    Kueue places on ondemand (TryNextFlavor, to avoid borrowing on spot) is affected."""
    cluster = make_cluster(tmp_path, [("spot", 4), ("ondemand", 8)], policy=policy, lend=[("spot", 16)])
    cluster.flavors.pop("ondemand")
    shaped = load_cluster([_write(tmp_path / "shaped.yaml", SHAPED)])
    cluster.flavors["ondemand"] = shaped.flavors["ondemand"]
    job, runtime = _job_and_runtime([("node", 1, 6)])
    found = [(f.code, f.severity, f.message.split(":")[0]) for f in preflight(cluster, job, runtime)]
    if tries_next:
        assert found == [
            ("TS517", Severity.ERROR, "one pod of PodSet node needs 6 cpu; a node of flavor ondemand has 4")
        ]
    else:  # on spot, by borrowing: its nominal quota (4) is smaller than one pod
        assert found == [
            (
                "TS517",
                Severity.WARNING,
                (
                    "one pod of PodSet node needs 6 cpu, more than the nominal quota "
                    "of flavor spot in ClusterQueue team (4)"
                ),
            )
        ]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- the Kueue version decides the words ----------------------------------------------------------


@pytest.mark.parametrize(
    ("api", "policy", "kueue", "refused"),
    [
        ("v1beta1", {"whenCanBorrow": "MayStopSearch"}, (0, 14), "whenCanBorrow"),
        ("v1beta1", {"whenCanPreempt": "MayStopSearch"}, (0, 14), "whenCanPreempt"),
        (
            "v1beta1",
            {
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "PreemptionOverBorrowing",
            },
            (0, 14),
            "preference",
        ),
        ("v1beta1", {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}, (0, 14), None),
        ("v1beta1", {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}, (0, 14), None),
        ("v1beta1", {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}, (0, 19), None),
        ("v1beta1", {"whenCanBorrow": "MayStopSearch"}, (0, 15), None),
        ("v1beta2", {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}, (0, 19), None),
        ("v1beta2", {"whenCanBorrow": "MayStopSearch"}, None, None),
    ],
)
def test_spellings_by_kueue_version(
    tmp_path: Path, api: str, policy: dict, kueue: tuple | None, refused: str | None
) -> None:
    cluster = make_cluster(tmp_path, [("spot", 8)], policy=policy, api=api)
    job, runtime = _job_and_runtime([("node", 1, 6)])
    found = preflight(cluster, job, runtime, kueue_version=kueue)
    if refused is None:
        assert found == []
        return
    [finding] = found
    assert finding.code == "TS510" and finding.path == ("metadata", "labels", "kueue.x-k8s.io/queue-name")
    assert f"Kueue 0.14's API server rejects ClusterQueue team: flavorFungibility.{refused}" in finding.message
    line = next(
        i
        for i, text in enumerate((tmp_path / "cluster.yaml").read_text().splitlines(), 1)
        if "flavorFungibility" in text
    )
    assert finding.related[0].line == line


# -- bounded work --------------------------------------------------------------------------------


def test_search_gives_up_within_its_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search cut short decides nothing: a warning at most, never a certain error."""
    policy = {"whenCanBorrow": "TryNextFlavor"}
    cluster = make_cluster(tmp_path, [("big", 0), ("small", 0)], policy=policy, lend=[("big", 8), ("small", 4)])
    monkeypatch.setattr(assigner, "SEARCH_BUDGET", 1)
    outcome = assign(cluster, cluster.cluster_queues["team"], [podset("launcher", 1, 4), podset("node", 1, 6)])
    assert outcome.feasible is None and outcome.witness == {}
    job, runtime = _job_and_runtime([("launcher", 1, 4), ("node", 1, 6)])
    [finding] = _quota_findings(preflight(cluster, job, runtime))
    assert finding.severity == Severity.WARNING and "The quota can hold" not in finding.message


def test_many_podsets_and_flavors_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """18 PodSets over 16 one-cpu flavors: the tries and the search stay within their bounds."""
    calls = {"level": 0}
    original = assigner.CohortTree.borrowing_level

    def counted(self, *args):  # type: ignore[no-untyped-def]
        calls["level"] += 1
        return original(self, *args)

    monkeypatch.setattr(assigner.CohortTree, "borrowing_level", counted)
    cluster = make_cluster(tmp_path, [(f"f{i}", 1) for i in range(16)])
    outcome = assign(cluster, cluster.cluster_queues["team"], [podset(f"p{i}", 1, 1) for i in range(18)])
    assert outcome.admitted is None and outcome.feasible is False  # 18 cpu, 16 in all: plainly short
    assert outcome.tries <= assigner.MAX_TRIES
    assert calls["level"] <= assigner.MAX_TRIES * 18 * 16


def test_deep_cohort_chains_cost_linear_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain of 16 cohorts, each with a lending limit: a subtree is computed once, not once per path."""
    depth = 16
    extra = "".join(
        f"""
        ---
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: Cohort
        metadata: {{name: {"pool" if i == 0 else f"c{i}"}}}
        spec:
          parentName: c{i + 1}
          resourceGroups:
          - coveredResources: [cpu]
            flavors:
            - name: spot
              resources: [{{name: cpu, nominalQuota: 1, lendingLimit: 1}}]
    """
        for i in range(depth)
    )
    cluster = make_cluster(tmp_path, [("spot", 0)], lend=[("spot", 1)], extra=extra)
    calls = {"n": 0}
    original = Cluster.cohort

    def counted(self: Cluster, name: str):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        return original(self, name)

    monkeypatch.setattr(Cluster, "cohort", counted)
    most = capacity(cluster, cluster.cluster_queues["team"], "spot", "cpu")
    assert most.maximum == depth + 1  # every cohort lends its 1 cpu, plus the lender's
    assert calls["n"] <= 20 * depth * depth
