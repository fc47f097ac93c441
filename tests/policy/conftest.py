"""The policy tests run the CLI in-process, like the diff tests."""

from tests.diff.conftest import run_cli  # noqa: F401  (the shared fixture)
