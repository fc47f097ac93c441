"""The stage image's Dockerfile keeps its rules: docker cannot run here, so its structure is checked.

Pinned bases, a non-root numeric user matching the sharding pod's fsGroup, no secrets, trainspec
installed with the ``data`` extra from wheels, the shard stage as entrypoint, and a build context
(``.dockerignore``) holding only what the wheel build needs.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from dataclasses import dataclass

import pytest

from tests.conftest import ROOT
from trainspec.compiler.lower.trainer.runtime import SHARD_COMMAND
from trainspec.k8s.wellknown import STAGE_UID

DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"

#: name:tag with a full version (3.12.8-slim-bookworm), or any reference pinned by digest.
PINNED = re.compile(r"^([\w.-]+(:\d+)?/)?[\w./-]+(:\d+\.\d+\.\d+[\w.-]*)?(@sha256:[0-9a-f]{64})?$")
SECRET_WORDS = re.compile(r"(TOKEN|PASSWORD|PASSWD|SECRET|API_KEY|ACCESS_KEY|CREDENTIAL|AUTH)", re.I)


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int


def parse(text: str) -> list[Instruction]:
    """Dockerfile instructions with continuation lines joined and comments dropped."""
    out: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):  # a comment inside a continued instruction
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        keyword, _, args = " ".join(pending).partition(" ")
        out.append(Instruction(keyword.upper(), args.strip(), start))
        pending = []
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return out


@pytest.fixture(scope="module")
def instructions() -> list[Instruction]:
    return parse(DOCKERFILE.read_text(encoding="utf-8"))


def arg_defaults(instructions: list[Instruction]) -> dict[str, str]:
    """Global ARGs (before the first FROM) and their defaults."""
    defaults: dict[str, str] = {}
    for ins in instructions:
        if ins.keyword == "FROM":
            break
        if ins.keyword == "ARG":
            name, _, value = ins.args.partition("=")
            defaults[name] = value.strip().strip('"')
    return defaults


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    out: list[list[Instruction]] = []
    for ins in instructions:
        if ins.keyword == "FROM":
            out.append([])
        if out:
            out[-1].append(ins)
    return out


def pinned(image: str) -> bool:
    """An exact version tag or a digest; never a bare name, ``latest`` or a floating ``3.12``."""
    has_tag = ":" in image.split("/")[-1].split("@")[0]
    return "latest" not in image and bool(PINNED.match(image)) and (has_tag or "@sha256:" in image)


def base_of(stage: list[Instruction], defaults: dict[str, str]) -> str:
    image = stage[0].args.split()[0]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: defaults[m.group(1) or m.group(2)], image)


def test_parser_joins_continuations_and_skips_comments() -> None:
    parsed = parse("# c\nFROM a:1.2.3\nRUN one \\\n  # inside\n    two\nUSER 1\n")
    assert [(i.keyword, i.args, i.line) for i in parsed] == [
        ("FROM", "a:1.2.3", 2),
        ("RUN", "one two", 3),
        ("USER", "1", 6),
    ]


def test_every_base_image_is_pinned(instructions: list[Instruction]) -> None:
    defaults = arg_defaults(instructions)
    for stage in stages(instructions):
        image = base_of(stage, defaults)
        assert pinned(image), f"line {stage[0].line}: {image} is not pinned"


def test_the_pin_check_refuses_floating_tags() -> None:
    for floating in (
        "python",
        "python:3.12",
        "python:3-slim",
        "python:latest",
        "python:3.12-slim",
        "docker.io/library/python:3.12-slim-bookworm",
    ):
        assert not pinned(floating), floating
    assert pinned("python:3.12.8-slim-bookworm")
    assert pinned("python@sha256:" + "a" * 64)
    assert pinned("registry.example.com:5000/mirror/python:3.12.8-slim@sha256:" + "a" * 64)


def test_the_image_runs_as_the_non_root_user_the_stage_pod_expects(instructions: list[Instruction]) -> None:
    final = stages(instructions)[-1]
    users = [ins for ins in final if ins.keyword == "USER"]
    assert users, "the final stage sets no USER: it would run as root"
    user, _, group = users[-1].args.partition(":")
    # Numeric, so the kubelet can verify runAsNonRoot; the runtime's fsGroup is the same id.
    assert user.isdigit() and int(user) != 0 and int(user) == STAGE_UID
    assert group == "" or int(group) == STAGE_UID
    last_run = max(i for i, ins in enumerate(final) if ins.keyword == "RUN")
    assert final.index(users[-1]) > last_run, "a RUN after USER would need root again"


def test_no_secrets_in_build_args_env_or_copies(instructions: list[Instruction]) -> None:
    for ins in instructions:
        if ins.keyword in ("ARG", "ENV"):
            for word in re.findall(r"(\w+)=", ins.args + "=") or [ins.args.split("=")[0]]:
                assert not SECRET_WORDS.search(word), f"line {ins.line}: {ins.keyword} {word} looks like a secret"
        if ins.keyword in ("COPY", "ADD"):
            assert ins.keyword == "COPY", f"line {ins.line}: ADD can fetch URLs; use COPY"
            sources = shlex.split(ins.args)[:-1]
            assert not any(re.search(r"(^|/)\.(env|kube|ssh|aws|docker)|netrc|credentials", s) for s in sources)


def test_trainspec_is_installed_with_the_data_extra_from_local_wheels(instructions: list[Instruction]) -> None:
    build, final = stages(instructions)[0], stages(instructions)[-1]
    assert any(ins.keyword == "RUN" and "pip wheel" in ins.args and '".[data]"' in ins.args for ins in build)
    installs = [ins.args for ins in final if ins.keyword == "RUN" and "pip install" in ins.args]
    assert len(installs) == 1
    assert '"trainspec[data]"' in installs[0] and "--no-index" in installs[0]
    # The final stage has no compiler toolchain and no pip cache.
    assert not any(re.search(r"apt-get install|build-essential|gcc", ins.args) for ins in final)
    assert any(ins.keyword == "ENV" and "PIP_NO_CACHE_DIR=1" in ins.args for ins in final)


def test_the_entrypoint_is_the_shard_stage_the_runtime_runs(instructions: list[Instruction]) -> None:
    final = stages(instructions)[-1]
    (entrypoint,) = [ins for ins in final if ins.keyword == "ENTRYPOINT"]
    assert json.loads(entrypoint.args) == SHARD_COMMAND  # exec form, the command lower/trainer/runtime.py sets


def ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last matching pattern decides; ``!`` re-includes."""
    state = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        body = pattern[1:] if negate else pattern
        body = body.rstrip("/")
        if (
            fnmatch.fnmatch(path, body)
            or path.startswith(body + "/")
            or fnmatch.fnmatch(path, body.replace("**/", "*/"))
        ):
            state = not negate
    return state


def test_the_build_context_holds_only_what_the_wheel_needs(instructions: list[Instruction]) -> None:
    patterns = [
        line.strip() for line in DOCKERIGNORE.read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    assert patterns[0] == "*", "the context must exclude everything by default"
    for ins in instructions:
        if ins.keyword == "COPY" and "--from" not in ins.args:
            for source in shlex.split(ins.args)[:-1]:
                assert not ignored(source.rstrip("/"), patterns), f"line {ins.line}: {source} is not in the context"
                assert (ROOT / source).exists(), source
    for kept_out in (".git", ".venv", "tests", "examples", ".env", "kubeconfig", "trainspec/cli/__pycache__"):
        assert ignored(kept_out, patterns), kept_out


def test_nothing_shipped_names_the_image_nobody_built() -> None:
    """The old default, ghcr.io/trainspec/trainspec, was never published: no built-in, example or doc
    may point at it (tests of explicit runtimes may still spell it out)."""
    roots = [ROOT / "trainspec", ROOT / "examples", ROOT / "docs", ROOT / "README.md"]
    files = [
        p
        for r in roots
        for p in ([r] if r.is_file() else r.rglob("*"))
        if p.is_file() and p.suffix in (".yaml", ".yml", ".py", ".md", ".json")
    ]
    offenders = [
        str(p.relative_to(ROOT)) for p in files if "ghcr.io/trainspec/trainspec" in p.read_text(errors="ignore")
    ]
    assert offenders == []
