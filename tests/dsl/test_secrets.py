"""Credentials never reach a manifest (TS304): a plain env value under a name that says secret,
whatever its length, and a value shaped like a known credential anywhere in a spec's strings.

Every fake credential here is built by concatenation, so a secret scanner run over the
repository finds none of them in the source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import trainspec
from tests.conftest import ROOT, run_cli
from trainspec.dsl.load.spec_sources import load_string
from trainspec.dsl.spec.semantics import looks_like_credential

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: sft, namespace: team-nlp}}
spec:
  runtime: trainspec-torch
{body}
"""
RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {{name: rt}}
spec:
  framework: torch
  image: example.com/torch:1
{body}
"""

HEX = "0123456789abcdef"
#: (what the message says, a fake credential of that shape, the prefix the message may show)
SHAPES = [
    ("an AWS access key id", "AKIA" + "Q" * 12 + "2345", "AKIA…"),
    ("an AWS access key id", "ASIA" + "Z" * 8 + "ABCD5678", "ASIA…"),
    ("a Hugging Face token", "hf_" + "Ab1" * 11, "hf_…"),
    ("a GitHub token", "ghp_" + "X9" * 18, "ghp_…"),
    ("a GitHub token", "gho_" + "Y8" * 18, "gho_…"),
    ("a GitHub token", "ghs_" + "Z7" * 18, "ghs_…"),
    ("a GitHub token", "github" + "_pat_" + "11AB" * 6 + "_" + "c" * 30, "gith…"),
    ("a Slack token", "xox" + "b-" + "1234567890-" + "abcdef" * 3, "xoxb-…"),
    ("a Slack token", "xox" + "p-" + "99" * 8, "xoxp-…"),
    ("an OpenAI-style API key", "sk-" + "proj-" + "Tq" * 20, "sk-…"),
    ("an OpenAI-style API key", "sk-" + "A1" * 20, "sk-…"),
    ("a JSON web token", "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0In0" + "." + "Sfl" * 8, "eyJ…"),
    ("a private key", "-----BEGIN " + "PRIVATE KEY-----\nMIIE" + "q" * 40, "-----BEGIN PRIVATE KEY-----…"),
    ("a private key", "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIE", "-----BEGIN RSA PRIVATE KEY-----…"),
    ("a private key", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3Bl", "-----BEGIN OPENSSH PRIVATE KEY-----…"),
    ("a private key", "-----BEGIN EC " + "PRIVATE KEY-----\nMHcC", "-----BEGIN EC PRIVATE KEY-----…"),
    (
        "a Google service-account key",
        '{"type": "service' + '_account", "project_id": "p", "private_key_id": "' + HEX + '"}',
        '"type": "service_account"…',
    ),
    ("a bearer token", "Bearer " + "abc.def-" * 4, "Bearer …"),
    ("a password in a URL", "postgres://app:" + "hunter" + "22@db:5432/x", "postgres://app:***@"),
]


def problems(text: str) -> list:
    return load_string(text)[1]


def only(found: list) -> object:
    [problem] = found
    return problem


def assert_hidden(problem: object, secret: str) -> None:
    """The diagnostic names the field, never the credential (nor a long part of it)."""
    shown = f"{problem.message} {problem.hint} {problem.path}"  # type: ignore[attr-defined]
    assert secret not in shown
    assert secret[-8:] not in shown


@pytest.mark.parametrize(("what", "secret", "prefix"), SHAPES, ids=[s[0] + " " + s[2] for s in SHAPES])
def test_every_shape_is_an_error_in_env_under_any_name(what: str, secret: str, prefix: str) -> None:
    problem = only(problems(JOB.format(body=f"  env:\n    NOTE: {secret!r}")))
    assert (problem.code, problem.path, problem.line, problem.column) == ("TS304", "spec.env.NOTE", 7, 11)
    assert problem.message == f"the value of NOTE looks like {what} ({prefix})"
    assert "secretEnv" in problem.hint
    assert_hidden(problem, secret)


WHERE = [
    ("  args: [--lr, '3e-4', {s}]", "spec.args[2]"),
    ("  command: [python, {s}]", "spec.command[1]"),
    ("  podAnnotations: {{note: {s}}}", "spec.podAnnotations.note"),
    ("  podLabels: {{token: {s}}}", "spec.podLabels.token"),
    ("  data: {{source: {s}}}", "spec.data.source"),
    ("  checkpoint: {{uri: {s}}}", "spec.checkpoint.uri"),
]


@pytest.mark.parametrize(("line", "path"), WHERE, ids=[w[1] for w in WHERE])
def test_a_shape_is_an_error_anywhere_in_a_job(line: str, path: str) -> None:
    """Located at the value itself, and the message shows only a redacted prefix."""
    secret = "hf_" + "Q7k" * 11
    if path.endswith(("source", "uri")):  # credentials in a URL
        secret = "s3://" + "trainer:" + "x" * 12 + "@bucket/data"
    body = line.format(s=secret)
    problem = only(problems(JOB.format(body=body)))
    assert (problem.code, problem.path, problem.line, problem.column) == ("TS304", path, 6, body.index(secret) + 1)
    assert_hidden(problem, secret)


def test_a_token_in_a_urls_user_is_hidden_too() -> None:
    token = "ghp_" + "T5" * 18
    url = "https://" + token + ":x-oauth-basic@github.com/org/repo"
    problem = only(problems(JOB.format(body=f"  args: [--repo, '{url}']")))
    assert problem.code == "TS304" and "https://gh…:***@" in problem.message
    assert token[:6] not in problem.message and "x-oauth-basic" not in problem.message


def test_a_shape_is_an_error_in_metadata_and_in_a_runtime() -> None:
    token = "ghp_" + "R2" * 18
    text = JOB.format(body="  queue: q").replace(
        "namespace: team-nlp}", "namespace: team-nlp, annotations: {owner-token: " + token + "}}"
    )
    problem = only(problems(text))
    assert (problem.code, problem.path, problem.line) == ("TS304", "metadata.annotations.owner-token", 3)
    for body, path in [
        (f"  env: {{NCCL_DEBUG: {token}}}", "spec.env.NCCL_DEBUG"),
        (f"  network: {{env: {{NCCL_X: {token}}}}}", "spec.network.env.NCCL_X"),
        (f"  command: [sh, -c, 'curl -H \"Authorization: token {token}\" x']", "spec.command[2]"),
    ]:
        problem = only(problems(RUNTIME.format(body=body)))
        assert (problem.code, problem.path, problem.line) == ("TS304", path, 7)
        assert_hidden(problem, token)


NAMES = [
    "DB_PASSWORD",
    "db_password",
    "MYSQL_ROOT_PASSWORD",
    "LDAP_PASSWD",
    "HF_TOKEN",
    "hub_token",
    "AWS_SESSION_TOKEN",
    "CLIENT_SECRET",
    "SECRET_KEY_BASE",
    "WANDB_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "signing_key",
    "GCP_CREDENTIALS",
    "SERVICE_CREDENTIAL",
    "MYAPIKEY",
    "OpenAiApiKey",
    "SMTP_PASS",
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("value", ["x", "hunter2", "s3cr3t-but-twenty-chars"])
def test_a_name_that_says_secret_makes_any_plain_value_an_error(name: str, value: str) -> None:
    problem = only(problems(JOB.format(body=f"  env: {{{name}: {value}}}")))
    assert (problem.code, problem.path, problem.line, problem.column) == (
        "TS304",
        f"spec.env.{name}",
        6,
        11 + len(name),
    )
    assert "notSecret" in problem.hint and "secretEnv" in problem.hint
    assert f"{len(value)} characters" in problem.message
    assert value not in problem.message.replace(f"{len(value)} characters", "") or len(value) == 1


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DB_PASSWORD", ""),  # empty: nothing to leak
        ("DB_PASSWORD", "$(DB_PASSWORD_FROM_SECRET)"),  # a reference Kubernetes expands
        ("GOOGLE_APPLICATION_CREDENTIALS", "/var/secrets/google/key.json"),  # where the secret is mounted
        ("PASSWORD_FILE", "password"),  # names about a secret: where, what, how large
        ("TOKEN_URL", "https://oauth2.example.com/token"),
        ("HF_TOKEN_PATH", "hf"),
        ("SECRET_NAME", "hf-token"),
        ("TOKEN_LIMIT", "4096"),
        ("TOKENIZERS_PARALLELISM", "false"),  # tokenizers and token counts are about text
        ("MAX_TOKENS", "8192"),
        ("ENABLE_TOKEN_AUTH", "true"),  # a setting, not a secret
        ("AWS_ACCESS_KEY_ID", "my-id"),  # the key id is not the key (an AKIA… id is a shape)
        ("DSN", "postgres://app:$(DB_PASSWORD)@db:5432/x"),  # the password is a reference
    ],
)
def test_what_is_not_a_secret_passes(name: str, value: str) -> None:
    assert problems(JOB.format(body=f"  env: {{{name}: {value!r}}}")) == []
    assert looks_like_credential(name, value) is None


def test_not_secret_lets_a_name_pass_but_never_a_shape() -> None:
    body = "  env: {SORT_KEY: user_id, TOKEN_BUDGET: '400'}\n  notSecret: [SORT_KEY, TOKEN_BUDGET]"
    assert problems(JOB.format(body=body)) == []
    aws = "AKIA" + "M" * 16
    problem = only(problems(JOB.format(body=f"  env: {{SORT_KEY: {aws}}}\n  notSecret: [SORT_KEY]")))
    assert (problem.code, problem.path) == ("TS304", "spec.env.SORT_KEY")
    assert_hidden(problem, aws)


def test_a_stale_not_secret_entry_is_an_error() -> None:
    problem = only(problems(JOB.format(body="  env: {A: b}\n  notSecret: [SORT_KEY]")))
    assert (problem.code, problem.path, problem.line, problem.column) == ("TS203", "spec.notSecret[0]", 7, 15)


def test_a_name_in_secret_env_too_is_one_finding() -> None:
    body = "  env: {HF_TOKEN: placeholder}\n  secretEnv: {HF_TOKEN: {secret: hf, key: token}}"
    assert [p.code for p in problems(JOB.format(body=body))] == ["TS302"]


W_AND_B = HEX * 2 + HEX[:8]  # 40 hex digits, the shape of a W&B API key


def test_a_wandb_key_is_an_error_under_a_wandb_name_only() -> None:
    problem = only(problems(JOB.format(body=f"  env: {{WANDB_KEY_FOR_TEAM: '{W_AND_B}'}}\n  notSecret: []")))
    assert problem.code == "TS304" and "Weights & Biases" in problem.message
    assert_hidden(problem, W_AND_B)
    assert problems(JOB.format(body=f"  env: {{GIT_COMMIT: '{W_AND_B}'}}")) == []


def test_python_specs_and_objects_get_the_same_checks() -> None:
    token = "hf_" + "P4y" * 11
    job = trainspec.TrainingJob(name="leak", namespace="ml", runtime="trainspec-torch", args=["--token", token])
    [problem] = [d for d in trainspec.validate(job, project=None) if d.code == "TS304"]
    assert problem.path == "spec.args[1]"
    assert_hidden(problem, token)
    quiet = trainspec.TrainingJob(
        name="ok", namespace="ml", runtime="trainspec-torch", env={"SORT_KEY": "id"}, not_secret=["SORT_KEY"]
    )
    assert [d for d in trainspec.validate(quiet, project=None) if d.is_error] == []


def test_compile_refuses_and_no_manifest_holds_the_value(tmp_path: Path) -> None:
    password = "p4" + "ss" + "-w0rd"
    token = "xox" + "b-" + "4242424242-" + "s3cr3t" * 3
    spec = tmp_path / "job.yaml"
    spec.write_text(JOB.format(body=f"  env: {{DB_PASSWORD: {password}}}\n  args: ['{token}']"), encoding="utf-8")
    result = trainspec.compile(str(spec), project=None)
    assert not result.ok
    assert {(d.code, d.path) for d in result.diagnostics if d.is_error} == {
        ("TS304", "spec.env.DB_PASSWORD"),
        ("TS304", "spec.args[0]"),
    }
    out = tmp_path / "deploy"
    with pytest.raises(trainspec.OutputRefused):
        result.write(out)
    assert not out.exists()
    proc = run_cli("compile", str(spec), "-o", "-", "--no-project")
    assert proc.returncode == 1
    for text in (proc.stdout, proc.stderr):
        assert password not in text and token not in text


def test_no_false_alarm_on_the_repositorys_specs() -> None:
    """Every example and built-in runtime validates as it did: no TS304 anywhere."""
    proc = run_cli("validate", "examples/", "--format", "json")
    assert proc.returncode == 0, proc.stdout
    assert "TS304" not in proc.stdout
    for path in sorted((ROOT / "trainspec" / "runtimes").glob("*.yaml")):
        assert problems(path.read_text(encoding="utf-8")) == [], path.name
