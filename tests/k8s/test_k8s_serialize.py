"""The serialiser's rules and the models' dataclass behaviour."""

from __future__ import annotations

import dataclasses
import enum
import subprocess
import sys

import pytest

import trainspec.k8s as k8s
from k8s import samples
from k8s.crd_schema import REPO_ROOT
from trainspec.k8s import (
    Container,
    EnvVar,
    JAXMLPolicySource,
    JobSetSpec,
    MLPolicy,
    Network,
    ObjectMeta,
    OwnerReference,
    PodSpec,
    ResourceRequirements,
    RuntimeRef,
    SerializationError,
    TorchMLPolicySource,
    Trainer,
    XGBoostMLPolicySource,
    to_dict,
    wire_name,
)


@pytest.mark.parametrize(
    ("name", "wire"),
    [
        ("resources_per_node", "resourcesPerNode"),
        ("num_proc_per_node", "numProcPerNode"),
        ("training_runtime_spec", "trainingRuntimeSpec"),
        ("runtime_patches", "runtimePatches"),
        (
            "required_during_scheduling_ignored_during_execution",
            "requiredDuringSchedulingIgnoredDuringExecution",
        ),
        ("name", "name"),
    ],
)
def test_wire_name_is_camel_case(name: str, wire: str) -> None:
    assert wire_name(name) == wire


def test_wire_override_beats_derivation() -> None:
    assert to_dict(Network(enable_dns_hostnames=False, subdomain="tj")) == {
        "enableDNSHostnames": False,
        "subdomain": "tj",
    }


def test_none_is_omitted_and_field_order_is_kept() -> None:
    out = to_dict(Trainer(num_proc_per_node=8, image="img:1", num_nodes=2))
    assert out == {"image": "img:1", "numNodes": 2, "numProcPerNode": 8}
    assert list(out) == ["image", "numNodes", "numProcPerNode"]  # declaration order


def test_explicit_empties_are_emitted() -> None:
    assert to_dict(MLPolicy(torch=TorchMLPolicySource())) == {"torch": {}}
    assert to_dict(MLPolicy(jax=JAXMLPolicySource())) == {"jax": {}}
    assert to_dict(MLPolicy(xgboost=XGBoostMLPolicySource())) == {"xgboost": {}}
    assert to_dict(Trainer(args=[], env=[])) == {"args": [], "env": []}
    assert to_dict(ObjectMeta(labels={})) == {"labels": {}}
    assert to_dict(ObjectMeta()) == {}


def test_maps_are_sorted_and_int_quantities_stay_ints() -> None:
    resources = ResourceRequirements(
        requests={"nvidia.com/gpu": 8, "memory": "1600Gi", "cpu": "500m"},
        limits={"nvidia.com/gpu": 8, "memory": "1600Gi"},
    )
    out = to_dict(resources)
    assert out == {
        "requests": {"cpu": "500m", "memory": "1600Gi", "nvidia.com/gpu": 8},
        "limits": {"memory": "1600Gi", "nvidia.com/gpu": 8},
    }
    assert list(out["requests"]) == ["cpu", "memory", "nvidia.com/gpu"]
    assert type(out["requests"]["nvidia.com/gpu"]) is int
    meta = to_dict(ObjectMeta(name="a", labels={"z": "1", "a": "2", "m": "3"}, annotations={"b": "", "a": ""}))
    assert list(meta["labels"]) == ["a", "m", "z"]
    assert list(meta["annotations"]) == ["a", "b"]


def test_output_does_not_depend_on_map_insertion_order() -> None:
    one = PodSpec(containers=[Container(name="c")], node_selector={"a": "1", "b": "2"})
    two = PodSpec(containers=[Container(name="c")], node_selector={"b": "2", "a": "1"})
    assert repr(to_dict(one)) == repr(to_dict(two))


def test_tuples_serialise_as_lists_and_output_is_fresh() -> None:
    container = Container(name="c", command=("python", "-m", "x"))  # type: ignore[arg-type]
    out = to_dict(container)
    assert out == {"name": "c", "command": ["python", "-m", "x"]}
    args = ["a"]
    trainer = Trainer(args=args, resources_per_node=ResourceRequirements(limits={"cpu": 1}))
    out = to_dict(trainer)
    out["args"].append("b")
    out["resourcesPerNode"]["limits"]["cpu"] = 2
    assert args == ["a"] and trainer.resources_per_node.limits == {"cpu": 1}  # type: ignore[union-attr]


def test_enum_members_emit_their_value() -> None:
    class Status(str, enum.Enum):
        READY = "Ready"

    out = to_dict(OwnerReference(api_version="v1", kind=Status.READY, name="n", uid="u"))
    assert out["kind"] == "Ready" and type(out["kind"]) is str


def test_fields_named_kind_and_api_version_are_not_a_header() -> None:
    # Only class constants make a top-level header; these are ordinary fields.
    assert to_dict(RuntimeRef(name="torch")) == {"name": "torch"}
    assert to_dict(OwnerReference(api_version="v1", kind="Pod", name="p", uid="1")) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "p",
        "uid": "1",
    }


def test_top_level_header_comes_first() -> None:
    out = to_dict(samples.patched_trainjob())
    assert list(out) == ["apiVersion", "kind", "metadata", "spec"]
    assert out["apiVersion"] == "trainer.kubeflow.org/v1alpha1" and out["kind"] == "TrainJob"
    runtime = to_dict(samples.mpi_runtime())
    assert list(runtime)[:2] == ["apiVersion", "kind"] and runtime["kind"] == "TrainingRuntime"


@pytest.mark.parametrize(
    ("obj", "where"),
    [
        (Trainer(command={"python"}), ".command"),  # type: ignore[arg-type]
        (Trainer(args=["ok", None]), ".args[1]"),  # type: ignore[list-item]
        (ResourceRequirements(limits={"cpu": object()}), ".limits['cpu']"),  # type: ignore[dict-item]
        (ObjectMeta(labels={1: "x"}), ".labels"),  # type: ignore[dict-item]
        (JobSetSpec(replicated_jobs=[None]), ".replicatedJobs[0]"),  # type: ignore[list-item]
    ],
)
def test_values_without_a_wire_form_raise_with_their_path(obj: object, where: str) -> None:
    with pytest.raises(SerializationError) as info:
        to_dict(obj)
    assert str(info.value).startswith(f"{where}: ")
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("bad", [{"a": 1}, [1], "x", None, Trainer])
def test_to_dict_needs_a_model_instance(bad: object) -> None:
    with pytest.raises(SerializationError):
        to_dict(bad)


def test_models_are_frozen_and_keyword_only() -> None:
    import copy
    import pickle

    env = EnvVar(name="A", value="1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.value = "2"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del env.value  # type: ignore[misc]
    with pytest.raises(TypeError):
        EnvVar("A", "1")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"Container.__init__\(\) missing 1 required keyword-only argument: 'name'"):
        Container()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"EnvVar.__init__\(\) got an unexpected keyword argument 'vaule'"):
        EnvVar(name="A", vaule="1")  # type: ignore[call-arg]
    assert dataclasses.replace(env, value="2") == EnvVar(name="A", value="2") and env.value == "1"
    assert env.value_from is None  # a field left out reads as None
    assert dataclasses.is_dataclass(env) and [f.name for f in dataclasses.fields(env)][:2] == ["name", "value"]
    for copied in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env), copy.copy(env)):
        assert copied == env and copied is not env


def test_models_have_value_equality_hashing_and_a_compact_repr() -> None:
    assert samples.patched_trainjob() == samples.patched_trainjob()
    assert samples.patched_trainjob(1) != samples.patched_trainjob(2)
    assert EnvVar(name="A") != Container(name="A")
    assert len({EnvVar(name="A", value="1"), EnvVar(name="A", value="1")}) == 1
    with pytest.raises(TypeError):
        hash(Trainer(args=["x"]))  # lists are unhashable, as with any frozen dataclass
    assert repr(Trainer(image="i", num_nodes=2)) == "Trainer(image='i', num_nodes=2)"


def test_every_model_is_declared_as_a_frozen_kw_only_model() -> None:
    """Declared with ``model``: its own field tables (construction checks the keywords against
    them), keyword-only fields, and the frozen base's ``__setattr__``."""
    for name in k8s.__all__:
        obj = getattr(k8s, name)
        if isinstance(obj, type) and dataclasses.is_dataclass(obj):
            declared = dataclasses.fields(obj)
            assert obj.__dict__.get("__model_fields__") == {f.name for f in declared}, name
            required = {f.name for f in declared if f.default is dataclasses.MISSING}
            assert obj.__dict__.get("__model_required__") == required, name
            assert obj.__setattr__ is k8s.Model.__setattr__ and "__init__" not in obj.__dict__, name
            assert all(f.kw_only for f in declared), name
            assert issubclass(obj, k8s.Model), name
            assert obj.__doc__ and not obj.__doc__.startswith(f"{name}("), name  # own docstring


def test_package_reexports_match_submodules() -> None:
    import importlib

    for module, names in k8s._MODULES.items():
        mod = importlib.import_module(f"trainspec.k8s.{module}")
        assert sorted(mod.__all__) == sorted(names), module
        for name in names:
            assert getattr(k8s, name) is getattr(mod, name)


def test_importing_the_package_defines_no_models_yet() -> None:
    # Start-up budget: the models load on first use, not on ``import trainspec.k8s``.
    code = (
        "import sys, trainspec.k8s as k\n"
        "assert 'trainspec.k8s.core' not in sys.modules, sorted(sys.modules)\n"
        "k.TrainJob\n"
        "assert 'trainspec.k8s.core' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT)


def test_with_fields_is_dataclasses_replace_for_a_model() -> None:
    import dataclasses

    from trainspec.k8s import ObjectMeta
    from trainspec.k8s.base import field_values, with_fields

    meta = ObjectMeta(name="a", namespace="ns", labels={"x": "1"})
    changed = with_fields(meta, {"name": "b", "labels": None})
    assert changed == dataclasses.replace(meta, name="b", labels=None) and changed is not meta
    assert meta.name == "a" and meta.labels == {"x": "1"}  # the original is left as it was
    assert field_values(changed)[1] == tuple(getattr(changed, f.name) for f in dataclasses.fields(changed))
    with pytest.raises(TypeError, match="no field 'nmae'"):
        with_fields(meta, {"nmae": "b"})


def test_fields_are_written_in_field_order_whatever_order_they_were_given_in() -> None:
    """A model holds the fields it was given in the order given; the wire form follows the class."""
    given_backwards = Container(image="img", name="main", env=[EnvVar(value="1", name="A")])
    given_forwards = Container(name="main", image="img", env=[EnvVar(name="A", value="1")])
    assert list(to_dict(given_backwards)) == list(to_dict(given_forwards)) == ["name", "image", "env"]
    assert list(to_dict(given_backwards)["env"][0]) == ["name", "value"]
    assert to_dict(dataclasses.replace(given_backwards, image=None)) == {
        "name": "main",
        "env": [{"name": "A", "value": "1"}],
    }


def test_model_refuses_what_its_shared_init_cannot_honour() -> None:
    """``Model.__init__`` stores the keywords given and nothing else: a field's default must be a
    class attribute. A ``default_factory`` (or a mutable default, which dataclasses refuses
    anyway) would leave the field unset, so declaring one fails at once, not at first read."""
    from trainspec.k8s.base import Model, model

    with pytest.raises(TypeError, match="'items' has a default_factory"):

        @model
        class Listing(Model):
            items: list[str] = dataclasses.field(default_factory=list)

    @model
    class Plain(Model):
        name: str
        kind_of: str = "x"
        note: str | None = None

    assert Plain(name="a").kind_of == "x" and Plain(name="a").note is None
