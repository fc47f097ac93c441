"""The built-in runtime catalog: valid specs, one per file named after the runtime."""

from __future__ import annotations

from pathlib import Path

from trainspec.runtimes import CATALOG_DIR, builtin_names, builtin_runtime, builtin_runtimes


def test_each_file_holds_the_runtime_it_is_named_after() -> None:
    assert builtin_names() == ("trainspec-deepspeed", "trainspec-jax", "trainspec-mpi", "trainspec-torch")
    for name in builtin_names():
        runtime = builtin_runtime(name)
        assert runtime is not None and runtime.name == name
        assert runtime.file == f"<built-in>/{name}.yaml"
        assert (Path(CATALOG_DIR) / f"{name}.yaml").is_file()


def test_every_builtin_can_shard_and_restarts() -> None:
    for runtime in builtin_runtimes():
        spec = runtime.spec.spec
        assert spec.data_sharding is not None and spec.restarts is not None and spec.shared_memory is not None


def test_unknown_names_are_not_builtins() -> None:
    assert builtin_runtime("trainspec-torh") is None
    assert builtin_runtime("torch-distributed") is None  # Kubeflow Trainer's: external, never built in
