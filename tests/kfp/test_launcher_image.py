"""The launcher step's image: built from the Dockerfile's ``launcher`` target, named by one setting,
and nothing installed when the step starts.

* the Dockerfile (read here, docker does not run in the tests): a ``launcher`` target installing
  ``trainspec[kube,kfp]`` from wheels of a build stage with ``--no-index``, as a numeric non-root
  user; the last stage (what a plain ``docker build .`` gives) is still the sharding stage;
* ``trainspec kfp --image`` and the project's ``spec.defaults.launcherImage`` name the image of every
  compiled pipeline, whose YAML installs nothing;
* no image: TS450, located, exit 1, nothing written; the Python API needs an image too.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("kfp", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")

from kfp_testing import EXAMPLES, ROOT

from trainspec.cli.main import main
from trainspec.compiler.lower.trainer.runtime import SHARD_COMMAND
from trainspec.dsl import codes
from trainspec.kfp.job_pipeline import KfpSpecError, compile_trainjob

DOCKERFILE = ROOT / "Dockerfile"
CPU_JOB = EXAMPLES / "kfp" / "cpu-job.yaml"
IMAGE = "registry.example.com/platform/trainspec-launcher:0.1.0"
PINNED = "registry.example.com/platform/trainspec-launcher@sha256:" + "a" * 64
#: What a runtime install looks like in a compiled pipeline (KFP's lightweight components write these).
INSTALLS = ("pip install", "pip3 install", "packages_to_install", "--index-url", "ensurepip")


# -- the Dockerfile ------------------------------------------------------------------------------------


@dataclass
class Stage:
    base: str
    name: str | None
    line: int
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def parse_stages(text: str) -> list[Stage]:
    """The build stages: continuation lines joined, comments (also inside a continuation) dropped."""
    stages: list[Stage] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not pending:
            start = number
        pending.append(line.removesuffix("\\").strip())
        if line.endswith("\\"):
            continue
        keyword, _, args = " ".join(pending).partition(" ")
        pending = []
        keyword, args = keyword.upper(), args.strip()
        if keyword == "FROM":
            words = args.split()
            named = len(words) == 3 and words[1].upper() == "AS"
            stages.append(Stage(base=words[0], name=words[2] if named else None, line=start))
        elif stages:
            stages[-1].instructions.append((keyword, args))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return stages


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse_stages(DOCKERFILE.read_text(encoding="utf-8"))


def _stage(stages: list[Stage], name: str) -> Stage:
    (found,) = [s for s in stages if s.name == name]
    return found


def _mounted_from(run: str) -> list[str]:
    """The stages a RUN bind-mounts (``--mount=type=bind,from=STAGE,...``)."""
    return re.findall(r"--mount=type=bind,(?:[^ ]*,)?from=([\w.-]+)", run)


def test_the_parser_reads_stages_names_and_continuations() -> None:
    parsed = parse_stages("ARG B=x:1.0.0\nFROM ${B} AS one\nRUN a \\\n  # note\n  b\nFROM ${B}\nUSER 1\n")
    assert [(s.base, s.name, s.line) for s in parsed] == [("${B}", "one", 2), ("${B}", None, 6)]
    assert parsed[0].instructions == [("RUN", "a b")] and parsed[1].instructions == [("USER", "1")]


def test_the_launcher_target_installs_kube_and_kfp_from_built_wheels_only(stages: list[Stage]) -> None:
    launcher = _stage(stages, "launcher")
    installs = [run for run in launcher.args("RUN") if "pip install" in run]
    assert len(installs) == 1, installs
    (install,) = installs
    words = shlex.split(install)
    assert "trainspec[kube,kfp]" in words and "--no-index" in words
    assert words[words.index("--find-links") + 1] == "/wheels"
    # The wheels come from an earlier build stage that built exactly these extras.
    (source,) = _mounted_from(install)
    names = [s.name for s in stages]
    assert source in names and names.index(source) < names.index("launcher")
    build = _stage(stages, source)
    assert any("pip wheel" in run and '".[kube,kfp]"' in run and "/wheels" in run for run in build.args("RUN"))
    # Nothing else is installed, from an index or otherwise, in the final image.
    assert not any(re.search(r"apt-get install|pip3? install(?!.*--no-index)", run) for run in launcher.args("RUN"))
    assert any("PIP_NO_CACHE_DIR=1" in env for env in launcher.args("ENV"))


def test_the_launcher_runs_as_a_numeric_non_root_user(stages: list[Stage]) -> None:
    launcher = _stage(stages, "launcher")
    kinds = [kw for kw, _ in launcher.instructions]
    users = launcher.args("USER")
    assert users, "the launcher stage sets no USER: it would run as root"
    user, _, group = users[-1].partition(":")
    assert user.isdigit() and int(user) != 0, users[-1]  # numeric: the kubelet can verify runAsNonRoot
    assert group == "" or (group.isdigit() and int(group) != 0)
    last_user = len(kinds) - 1 - kinds[::-1].index("USER")
    assert "RUN" not in kinds[last_user:], "a RUN after USER would need root again"
    labels = " ".join(launcher.args("LABEL"))
    assert "org.opencontainers.image.title=" in labels and "launcher" in labels
    assert "org.opencontainers.image.licenses=" in labels


def test_a_plain_build_still_gives_the_small_sharding_stage_image(stages: list[Stage]) -> None:
    default = stages[-1]  # `docker build .` builds the last stage
    assert default.name != "launcher"
    (entrypoint,) = default.args("ENTRYPOINT")
    assert json.loads(entrypoint) == SHARD_COMMAND
    (install,) = [run for run in default.args("RUN") if "pip install" in run]
    assert '"trainspec[data]"' in install and "--no-index" in install
    # Its wheels are the data extra's only: kfp and the launcher's wheels never reach it.
    (source,) = _mounted_from(install)
    build_runs = " ".join(_stage(stages, source).args("RUN"))
    assert '".[data]"' in build_runs and "kfp" not in build_runs
    assert "kfp" not in " ".join(args for _, args in default.instructions)


def test_the_header_says_how_to_build_both() -> None:
    header = DOCKERFILE.read_text(encoding="utf-8").split("\nFROM ", 1)[0]
    assert re.search(r"docker build --target launcher -t \S+/trainspec-launcher:\S+ \.", header)
    assert re.search(r"docker build -t \S+/trainspec:\S+ \.", header)
    # The stage image's documented command needs no --target.
    stage_doc = (ROOT / "docs" / "stage-image.md").read_text(encoding="utf-8")
    assert "$ docker build -t registry.example.com/platform/trainspec:0.1.0 .\n" in stage_doc


# -- compiled pipelines --------------------------------------------------------------------------------


def _executors(text: str) -> dict[str, Any]:
    ir = next(yaml.safe_load_all(text))
    return {name: spec["container"] for name, spec in ir["deploymentSpec"]["executors"].items()}


def _installs_nothing(text: str) -> None:
    found = [word for word in INSTALLS if word in text]
    assert found == [], f"the pipeline installs packages at run time: {found}"


def _kfp(*args: str) -> int:
    return main(["kfp", *args])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository root holding the example job (project discovery stops at its .git)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "cpu-job.yaml").write_text(CPU_JOB.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _project(root: Path, defaults: str) -> None:
    (root / "trainspec.yaml").write_text(
        f"apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec:\n  defaults:\n{defaults}", encoding="utf-8"
    )


def test_image_option_names_the_launcher_image(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _kfp("cpu-job.yaml", "--image", IMAGE, "-o", "pipeline.yaml") == 0, capsys.readouterr().err
    text = (repo / "pipeline.yaml").read_text(encoding="utf-8")
    assert _executors(text)["exec-launch-trainjob"]["image"] == IMAGE
    _installs_nothing(text)


def test_the_project_setting_names_it_and_the_option_wins(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _project(repo, f"    launcherImage: {PINNED}\n")
    assert _kfp("cpu-job.yaml", "-o", "pipeline.yaml") == 0, capsys.readouterr().err
    text = (repo / "pipeline.yaml").read_text(encoding="utf-8")
    assert _executors(text)["exec-launch-trainjob"]["image"] == PINNED
    _installs_nothing(text)

    assert _kfp("cpu-job.yaml", "--image", IMAGE, "-o", "-") == 0
    out = capsys.readouterr().out
    assert _executors(out)["exec-launch-trainjob"]["image"] == IMAGE
    _installs_nothing(out)


def test_the_example_pipeline_installs_nothing(tmp_path: Path) -> None:
    import importlib.util

    from trainspec.kfp.job_pipeline import compile_pipeline

    module_spec = importlib.util.spec_from_file_location(
        "trainspec_kfp_example_image", EXAMPLES / "kfp" / "pipeline.py"
    )
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    out = tmp_path / "pipeline.yaml"
    compile_pipeline(module.example_pipeline, str(out))
    text = out.read_text(encoding="utf-8")
    project = yaml.safe_load((EXAMPLES / "kfp" / "trainspec.yaml").read_text(encoding="utf-8"))
    image = project["spec"]["defaults"]["launcherImage"]
    executors = _executors(text)
    assert executors["exec-launch-trainjob"]["image"] == image
    # Its own steps run in the same image: KFP's executor is there, nothing is installed.
    assert executors["exec-prepare-data"]["image"] == executors["exec-evaluate"]["image"] == image
    _installs_nothing(text)


def test_no_image_is_ts450_located_and_nothing_is_written(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _kfp("cpu-job.yaml", "-o", "pipeline.yaml") == 1
    err = capsys.readouterr().err
    assert f"cpu-job.yaml:9:9: error[{codes.NO_LAUNCHER_IMAGE}]: job kfp-ddp-cpu:" in err
    assert "no project file (trainspec.yaml) is in use" in err
    hint = next(line for line in err.splitlines() if line.startswith("  hint: "))
    assert "docker build --target launcher" in hint
    assert "spec.defaults.launcherImage" in hint and "--image" in hint
    assert not (repo / "pipeline.yaml").exists()

    # A project file without the setting: the note points at its defaults.
    _project(repo, "    namespace: ml\n")
    assert _kfp("cpu-job.yaml", "-o", "pipeline.yaml", "--format", "json") == 1
    (diagnostic,) = json.loads(capsys.readouterr().err)["diagnostics"]
    assert diagnostic["code"] == codes.NO_LAUNCHER_IMAGE and diagnostic["severity"] == "error"
    assert (diagnostic["file"], diagnostic["line"]) == ("cpu-job.yaml", 9)
    assert [(r["file"], r["line"]) for r in diagnostic["related"]] == [("trainspec.yaml", 4)]
    assert not (repo / "pipeline.yaml").exists()


def test_standard_output_gets_nothing_without_an_image(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _kfp("cpu-job.yaml", "-o", "-") == 1
    captured = capsys.readouterr()
    assert captured.out == "" and f"error[{codes.NO_LAUNCHER_IMAGE}]" in captured.err


def test_an_image_that_is_no_reference_is_refused(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _kfp("cpu-job.yaml", "--image", "not an image", "-o", "pipeline.yaml") == 2
    assert "--image" in capsys.readouterr().err and not (repo / "pipeline.yaml").exists()


def test_the_pip_index_option_is_gone(repo: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        _kfp("cpu-job.yaml", "--image", IMAGE, "--pip-index-url", "https://example.com/simple")
    assert exc.value.code == 2


# -- the Python API ------------------------------------------------------------------------------------


def test_make_launcher_needs_an_image_and_installs_nothing() -> None:
    from trainspec.kfp import make_launcher

    with pytest.raises(TypeError):
        make_launcher()  # type: ignore[call-arg]
    for bad in ("", " ", "a b"):
        with pytest.raises(ValueError, match="launcher image"):
            make_launcher(bad)
    spec = make_launcher(IMAGE).component_spec.implementation.container
    assert spec.image == IMAGE
    _installs_nothing(" ".join([*spec.command, *(spec.args or [])]))


def test_launch_trainjob_is_the_components_function_not_a_component() -> None:
    import trainspec.kfp
    from trainspec.kfp import component

    assert trainspec.kfp.launch_trainjob is component.launch_trainjob
    assert callable(component.launch_trainjob) and not hasattr(component.launch_trainjob, "component_spec")
    assert not hasattr(component, "DEFAULT_IMAGE") and not hasattr(component, "DEFAULT_PACKAGES")


def test_trainjob_task_without_an_image_is_ts450() -> None:
    from kfp import dsl

    from trainspec.kfp import trainjob_task

    with pytest.raises(KfpSpecError) as exc:

        @dsl.pipeline
        def no_image():  # type: ignore[no-untyped-def]
            trainjob_task(CPU_JOB)

    (diagnostic,) = exc.value.diagnostics
    assert diagnostic.code == codes.NO_LAUNCHER_IMAGE and "docker build --target launcher" in (diagnostic.hint or "")


def test_compile_trainjob_carries_the_project_setting(tmp_path: Path) -> None:
    _project(tmp_path, f"    launcherImage: {PINNED}\n")
    compiled = compile_trainjob(CPU_JOB, project=tmp_path / "trainspec.yaml")
    assert compiled.launcher_image == PINNED
    assert compile_trainjob(CPU_JOB, project=None).launcher_image is None
