"""The Python DSL as mypy and pyright see it: snippets that must pass and snippets that must fail,
each failure with the error the checker reports (as hera's type-hint tests do).

Both checkers run once over every snippet (a file each) and their findings are matched per file
and line. A checker that is not installed skips its tests, saying so; under ``CI=true`` a missing
checker is a failure (the test extra installs both).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Runs mypy and pyright as subprocesses (seconds each; slow: see pyproject's marker).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

_HEAD = (
    "import trainspec\nfrom trainspec import (Framework, Metadata, Resources, Runtime, RuntimeSpec, SecretRef, "
    "TrainingJob, TrainingJobSpec)\n"
)

#: Snippets that both checkers must accept.
PASSES = {
    "flat": """
job = TrainingJob(name="ddp-cpu", namespace="ml-dev", runtime="trainspec-torch", nodes=2, procs_per_node=2,
                  resources_per_node=Resources(cpu=4, memory="8Gi"), max_run_time="30m", labels={"team": "ml"})
name: str = job.name
nodes = job.spec.nodes
""",
    "nested": """
job = TrainingJob(metadata=Metadata(name="sft", namespace="team-nlp"),
                  spec=TrainingJobSpec(runtime="torch-h100", nodes=8, resources_per_node=Resources(gpu=8)))
runtime = Runtime(name="torch-h100", framework="torch", image="nvcr.io/nvidia/pytorch:25.01-py3",
                  resources_per_node=Resources(gpu=8, memory="1600Gi"))
nested_runtime = Runtime(metadata=Metadata(name="r"), spec=RuntimeSpec(framework=Framework.TORCH, image="i"))
""",
    "compile": """
result = trainspec.compile(TrainingJob(name="a", runtime="trainspec-torch"), project=None)
ok: bool = result.ok
text: str = result.to_yaml()
codes: list[str] = [d.code for d in trainspec.validate("examples/")]
""",
    "star_import": """
from trainspec import *
job = TrainingJob(name="a", runtime="b", checkpoint=Checkpoint(claim_name="ckpt"), data=Data(source="s3://d/"))
""",
    "planner_parts": """
from trainspec import Parallelism, TransformerModel

job = TrainingJob(name="a", runtime="b", parallelism=Parallelism(tp=8, pp=2),
                  model=TransformerModel(layers=80, hidden_size=8192, attention_heads=64, sequence_length=8192))
""",
    "attributes": """
job = TrainingJob(name="a", runtime="b", resources_per_node=Resources(memory="8Gi"))
part = job.spec.resources_per_node
if part is not None and part.memory is not None:
    k8s: int | str = part.memory.to_k8s()
""",
    # the cluster client: typed results and exceptions (never run here: a Client connects)
    "client": """
from trainspec.client import Client, ClusterError, JobState, WaitTimeout

def follow(client: Client) -> str:
    submitted = client.submit(TrainingJob(name="a", runtime="b"), dry_run=True)
    names: tuple[str, ...] = submitted.jobs
    actions = [(a.kind, a.action) for a in submitted]
    state: JobState = client.wait("a", {"Running"}, timeout=60.0)
    if state.admission is not None and not state.admission.admitted:
        reason: str = state.admission.reason
    for line in client.logs("a", node=0, follow=True):
        rank: int | None = line.rank
        text: str = line.text
    try:
        final = client.wait("a")
    except WaitTimeout as late:
        last: JobState | None = late.state
        raise
    except ClusterError as error:
        codes: list[str] = error.codes
        raise
    listed: list[JobState] = trainspec.Client(namespace="ml-dev").list(all_namespaces=True)
    return final.phase
""",
}

#: Snippets that must fail: (code, the error mypy reports, the error pyright reports).
FAILS = {
    # pyright names no parameter when no overload of a call matches (here: the flat and the document
    # form); mypy names it. On a part (one signature) both name it.
    "unknown_keyword": (
        'TrainingJob(name="a", runtime="b", nods=8)',
        (
            r'Unexpected keyword argument "nods" for overloaded function "TrainingJob"; '
            r'did you mean "nodes"\?'
        ),
        (
            r'No overloads for "__init__" match the provided arguments\n.*Argument types: '
            r"\(Literal\['a'\], Literal\['b'\], Literal\[8\]\)"
        ),
    ),
    "unknown_part_keyword": (
        "Resources(gpuu=8)",
        r'Unexpected keyword argument "gpuu" for "Resources"; did you mean "gpu"\?',
        r'No parameter named "gpuu"',
    ),
    "wrong_type": (
        'TrainingJob(name="a", runtime="b", nodes="8")',
        r'No overload variant of "TrainingJob" matches argument types "str", "str", "str"',
        (
            r'Argument of type "Literal\[.8.\]" cannot be assigned to parameter "nodes" of type '
            r'"int \| NodeRange \| None"'
        ),
    ),
    "wrong_part_type": (
        'Resources(gpu="8")',
        r'Argument "gpu" to "Resources" has incompatible type "str"; expected "int \| None"',
        r'Argument of type "Literal\[.8.\]" cannot be assigned to parameter "gpu"',
    ),
    "missing_required": (
        'TrainingJob(name="a")',
        r'No overload variant of "TrainingJob" matches argument type "str"',
        (
            r"No overloads for \"__init__\" match the provided arguments\n.*Argument types: "
            r"\(Literal\['a'\]\)"
        ),
    ),
    "missing_required_part": (
        'SecretRef(secret="hf")',
        r'Missing named argument "key" for "SecretRef"',
        r'Argument missing for parameter "key"',
    ),
    "unknown_planner_keyword": (
        "from trainspec import Parallelism\nParallelism(tpp=8)",
        r'Unexpected keyword argument "tpp" for "Parallelism"; did you mean "pp" or "tp"\?',
        r'No parameter named "tpp"',
    ),
    "positional": (
        "Resources(8)",
        r'Too many positional arguments for "Resources"',
        r"Expected 0 positional arguments",
    ),
    "client_unknown_keyword": (
        'trainspec.Client().submit("a.yaml", dryrun=True)',
        r'Unexpected keyword argument "dryrun" for "submit" of "Client"; did you mean "dry_run"\?',
        r'No parameter named "dryrun"',
    ),
    "client_wrong_type": (
        'trainspec.Client().wait("a", timeout="10m")',
        r'Argument "timeout" to "wait" of "Client" has incompatible type "str"; expected "float"',
        r'Argument of type "Literal\[.10m.\]" cannot be assigned to parameter "timeout"',
    ),
    "client_frozen_result": (
        'trainspec.Client().get("a").phase = "Complete"',
        r'Property "phase" defined in "JobState" is read-only',
        r'Cannot assign to attribute "phase" for class "JobState"\n.*Attribute "phase" is read-only',
    ),
    "frozen": (
        "Resources(gpu=8).gpu = 4",
        r'Property "gpu" defined in "Resources" is read-only',
        r'Cannot assign to attribute "gpu" for class "Resources"\n.*Attribute "gpu" is read-only',
    ),
}


def _checker(name: str) -> list[str] | None:
    """How to run a checker, or None when it is not installed (a failure under CI=true)."""
    found = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed, and CI=true requires the type tests: pip install -e '.[test]'")
        pytest.skip(f"{name} is not installed (pip install -e '.[test]' installs it)")
    return [found]


@pytest.fixture(scope="module")
def snippets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("typing")
    for name, body in PASSES.items():
        (base / f"pass_{name}.py").write_text(_HEAD + body, encoding="utf-8")
    for name, (code, _, _) in FAILS.items():
        (base / f"fail_{name}.py").write_text(_HEAD + code + "\n", encoding="utf-8")
    # pyright finds trainspec through extraPaths: an editable install's import hook is invisible to it
    (base / "pyrightconfig.json").write_text(
        json.dumps(
            {
                "extraPaths": [str(ROOT)],
                "pythonVersion": "3.11",
                "typeCheckingMode": "standard",
                "reportWildcardImportFromLibrary": "none",
            }
        ),
        encoding="utf-8",
    )
    return base


def _by_file(lines: list[tuple[str, int, str]]) -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for file, line, message in lines:
        out.setdefault(Path(file).stem, []).append((line, message))
    return out


@pytest.fixture(scope="module")
def mypy_found(snippets: Path) -> dict[str, list[tuple[int, str]]]:
    command = _checker("mypy")
    assert command is not None
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    done = subprocess.run(
        [
            *command,
            "--no-error-summary",
            "--follow-imports=silent",
            "--show-error-codes",
            "--cache-dir",
            str(snippets / ".mypy_cache"),
            "--python-version",
            "3.11",
            *sorted(str(p) for p in snippets.glob("*.py")),
        ],
        capture_output=True,
        text=True,
        cwd=snippets,
        env=env,
        check=False,
    )
    found = [(m[1], int(m[2]), m[3]) for m in re.finditer(r"^(.*?\.py):(\d+): error: (.*)$", done.stdout, re.M)]
    assert done.returncode in (0, 1) and (found or done.returncode == 0), done.stdout + done.stderr
    return _by_file(found)


@pytest.fixture(scope="module")
def pyright_found(snippets: Path) -> dict[str, list[tuple[int, str]]]:
    command = _checker("pyright")
    assert command is not None
    done = subprocess.run(
        [
            *command,
            "--outputjson",
            "-p",
            str(snippets / "pyrightconfig.json"),
            *sorted(str(p) for p in snippets.glob("*.py")),
        ],
        capture_output=True,
        text=True,
        cwd=snippets,
        check=False,
    )
    report = json.loads(done.stdout)
    return _by_file(
        [
            (d["file"], d["range"]["start"]["line"] + 1, d["message"])
            for d in report["generalDiagnostics"]
            if d["severity"] == "error"
        ]
    )


_FIRST_LINE = _HEAD.count("\n") + 1  # the snippet's own line


@pytest.mark.parametrize("name", sorted(PASSES))
def test_mypy_accepts(name: str, mypy_found: dict[str, list[tuple[int, str]]]) -> None:
    assert mypy_found.get(f"pass_{name}", []) == []


@pytest.mark.parametrize("name", sorted(PASSES))
def test_pyright_accepts(name: str, pyright_found: dict[str, list[tuple[int, str]]]) -> None:
    assert pyright_found.get(f"pass_{name}", []) == []


@pytest.mark.parametrize("name", sorted(FAILS))
def test_mypy_reports(name: str, mypy_found: dict[str, list[tuple[int, str]]]) -> None:
    errors = mypy_found.get(f"fail_{name}", [])
    expected = FAILS[name][1]
    last = _FIRST_LINE + FAILS[name][0].count("\n")  # the snippet's last line holds the mistake
    assert any(line == last and re.search(expected, message) for line, message in errors), errors


@pytest.mark.parametrize("name", sorted(FAILS))
def test_pyright_reports(name: str, pyright_found: dict[str, list[tuple[int, str]]]) -> None:
    errors = pyright_found.get(f"fail_{name}", [])
    expected = FAILS[name][2]
    last = _FIRST_LINE + FAILS[name][0].count("\n")  # the snippet's last line holds the mistake
    assert any(line == last and re.search(expected, message) for line, message in errors), errors
