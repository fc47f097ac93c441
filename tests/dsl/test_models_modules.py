"""``trainspec.dsl.models`` stays the one import of the spec contract while its parts live in small
modules (``parts``, ``runtime_spec``, ``job_spec``): every name it exported is still there, the
same object, and exported explicitly, as type checkers in strict mode need it."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from trainspec.dsl.framework.modeling import Model
from trainspec.dsl.spec import models

DSL = Path(models.__file__).resolve().parent

#: Everything ``trainspec.dsl.models`` exported from the package before its parts moved out
#: (the typing helpers it imports are not part of the contract).
EXPORTED = (
    "API_GROUP",
    "API_VERSION",
    "INT64_MAX",
    "KINDS",
    "MAX_GPUS_PER_NODE",
    "MAX_KEEP",
    "MAX_NODES",
    "MAX_PROCS_PER_NODE",
    "MAX_RESTARTS",
    "MAX_USER_ID",
    "MPI_SSH_AUTH_MOUNT_PATH",
    "SEED_MAX",
    "AbsolutePath",
    "Accelerator",
    "AccessMode",
    "Assignment",
    "AutoOrQuantity",
    "Bandwidth",
    "Checkpoint",
    "CheckpointWriter",
    "Count",
    "CpuQuantity",
    "DType",
    "Data",
    "DataFormat",
    "DataSharding",
    "DataSourceUri",
    "Duration",
    "Engine",
    "EnvName",
    "Framework",
    "Gang",
    "Image",
    "JobObservability",
    "LabelKey",
    "LabelValue",
    "Metadata",
    "Model",
    "ModelSize",
    "Mpi",
    "Name",
    "NamespaceName",
    "Network",
    "NodeRange",
    "ObjectName",
    "ObjectStoreUri",
    "Optimizer",
    "Parallelism",
    "ParamCount",
    "Quantity",
    "ResourceQuantity",
    "Resources",
    "RaySettings",
    "Restarts",
    "RunPolicy",
    "Runtime",
    "RuntimeObservability",
    "RuntimeSpec",
    "Scheduling",
    "Scope",
    "SecretRef",
    "ShardBalance",
    "ShardBy",
    "ShardChecksum",
    "ShardMode",
    "Spec",
    "StrictBool",
    "TaintEffect",
    "Toleration",
    "TolerationOperator",
    "Topology",
    "TopologyMode",
    "TrainingJob",
    "TrainingJobSpec",
    "TransformerModel",
    "VolumeSize",
    "fail",
    "field",
)
#: Private names other modules of the package import from ``models``.
PRIVATE = ("_Model", "_Flat", "_nest")

SPEC_MODULES = ("models", "parts", "runtime_spec", "job_spec")


@pytest.mark.parametrize("name", EXPORTED)
def test_every_name_is_still_importable_from_models(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from trainspec.dsl.models import {name}", namespace)  # noqa: S102 (the import users write)
    assert namespace[name] is getattr(models, name)


@pytest.mark.parametrize("name", PRIVATE)
def test_the_private_helpers_stay_in_the_spec_language(name: str) -> None:
    """The private bases are the spec language's own (the public path re-exports only ``__all__``)."""
    namespace: dict[str, object] = {}
    exec(f"from trainspec.dsl.spec.models import {name}", namespace)  # noqa: S102 (an import statement)
    assert namespace[name] is getattr(models, name)


def test_every_public_name_is_exported_explicitly() -> None:
    """mypy --strict and pyright (py.typed) see a re-export only through ``__all__`` or ``import X as X``."""
    assert sorted(models.__all__) == sorted(EXPORTED)
    imported = {
        alias.asname
        for node in ast.parse(Path(models.__file__).read_text(encoding="utf-8")).body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname == alias.name
    }
    assert imported == {"_Model"}  # dsl.spec.project builds on it


def test_a_star_import_gives_the_spec_api() -> None:
    namespace: dict[str, object] = {}
    exec("from trainspec.dsl.models import *", namespace)  # noqa: S102 (a star import is a statement)
    assert set(EXPORTED) <= set(namespace)


def test_each_part_is_defined_once_and_re_exported_as_the_same_class() -> None:
    homes: dict[str, str] = {}
    for stem in SPEC_MODULES:
        module = importlib.import_module(f"trainspec.dsl.spec.{stem}")
        for name, value in vars(module).items():
            if isinstance(value, type) and value.__module__ == module.__name__:
                assert name not in homes, f"{name} is defined in {homes.get(name)} and {stem}"
                homes[name] = stem
                assert getattr(models, name) is value
    assert {name for name, stem in homes.items() if stem == "models"} == {"_Flat", "Runtime", "TrainingJob"}
    # every spec class of the contract is among them
    spec_classes = {
        n
        for n in EXPORTED
        if isinstance(getattr(models, n), type)
        and issubclass(getattr(models, n), Model)
        and getattr(models, n).__module__.startswith("trainspec.dsl.")
        and n != "Model"
    }
    assert spec_classes - set(homes) == {"TransformerModel", "Parallelism", "JobObservability", "RuntimeObservability"}


def test_the_spec_model_modules_stay_small() -> None:
    """Small modules, each cohesive: the contract was one 683-line module before."""
    for path in sorted(DSL.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if any(base in text for base in ("(_Model)", "(_Flat)", "(Model)")):
            assert len(text.splitlines()) < 400, f"{path.name} has {len(text.splitlines())} lines"


def test_the_parts_modules_import_no_kind() -> None:
    """The parts never import ``models`` (the kinds import the parts, not the other way round)."""
    for stem in SPEC_MODULES[1:]:
        tree = ast.parse((DSL / f"{stem}.py").read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "trainspec.dsl.spec.models" not in imported, stem


def test_the_public_models_path_is_the_spec_language() -> None:
    """``from trainspec.dsl.models import X`` (the README's documented form) gives the very objects the
    spec language defines, every exported name of it."""
    import trainspec.dsl.models as public
    from trainspec.dsl.spec import models as spec_models

    assert public.__all__ == spec_models.__all__ and len(public.__all__) > 20
    assert all(getattr(public, name) is getattr(spec_models, name) for name in spec_models.__all__)
