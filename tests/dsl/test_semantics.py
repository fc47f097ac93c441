"""Credential detection in plain env values: catches real shapes, leaves ordinary values alone."""

from __future__ import annotations

import pytest

from trainspec.dsl.spec.semantics import looks_like_credential


@pytest.mark.parametrize(
    ("name", "value", "what"),
    [
        ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
        ("TOKEN_FOR_HUB", "hf_" + "a1B2" * 9, "a Hugging Face token"),
        ("GH", "ghp_" + "x" * 36, "a GitHub token"),
        ("OPENAI", "sk-" + "A" * 40, "an OpenAI-style API key"),
        ("AUTH", "Bearer " + "abc.def-" * 4, "a bearer token"),
        ("KEY", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc", "a private key"),
        ("DSN", "postgres://app:hunter22@db:5432/x", "a password in a URL"),
        ("JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3In0.SflKxwRJSMeKKF2QT4fwpMeJf36", "a JSON web token"),
        ("DB_PASSWORD", "s3cr3tP4ssw0rdValue", "a secret (the name DB_PASSWORD says so)"),
    ],
)
def test_credentials_are_recognised(name: str, value: str, what: str) -> None:
    assert looks_like_credential(name, value) == what


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("WANDB_PROJECT", "llama-sft"),
        ("NCCL_IB_HCA", "mlx5"),
        ("HF_HOME", "/cache/hf"),
        ("MODEL", "meta-llama/Llama-3.1-70B"),
        ("ENDPOINT", "https://s3.example.com/bucket"),
        ("TOKENIZERS_PARALLELISM", "false"),
        ("PASSWORD_FILE", "/var/run/secrets/db/password"),
        ("LR", "3e-4"),
        ("TOKEN_LIMIT", "4096"),
    ],
)
def test_ordinary_values_pass(name: str, value: str) -> None:
    assert looks_like_credential(name, value) is None
