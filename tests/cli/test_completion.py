"""``trainspec completion``: scripts generated from the parser, and ``--version``.

The bash script is sourced in a real ``bash`` and driven the way readline drives it (COMP_WORDS,
COMP_CWORD, then the function, whose ``compgen`` calls fill COMPREPLY). zsh and fish are not
installed here: their scripts are checked for every command and option and, where the shell
exists, parsed with its syntax check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_cli
from trainspec import __version__
from trainspec.cli.completion import describe, script
from trainspec.cli.main import COMMANDS, build_parser

BASH = shutil.which("bash")


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    proc = run_cli("completion", "bash")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path_factory.mktemp("completion") / "trainspec.bash"
    path.write_text(proc.stdout)
    return path


def complete(script_path: Path, *words: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> list[str]:
    """What bash completes for ``trainspec <words>`` (the last word is the one being typed)."""
    assert BASH is not None
    line = ["trainspec", *words]
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in line)
    program = (
        f"source '{script_path}' && COMP_WORDS=({quoted}) && COMP_CWORD={len(line) - 1} && "
        "_trainspec && printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    proc = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", program],
        check=False,
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


pytestmark_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


@pytestmark_bash
def test_bash_registers_the_function(bash_script: Path) -> None:
    proc = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", f"source '{bash_script}' && complete -p trainspec"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == "complete -o default -F _trainspec trainspec"


@pytestmark_bash
def test_bash_completes_every_command(bash_script: Path) -> None:
    assert complete(bash_script, "") == list(COMMANDS)
    assert complete(bash_script, "co") == ["compile", "completion"]
    assert complete(bash_script, "--v") == ["--version"]


@pytestmark_bash
def test_bash_completes_a_commands_options_and_their_values(bash_script: Path) -> None:
    assert complete(bash_script, "compile", "--ou") == ["--output"]
    assert complete(bash_script, "compile", "--gitops", "") == ["argocd", "flux"]
    assert complete(bash_script, "validate", "--format", "j") == ["json"]
    assert complete(bash_script, "completion", "") == ["bash", "zsh", "fish"]
    # Options come after the command's positional arguments too.
    assert "--check" in complete(bash_script, "compile", "examples/jax.yaml", "--c")
    # A number is not a path: nothing is offered.
    assert complete(bash_script, "validate", "--python-timeout", "") == []


@pytestmark_bash
def test_bash_completes_spec_files_and_output_directories(bash_script: Path, tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text("")
    (tmp_path / "jobs").mkdir()
    assert sorted(complete(bash_script, "validate", "jo", cwd=tmp_path)) == ["job.yaml", "jobs"]
    assert complete(bash_script, "compile", "job.yaml", "-o", "jobs", cwd=tmp_path) == ["jobs"]


def test_every_option_of_every_command_is_in_every_script() -> None:
    _top, commands = describe(build_parser())
    assert [c.name for c in commands] == list(COMMANDS)
    for shell in ("bash", "zsh", "fish"):
        text = script(shell)
        for command in commands:
            assert command.name in text
            for option in command.options:
                for flag in option.flags:
                    spelled = (
                        flag if shell != "fish" else (f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
                    )
                    assert spelled in text, (shell, command.name, flag)


def test_zsh_script_is_a_compdef_function_with_choices() -> None:
    text = script("zsh")
    assert text.startswith("#compdef trainspec\n")
    assert "compdef _trainspec trainspec" in text
    assert "--gitops[" in text and ":(argocd flux)" in text
    assert "'*:file:_files'" in text and "'1:value:(bash zsh fish)'" in text
    # Quotes and brackets in help texts are escaped, so every spec stays one shell word.
    assert "program'\\''s version" in text
    zsh = shutil.which("zsh")
    if zsh:
        proc = subprocess.run([zsh, "-n", "-c", text], check=False, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr


def test_fish_script_uses_subcommand_conditions() -> None:
    text = script("fish")
    assert "complete -c trainspec -n __fish_use_subcommand -a compile" in text
    assert "complete -c trainspec -n '__fish_seen_subcommand_from compile' -l gitops -x -a 'argocd flux'" in text
    assert "show program\\'s version" in text
    fish = shutil.which("fish")
    if fish:
        proc = subprocess.run(
            [fish, "--no-execute", "-c", text], check=False, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr


def test_an_unknown_shell_is_a_usage_error() -> None:
    proc = run_cli("completion", "tcsh")
    assert proc.returncode == 2 and "invalid choice: 'tcsh'" in proc.stderr and "Traceback" not in proc.stderr


def test_version_prints_the_package_version() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout == f"trainspec {__version__}\n"
    # One version: pyproject.toml reads it from trainspec.__version__ (tests/test_packaging.py checks the
    # built wheel's and sdist's, and an installed wheel's --version).


def test_validate_and_compile_never_import_the_completion_generator() -> None:
    """Completion imports every command module; validate/compile start-up must not pay for that."""
    program = (
        "import sys\nfrom trainspec.cli.main import main\n"
        "for argv in (['validate', 'examples/ddp-cpu.yaml'], ['compile', 'examples/ddp-cpu.yaml', '-o', '-']):\n"
        "    assert main(argv) == 0\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('trainspec.cli.', 'trainspec.progress')))\n"
        "print(' '.join(loaded))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program], check=False, capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout.strip().splitlines()[-1].split()
    assert "trainspec.cli.completion" not in loaded
    assert "trainspec.progress" in loaded  # compile's progress line: standard library only


# -- names from the cluster: `trainspec __complete` and the scripts that call it ---------------------

KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c
  cluster: {server: "http://127.0.0.1:1"}
users:
- name: u
  user: {token: not-a-secret}
contexts:
- name: dev
  context: {cluster: c, user: u, namespace: ml-dev}
- name: prod
  context: {cluster: c, user: u}
"""


@pytest.fixture
def standin() -> Iterator[Any]:
    """The loopback API stand-in of tests/kube, holding two TrainJobs in two namespaces."""
    pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")
    if str(ROOT / "tests" / "kfp") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests" / "kfp"))
    from kube_standin import StandIn, serve

    api = StandIn()
    server = serve(api)
    for ns, name, job in (("ml-dev", "ddp-cpu-4pmvsm", "ddp-cpu"), ("ml-prod", "llama", None)):
        labels = {"trainspec.dev/job": job} if job else {}
        api.trainjobs[(ns, name)] = {"metadata": {"name": name, "namespace": ns, "labels": labels}}
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()


def quiet_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment with no cluster configured at all (no kubeconfig, no stand-in, not in a pod)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TRAINSPEC_", "KUBERNETES_")) and k not in ("KUBECONFIG", "HOME")
    }
    return {**env, "HOME": str(home), **extra}


def names(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "trainspec", "__complete", *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )


def test_complete_names_with_nothing_configured_is_silent_and_never_loads_the_client(tmp_path: Path) -> None:
    env = quiet_env(tmp_path)
    for kind in ("jobs", "namespaces", "contexts"):
        proc = names(kind, "-n", "x", "--context", "y", env=env)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), kind
    program = (
        "import sys\nfrom trainspec.cli.main import main\n"
        "assert main(['__complete', 'jobs']) == 0\nprint('kubernetes' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program], check=False, capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert proc.stdout == "False\n", proc.stderr


def test_complete_names_of_an_unreachable_cluster_is_silent(tmp_path: Path) -> None:
    (tmp_path / "config").write_text(KUBECONFIG)  # its server is a closed loopback port
    for env in (
        quiet_env(tmp_path, TRAINSPEC_KUBE_API="http://127.0.0.1:1"),
        quiet_env(tmp_path, KUBECONFIG=str(tmp_path / "config")),
    ):
        for kind in ("jobs", "namespaces"):
            proc = names(kind, env=env)
            assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), kind


def test_complete_names_of_a_usage_error_is_silent_too(tmp_path: Path) -> None:
    proc = names("pods", env=quiet_env(tmp_path))
    assert proc.returncode == 0 and proc.stdout == "" and "Traceback" not in proc.stderr


def test_complete_contexts_come_from_every_kubeconfig_file(tmp_path: Path) -> None:
    (tmp_path / "a").write_text(KUBECONFIG)
    (tmp_path / "b").write_text("contexts:\n- name: staging\n  context: {cluster: c}\n- {name: dev}\n")
    (tmp_path / "broken").write_text("contexts: [unclosed\n")
    listed = os.pathsep.join(str(tmp_path / n) for n in ("a", "b", "broken", "missing"))
    proc = names("contexts", env=quiet_env(tmp_path, KUBECONFIG=listed))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "dev\nprod\nstaging\n", "")
    # --kubeconfig (as typed on the command line) wins over $KUBECONFIG.
    proc = names("contexts", "--kubeconfig", str(tmp_path / "b"), env=quiet_env(tmp_path, KUBECONFIG=listed))
    assert proc.stdout == "dev\nstaging\n"
    # The default file when nothing says otherwise.
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(KUBECONFIG)
    assert names("contexts", env=quiet_env(tmp_path)).stdout == "dev\nprod\n"


def test_complete_jobs_and_namespaces_from_the_standin(standin: Any, tmp_path: Path) -> None:
    env = quiet_env(tmp_path, TRAINSPEC_KUBE_API=standin.url)
    # A job is named by its run or by the trainspec job it is a run of: both are offered.
    assert names("jobs", "-n", "ml-dev", env=env).stdout == "ddp-cpu\nddp-cpu-4pmvsm\n"
    assert names("jobs", "--namespace", "ml-prod", env=env).stdout == "llama\n"
    assert names("jobs", env={**env, "TRAINSPEC_NAMESPACE": "ml-prod"}).stdout == "llama\n"
    # The stand-in does not list namespaces (as when RBAC forbids it): those holding TrainJobs, and the default.
    assert names("namespaces", env=env).stdout == "default\nml-dev\nml-prod\n"
    asked = [r.path for r in standin.sent("GET")]
    assert "/api/v1/namespaces" in asked and "/apis/trainer.kubeflow.org/v1alpha1/trainjobs" in asked


@pytest.fixture
def on_path(tmp_path: Path) -> Path:
    """A directory with a ``trainspec`` program (this interpreter's), for the scripts to call."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "trainspec"
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trainspec "$@"\n')
    program.chmod(0o755)
    return bin_dir


@pytestmark_bash
def test_bash_completes_jobs_namespaces_and_contexts_from_the_cluster(
    bash_script: Path, standin: Any, tmp_path: Path, on_path: Path
) -> None:
    (tmp_path / "config").write_text(KUBECONFIG)
    env = quiet_env(tmp_path, TRAINSPEC_KUBE_API=standin.url, KUBECONFIG=str(tmp_path / "config"))
    env["PATH"] = f"{on_path}{os.pathsep}{env.get('PATH', '')}"
    assert complete(bash_script, "status", "-n", "ml-dev", "dd", env=env) == ["ddp-cpu", "ddp-cpu-4pmvsm"]
    assert complete(bash_script, "logs", "--namespace", "ml-prod", "", env=env) == ["llama"]
    assert complete(bash_script, "cancel", "-n", "ml-", env=env) == ["ml-dev", "ml-prod"]
    assert complete(bash_script, "list", "--context", "", env=env) == ["dev", "prod"]
    # The cluster options typed so far go along: the JOB is looked up in ml-prod.
    assert complete(bash_script, "status", "--context", "dev", "-n", "ml-prod", "", env=env) == ["llama"]
    assert [r.query for r in standin.sent("GET", "/namespaces/ml-prod/trainjobs$")]
    # Options still complete as before.
    assert complete(bash_script, "status", "-o", "", env=env) == ["text", "json", "yaml", "wide", "name"]


@pytestmark_bash
def test_bash_offers_nothing_for_a_job_without_a_cluster(bash_script: Path, tmp_path: Path, on_path: Path) -> None:
    env = quiet_env(tmp_path)
    env["PATH"] = f"{on_path}{os.pathsep}{env.get('PATH', '')}"
    (tmp_path / "job.yaml").write_text("")
    assert complete(bash_script, "status", "", env=env, cwd=tmp_path) == []
    assert complete(bash_script, "status", "-n", "", env=env, cwd=tmp_path) == []
    assert complete(bash_script, "validate", "jo", env=env, cwd=tmp_path) == ["job.yaml"]  # files still


def test_zsh_and_fish_scripts_ask_for_names() -> None:
    zsh_text = script("zsh")
    assert "_trainspec_names() {" in zsh_text and "trainspec __complete $kind $args" in zsh_text
    assert "'1:jobs:_trainspec_names jobs'" in zsh_text
    assert ":ns:_trainspec_names namespaces'" in zsh_text and ":name:_trainspec_names contexts'" in zsh_text
    fish_text = script("fish")
    assert "function __trainspec_names" in fish_text and "trainspec __complete $argv[1] $args" in fish_text
    assert "complete -c trainspec -n '__fish_seen_subcommand_from logs' -x -a '(__trainspec_names jobs)'" in fish_text
    assert "-s n -l namespace -x -a '(__trainspec_names namespaces)'" in fish_text


def test_the_hidden_command_is_in_no_help_and_no_script() -> None:
    assert "__complete" not in run_cli("--help").stdout
    for shell in ("bash", "zsh", "fish"):
        text = script(shell)
        # Called by the scripts, never offered as a command to complete.
        assert "__complete" not in text.split("_trainspec()" if shell != "fish" else "complete -c trainspec -f", 1)[1]


def test_the_api_variable_is_named_once() -> None:
    pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")
    from trainspec.cli.complete_names import API_ENV
    from trainspec.kube.client import API_ENV as CLIENT_API_ENV

    assert API_ENV == CLIENT_API_ENV
