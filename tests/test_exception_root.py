"""One exception root: every exception trainspec raises to its callers is a ``trainspec.TrainspecError``.

The classes are found by introspection: every module of the package is imported and every
exception class it defines is checked, so a new one cannot be forgotten. A few are left out on
purpose, each named below with the reason.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import trainspec
from trainspec.dsl.errors import TrainspecError

#: Exception classes that are not errors raised to callers, and why.
NOT_ERRORS = {
    # control flow inside one module, never seen outside it
    "trainspec.dsl.load.python.protocol._Malformed": "internal: a malformed child result, turned into a diagnostic",
    "trainspec.dsl.load.templating._Unusable": "internal: a value a template cannot print, turned into a diagnostic",
    "trainspec.dsl.load.strict_yaml.walk._Stop": "internal: abandons the current document (TS106)",
    "trainspec.compiler.yaml_writer._Unsupported": "internal: an object left to PyYAML's dumper, never raised out",
    # signals: BaseException on purpose, so that no `except Exception` stops them
    "trainspec.stages.shard._Terminated": "a signal (SIGTERM) unwinding the stage: a BaseException by design",
    "trainspec.kfp.launch_result.Terminated": "a SystemExit (SIGTERM, the run cancelled): must pass every handler",
    "trainspec.kfp.launch_result.Timeout": "internal BaseException signal, turned into TrainJobTimeout",
}

#: Modules not imported here: running them is running the program.
NOT_IMPORTED = {"trainspec.__main__"}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(trainspec.__path__, "trainspec."):
        if info.name in NOT_IMPORTED:
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


CLASSES = _exception_classes()


@pytest.mark.parametrize("name", sorted(set(CLASSES) - set(NOT_ERRORS)))
def test_every_error_derives_from_the_root(name: str) -> None:
    assert issubclass(CLASSES[name], TrainspecError), f"{name}: add TrainspecError to its bases"


def test_the_exceptions_left_out_exist_and_are_not_errors_of_the_library() -> None:
    assert set(NOT_ERRORS) <= set(CLASSES), sorted(set(NOT_ERRORS) - set(CLASSES))
    assert not any(issubclass(CLASSES[name], TrainspecError) for name in NOT_ERRORS)


def test_the_root_is_public_and_the_other_bases_are_kept() -> None:
    assert trainspec.TrainspecError is TrainspecError and "TrainspecError" in trainspec.__all__
    assert issubclass(TrainspecError, Exception)
    assert len(CLASSES) > 30  # the walk found the package's modules
    kept = {
        "trainspec.dsl.errors.ValidationError": ValueError,
        "trainspec.client.errors.WaitTimeout": TimeoutError,
        "trainspec.client.errors.JobEnded": RuntimeError,
        "trainspec.check.request.CheckUsageError": ValueError,
        "trainspec.kfp.merge.MergeError": ValueError,
        "trainspec.dsl.record.FrozenInstanceError": AttributeError,
        "trainspec.k8s.serialize.SerializationError": TypeError,
    }
    assert [name for name, base in kept.items() if not issubclass(CLASSES[name], base)] == []
