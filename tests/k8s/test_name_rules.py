"""The Kubernetes name rules have one owner (trainspec.k8s.name_rules) and one message style."""

from __future__ import annotations

import pytest

from trainspec.k8s import name_rules as N


@pytest.mark.parametrize(
    ("rule", "good", "limit"),
    [
        (N.dns1035_problems, "llama-sft", 63),
        (N.label_problems, "0-team", 63),
        (N.subdomain_problems, "team.nlp", 253),
        (N.label_value_problems, "A_b.c", 63),
    ],
)
def test_each_rule_says_the_length_then_the_form(rule, good: str, limit: int) -> None:
    assert rule(good) == []
    problems = rule("-" * (limit + 1))
    assert problems[0] == f"must be no more than {limit} characters (has {limit + 1})"
    assert problems[1].startswith("must be ") and "starting" in problems[1] and len(problems) == 2


def test_the_checker_the_webhooks_and_the_cluster_commands_say_it_alike() -> None:
    from trainspec.check.cel.k8s_library import FORMATS
    from trainspec.check.webhooks.training_operator import check_operator_job
    from trainspec.kube.submit_plan import namespace_name_problem

    assert FORMATS["dns1035Label"]("Bad") == N.dns1035_problem("Bad")
    found = check_operator_job(
        {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "Bad"}, "spec": {}}
    )
    assert any(N.dns1035_problem("Bad") in d.message for d in found)
    bad = namespace_name_problem("Team_NLP")
    assert bad is not None and N.label_problem("Team_NLP") in bad.message
