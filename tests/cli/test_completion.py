"""``trainspec completion``: scripts generated from the parser, and ``--version``.

The bash script is sourced in a real ``bash`` and driven the way readline drives it (COMP_WORDS,
COMP_CWORD, then the function, whose ``compgen`` calls fill COMPREPLY). zsh and fish are not
installed here: their scripts are checked for every command and option and, where the shell
exists, parsed with its syntax check.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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


def complete(script_path: Path, *words: str, cwd: Path | None = None) -> list[str]:
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
    if sys.version_info >= (3, 11):
        import tomllib

        declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
        assert declared == __version__  # one version: the wheel's and the one --version prints


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
