"""kubectl's habits on ``status`` and ``list``: ``-o json|yaml|wide|name`` (``--format`` the long form),
``-A``, and ``--kubeconfig``/``--context`` on every cluster command, against the stand-in."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import cli, write_job
from kube_standin import StandIn

#: Fields that count seconds up to the moment of reading: they change between two runs.
CLOCK = re.compile(r'("?(?:age|deadline_left|last_updated)_seconds"?: )\d+')


def timeless(text: str) -> str:
    """The output with the seconds that tick (age, deadline left) blanked: two runs compare equal."""
    return CLOCK.sub(r"\1N", text)


ADMITTED = [{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted"}]


@pytest.fixture
def running(api: StandIn, tmp_path: Path) -> StandIn:
    """ml-dev/ddp-ckpt admitted with two pods on two nodes; ml-prod/other queued, no pods."""
    api.add_cluster_runtime("trainspec-torch")
    assert cli("submit", write_job(tmp_path), "--no-project")[0] == 0
    api.add_workload(api.trainjobs[("ml-dev", "ddp-ckpt")], queue="ml-dev", conditions=ADMITTED)
    for index in (0, 1):
        name = f"ddp-ckpt-node-0-{index}-x"
        api.add_pod("ml-dev", name, "ddp-ckpt", phase="Running", ready=True, index=index)
        api.pods[("ml-dev", name)]["spec"] = {"nodeName": f"worker-{index + 1}"}  # the scheduler's part
    other = (
        (tmp_path / "job.yaml")
        .read_text()
        .replace("ddp-ckpt", "other")
        .replace("namespace: ml-dev", "namespace: ml-prod")
    )
    assert cli("submit", write_job(tmp_path, other), "--no-project")[0] == 0
    api.requests.clear()
    return api


def test_format_is_the_long_form_of_o(running: StandIn) -> None:
    for argv in (("status", "ddp-ckpt", "-n", "ml-dev"), ("list", "-A"), ("status", "-n", "ml-dev")):
        code, short, _ = cli(*argv, "-o", "json")
        assert code == 0 and json.loads(short)
        for long in ("--output", "--format"):
            assert timeless(cli(*argv, long, "json")[1]) == timeless(short)
        assert "age_seconds" in short and timeless(short) != short  # the blanking blanks something


def test_yaml_is_the_json_data_with_sorted_keys(running: StandIn) -> None:
    import yaml

    for argv in (("status", "ddp-ckpt", "-n", "ml-dev"), ("list", "-A"), ("status", "-A")):
        code, as_yaml, err = cli(*argv, "-o", "yaml")
        assert code == 0, err
        as_json = cli(*argv, "-o", "json")[1]
        assert yaml.safe_load(timeless(as_yaml)) == yaml.safe_load(timeless(as_json))  # JSON is YAML too
        assert timeless(cli(*argv, "-o", "yaml")[1]) == timeless(as_yaml)  # deterministic
    one = yaml.safe_load(cli("status", "ddp-ckpt", "-n", "ml-dev", "-o", "yaml")[1])
    keys = [line.split(":")[0] for line in cli("status", "ddp-ckpt", "-n", "ml-dev", "-o", "yaml")[1].splitlines()]
    top = [k for k in keys if k and not k.startswith((" ", "-"))]
    assert top == sorted(top) and set(top) == set(one)


def test_json_has_who_the_job_is_and_where_its_pods_run(running: StandIn) -> None:
    data = json.loads(cli("status", "ddp-ckpt", "-n", "ml-dev", "-o", "json")[1])
    assert (data["job"], data["runtime"], data["queue_name"]) == (
        "ddp-ckpt",
        "ClusterTrainingRuntime/trainspec-torch",
        "ml-dev",
    )
    assert len(data["run"]) == 6  # the run id label the compiler wrote
    assert data["groups"][0]["nodes"] == {"0": "worker-1", "1": "worker-2"}


def test_name_prints_what_kubectl_prints(running: StandIn) -> None:
    assert cli("status", "ddp-ckpt", "-n", "ml-dev", "-o", "name") == (
        0,
        "trainjob.trainer.kubeflow.org/ddp-ckpt\n",
        "",
    )
    code, out, _ = cli("list", "-A", "-o", "name")
    assert (code, out) == (0, "trainjob.trainer.kubeflow.org/ddp-ckpt\ntrainjob.trainer.kubeflow.org/other\n")


def test_wide_status_adds_the_job_runtime_queue_and_the_node_of_each_pod(running: StandIn) -> None:
    code, text, _ = cli("status", "ddp-ckpt", "-n", "ml-dev")
    code_wide, wide, _ = cli("status", "ddp-ckpt", "-n", "ml-dev", "-o", "wide")
    assert code == code_wide == 0
    assert wide.startswith(text)  # wide is the text form, and more
    run = json.loads(cli("status", "ddp-ckpt", "-n", "ml-dev", "-o", "json")[1])["run"]
    assert wide[len(text) :].splitlines() == [
        f"  job ddp-ckpt, run {run}; runtime ClusterTrainingRuntime/trainspec-torch; queue ml-dev",
        "  node-0: pod ddp-ckpt-node-0-0-x on worker-1",
        "  node-1: pod ddp-ckpt-node-0-1-x on worker-2",
    ]


def test_wide_list_adds_columns(running: StandIn) -> None:
    code, out, _ = cli("list", "-A", "-o", "wide")
    assert code == 0
    head, first, second = out.splitlines()
    assert head.split()[:10] == ["NAMESPACE", "NAME", "PHASE", "PODS", "AGE", "JOB", "RUN", "RUNTIME", "QUEUE", "NODES"]
    assert first.split()[:4] == ["ml-dev", "ddp-ckpt", "Created", "2/2"]
    assert first.split()[5:][:1] == ["ddp-ckpt"] and first.split()[7:10] == [
        "trainspec-torch",
        "ml-dev",
        "worker-1,worker-2",
    ]
    assert second.split()[:2] == ["ml-prod", "other"] and second.split()[9] == "-"  # no pod: no node
    plain = cli("list", "-A")[1].splitlines()
    assert plain[0].split()[:5] == head.split()[:5] and "NODES" not in plain[0]


def test_all_namespaces_on_list_and_on_status_without_job(running: StandIn) -> None:
    assert [line.split()[1] for line in cli("list", "-A")[1].splitlines()[1:]] == ["ddp-ckpt", "other"]
    assert [line.split()[1] for line in cli("list", "-n", "ml-dev")[1].splitlines()[1:]] == ["ddp-ckpt"]
    heads = [line for line in cli("status", "--all-namespaces")[1].splitlines() if line.startswith("TrainJob ")]
    assert [h.split(":")[0] for h in heads] == ["TrainJob ml-dev/ddp-ckpt", "TrainJob ml-prod/other"]
    listed = [r for r in running.sent("GET", "trainjobs$") if "watch" not in r.query]
    assert all(r.path == "/apis/trainer.kubeflow.org/v1alpha1/trainjobs" for r in listed if "namespaces" not in r.path)


def test_usage_errors_ask_nothing_of_the_cluster(running: StandIn) -> None:
    for argv, said in (
        (("status", "ddp-ckpt", "-A"), "give -n NS, not -A, with JOB"),
        (("status", "ddp-ckpt", "-n", "ml-dev", "--watch", "-o", "yaml"), "--watch prints text or json"),
        (("status", "-A", "--watch"), "--watch needs a JOB"),
    ):
        code, out, err = cli(*argv)
        assert (code, out) == (2, "") and said in err, argv
    assert running.requests == []


def test_nothing_to_show_in_each_form(api: StandIn) -> None:
    assert cli("list", "-A", "-o", "json") == (0, "[]\n", "")
    assert cli("list", "-A", "-o", "yaml") == (0, "[]\n", "")
    assert cli("list", "-A", "-o", "name") == (0, "", "")
    assert cli("status", "-A", "-o", "name") == (0, "", "")
    assert cli("list", "-A") == (0, "", "no TrainJobs in any namespace\n")


def test_an_error_under_o_json_is_json_on_stderr(running: StandIn) -> None:
    code, out, err = cli("status", "nope", "-n", "ml-dev", "-o", "json")
    assert code == 1 and out == ""
    found = json.loads(err)
    assert found  # the diagnostics, machine-readable like the output asked for


KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: here
clusters:
- name: standin
  cluster: {{server: "{url}"}}
- name: nowhere
  cluster: {{server: "http://127.0.0.1:1"}}
users:
- name: u
  user: {{token: not-a-secret}}
contexts:
- name: here
  context: {{cluster: standin, user: u, namespace: ml-dev}}
- name: there
  context: {{cluster: nowhere, user: u}}
"""


@pytest.mark.parametrize(
    "argv",
    [
        ("status", "ddp-ckpt"),
        ("list",),
        ("logs", "ddp-ckpt"),
        ("cancel", "ddp-ckpt", "--no-wait"),
    ],
)
def test_kubeconfig_and_context_pick_the_cluster(
    running: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(KUBECONFIG.format(url=running.url))
    monkeypatch.delenv("TRAINSPEC_KUBE_API")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))  # --kubeconfig wins over it
    running.add_pod("ml-dev", "ddp-ckpt-node-0-0-x", "ddp-ckpt", phase="Running", lines=[])
    code, _, err = cli(*argv, "--kubeconfig", str(config))
    assert code == 0, err
    # The context's namespace (ml-dev) was used, and the token went along.
    sent = running.sent(None, "/namespaces/ml-dev/")
    assert sent and all(
        {k.lower(): v for k, v in r.headers.items()}.get("authorization") == "Bearer not-a-secret" for r in sent
    )
    running.requests.clear()
    code, _, err = cli(*argv, "--kubeconfig", str(config), "--context", "there")
    assert code == 1 and "TS711" in err and running.requests == []


def test_text_from_the_api_server_reaches_the_terminal_escaped() -> None:
    """A Workload's message is any controller's words: an escape sequence in it is shown, not obeyed."""
    from trainspec.cli.formats import status_text

    class View:
        def lines(self) -> list[str]:
            return ["TrainJob ml-dev/x: Queued", "  kueue: \x1b[2J\x1b[31mfake all clear\u202e"]

    text = status_text([View()], "text", many=False)
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\u001b[2J" in text and text.startswith("TrainJob ml-dev/x: Queued\n")
