"""The validation layer under the spec models (trainspec.dsl.framework.modeling), on small models of its own."""

from __future__ import annotations

import enum
import pickle
import subprocess
import sys
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Literal, Optional, Union  # noqa: F401 (Union: in the annotations exec() builds)

import pytest

from trainspec.dsl.framework.modeling import STRICT, Invalid, Model, ValidationError, field, to_camel


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclass(frozen=True)
class Size:
    """A value type: parses itself, dumps itself."""

    bytes: int

    @classmethod
    def __validate__(cls, raw: Any) -> Size:
        if isinstance(raw, str) and raw.endswith("k") and raw[:-1].isdigit():
            return cls(int(raw[:-1]) * 1000)
        raise Invalid("ts_size", f"{raw!r} is not a size")

    def __json__(self) -> str:
        return f"{self.bytes // 1000}k"


class _Upper:
    """An Annotated marker with a validator function."""

    def __validate__(self, raw: Any) -> str:
        if isinstance(raw, str) and raw.isupper():
            return raw
        raise Invalid("ts_upper", "must be upper case", {"reason": "must be upper case"})


Upper = Annotated[str, _Upper()]


class Part(Model):
    label: str = field(min_length=1, max_length=5, description="A label.")
    # typing.Optional, as code written before 3.10 spells it: the layer reads both forms.
    weight: Optional[float] = field(default=None, ge=0, le=10)  # noqa: UP045


class Thing(Model):
    name: str
    max_count: Annotated[int, STRICT] = field(default=1, ge=1, le=100)
    enabled: bool = field(default=False)
    exact: Annotated[bool, STRICT] = field(default=True)
    color: Color = field(default=Color.RED)
    kind: Literal["Thing"] = "Thing"
    version: str | None = field(default=None, pattern=r"^\d+\.\d+$")
    tags: list[str] = field(default_factory=list)
    parts: dict[Upper, Part] = field(default_factory=dict)
    size: Size | None = None
    main_part: Part | None = None
    code: Upper = field(default="A", yaml_name="theCode")

    def _check(self) -> None:
        if self.main_part is not None and self.main_part.label in self.parts:
            raise Invalid("ts_value", "mainPart repeats a part", {"reason": "mainPart repeats a part"})


def errors_of(data: Any, model: type[Model] = Thing) -> list[tuple[str, tuple, str]]:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    return [(e["type"], e["loc"], e["msg"]) for e in info.value.errors()]


def test_to_camel() -> None:
    assert to_camel("resources_per_node") == "resourcesPerNode"
    assert to_camel("max") == "max"


def test_field_tables_are_built_on_first_use_only() -> None:
    class Late(Model):
        value: int = 0

    assert "_field_table" not in Late.__dict__
    assert Late.model_validate({"value": 2}).value == 2
    assert "_field_table" in Late.__dict__


def test_importing_the_spec_models_builds_nothing_and_needs_no_third_party_module() -> None:
    code = (
        "import sys, trainspec.dsl.spec.models as m, trainspec.dsl.spec.project as p\n"
        "from trainspec.dsl.framework.modeling import Model\n"
        "built = [c.__name__ for mod in (m, p) for c in vars(mod).values()\n"
        "         if isinstance(c, type) and issubclass(c, Model) and '_field_table' in c.__dict__]\n"
        "print(built, 'pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] False"


def test_yaml_names_and_python_names_both_work() -> None:
    a = Thing.model_validate({"name": "a", "maxCount": 3, "theCode": "B"})
    b = Thing(name="a", max_count=3, code="B")
    assert a == b and a.max_count == 3 and a.code == "B"
    assert a.model_fields_set == {"name", "max_count", "code"}


def test_the_alias_wins_and_the_other_spelling_is_unknown() -> None:
    assert errors_of({"name": "a", "maxCount": 3, "max_count": 4}) == [
        ("unknown_field", ("max_count",), "'max_count' repeats 'maxCount': give the field once")
    ]


def test_every_error_is_reported_in_field_order_then_unknown_keys() -> None:
    errors = errors_of({"zz": 1, "maxCount": 0, "color": "blue", "tags": "x", "aa": 2})
    assert errors == [
        ("required", ("name",), "Field required"),
        ("greater_than_equal", ("maxCount",), "Input should be greater than or equal to 1"),
        ("enum", ("color",), "Input should be 'red' or 'green'"),
        ("list_type", ("tags",), "Input should be a valid list"),
        ("unknown_field", ("zz",), "unknown field 'zz'"),
        ("unknown_field", ("aa",), "unknown field 'aa'"),
    ]


def test_error_dicts_carry_input_and_context() -> None:
    with pytest.raises(ValidationError) as info:
        Thing.model_validate({"name": "a", "max_count": 101, "kind": "Other"})
    first, second = info.value.errors()
    assert first == {
        "type": "less_than_equal",
        "loc": ("max_count",),
        "msg": "Input should be less than or equal to 100",
        "input": 101,
        "ctx": {"le": 100},
    }
    assert second["ctx"] == {"expected": "'Thing'"} and second["input"] == "Other"
    with pytest.raises(ValidationError) as info:
        Thing.model_validate({"main_part": {}})
    missing = info.value.errors()[0]
    assert missing["loc"] == ("name",) and missing["input"] == {"main_part": {}}


@pytest.mark.parametrize("bad", [True, 2.0, "2", None])
def test_ints_are_strict(bad: Any) -> None:
    assert errors_of({"name": "a", "maxCount": bad}) == [("int_type", ("maxCount",), "Input should be a valid integer")]


@pytest.mark.parametrize(("raw", "value"), [(True, True), ("yes", True), ("Off", False), (1, True), (0.0, False)])
def test_plain_bools_are_lax(raw: Any, value: bool) -> None:
    assert Thing(name="a", enabled=raw).enabled is value


@pytest.mark.parametrize(
    ("raw", "error"), [("maybe", "bool_parsing"), (2, "bool_parsing"), (1.5, "bool_type"), (None, "bool_type")]
)
def test_plain_bools_reject_other_values(raw: Any, error: str) -> None:
    assert errors_of({"name": "a", "enabled": raw})[0][0] == error


def test_strict_bools_take_only_booleans() -> None:
    assert errors_of({"name": "a", "exact": "true"}) == [("bool_type", ("exact",), "Input should be a valid boolean")]


def test_floats_take_numbers_and_numeric_strings() -> None:
    assert Part(label="a", weight=2).weight == 2.0 and isinstance(Part(label="a", weight=2).weight, float)
    assert Part(label="a", weight="2.5").weight == 2.5
    with pytest.raises(ValidationError) as info:
        Part.model_validate({"label": "a", "weight": "heavy"})
    assert info.value.errors()[0]["type"] == "float_parsing"
    with pytest.raises(ValidationError) as info:
        Part.model_validate({"label": "a", "weight": float("nan")})
    assert info.value.errors()[0]["ctx"] == {"le": 10.0}


def test_string_constraints() -> None:
    assert errors_of({"label": ""}, Part) == [
        ("string_too_short", ("label",), "String should have at least 1 character")
    ]
    assert errors_of({"label": "abcdef"}, Part)[0][:2] == ("string_too_long", ("label",))
    assert Thing(name="a", version="2.3").version == "2.3"
    assert errors_of({"name": "a", "version": "2.3\n"})[0][0] == "string_pattern_mismatch"
    assert errors_of({"name": 3})[0][0] == "string_type"


def test_enums_by_value_or_member_and_literals() -> None:
    assert Thing(name="a", color="green").color is Color.GREEN
    assert Thing(name="a", color=Color.GREEN).color is Color.GREEN
    assert errors_of({"name": "a", "kind": "thing"}) == [("literal_error", ("kind",), "Input should be 'Thing'")]


def test_lists_and_dicts() -> None:
    assert Thing(name="a", tags=("x", "y")).tags == ["x", "y"]
    assert errors_of({"name": "a", "tags": ["x", 1]}) == [
        ("string_type", ("tags", 1), "Input should be a valid string")
    ]
    assert errors_of({"name": "a", "parts": {"low": 1}}) == [
        ("ts_upper", ("parts", "low", "[key]"), "must be upper case"),
        ("model_type", ("parts", "low"), "Input should be a valid dictionary or instance of Part"),
    ]
    thing = Thing.model_validate(MappingProxyType({"name": "a", "parts": MappingProxyType({"P": {"label": "p"}})}))
    assert thing.parts == {"P": Part(label="p")}
    assert errors_of({"name": "a", "parts": []})[0][:2] == ("dict_type", ("parts",))


def test_nested_models_take_instances_as_they_are() -> None:
    part = Part(label="p")
    assert Thing(name="a", main_part=part).main_part is part
    assert Part.model_validate(part) is part
    assert errors_of({"name": "a", "mainPart": {"label": "p", "weight": -1}}) == [
        ("greater_than_equal", ("mainPart", "weight"), "Input should be greater than or equal to 0")
    ]
    assert errors_of(None) == [("model_type", (), "Input should be a valid dictionary or instance of Thing")]


def test_value_types_parse_and_dump_themselves() -> None:
    thing = Thing(name="a", size="2k")
    assert thing.size == Size(2000)
    assert thing.model_dump(mode="json")["size"] == "2k"
    assert thing.model_dump()["size"] == Size(2000)
    assert errors_of({"name": "a", "size": 5}) == [("ts_size", ("size",), "5 is not a size")]


def test_model_checks_run_once_the_fields_are_valid_and_point_at_the_model() -> None:
    data = {"name": "a", "parts": {"P": {"label": "p"}}, "mainPart": {"label": "P"}}
    with pytest.raises(ValidationError) as info:
        Thing.model_validate(data)
    (error,) = info.value.errors()
    assert error == {
        "type": "ts_value",
        "loc": (),
        "msg": "mainPart repeats a part",
        "input": data,
        "ctx": {"reason": "mainPart repeats a part"},
    }
    # With a field error the check does not run: one error, about the field.
    assert errors_of({**data, "maxCount": 0}) == [
        ("greater_than_equal", ("maxCount",), "Input should be greater than or equal to 1")
    ]


def test_instances_are_frozen() -> None:
    thing = Thing(name="a")
    with pytest.raises(ValidationError) as info:
        thing.name = "b"  # type: ignore[misc]
    assert info.value.errors()[0]["type"] == "frozen_instance"
    with pytest.raises(ValidationError):
        del thing.name
    assert thing.name == "a"


def test_equality_hash_and_repr() -> None:
    assert Part(label="p") == Part.model_validate({"label": "p"}) != Part(label="q")
    assert Part(label="p") != Thing(name="p")
    assert hash(Part(label="p")) == hash(Part(label="p"))
    assert repr(Part(label="p", weight=1)) == "Part(label='p', weight=1.0)"


def test_defaults_are_fresh_per_instance() -> None:
    a, b = Thing(name="a"), Thing(name="b")
    assert a.tags == [] and a.tags is not b.tags
    assert a.model_fields_set == {"name"}


def test_model_copy_updates_without_validating() -> None:
    thing = Thing(name="a")
    copy = thing.model_copy(update={"max_count": 7})
    assert copy.max_count == 7 and thing.max_count == 1
    assert copy.model_fields_set == {"name", "max_count"}
    with pytest.raises(TypeError, match="no field bogus"):
        thing.model_copy(update={"bogus": 1})


def test_model_dump() -> None:
    thing = Thing(name="a", main_part=Part(label="p"), color="green")
    assert thing.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "name": "a",
        "maxCount": 1,
        "enabled": False,
        "exact": True,
        "color": "green",
        "kind": "Thing",
        "tags": [],
        "parts": {},
        "mainPart": {"label": "p"},
        "theCode": "A",
    }
    assert thing.model_dump()["color"] is Color.GREEN
    assert thing.model_dump(exclude_defaults=True) == {"name": "a", "color": Color.GREEN, "main_part": {"label": "p"}}


def test_model_fields_describe_the_fields() -> None:
    fields = Thing.model_fields
    assert list(fields)[:3] == ["name", "max_count", "enabled"]
    assert fields["code"].alias == "theCode" and fields["max_count"].alias == "maxCount"
    assert fields["name"].required and not fields["tags"].required
    assert Part.model_fields["label"].description == "A label."


def test_the_error_message_lists_every_problem() -> None:
    with pytest.raises(ValidationError) as info:
        Thing(max_count=0, zz=1)
    text = str(info.value)
    assert text.startswith("3 validation errors for Thing\n")
    assert "  max_count: Input should be greater than or equal to 1 (got 0)" in text
    assert isinstance(info.value, ValueError) and info.value.error_count() == 3
    again = pickle.loads(pickle.dumps(info.value))
    assert again.errors() == info.value.errors() and str(again) == text


@pytest.mark.parametrize("annotation", ["Union[int, str]", "Optional[Union[int, str]]", "set[int]", "object"])
def test_unsupported_annotations_fail_on_first_use(annotation: str) -> None:
    namespace = {"Model": Model, "__name__": __name__}  # annotations resolve in this module
    exec(f"class Odd(Model):\n    value: {annotation} = None\n", namespace)  # noqa: S102 (a class as a module declares it)
    with pytest.raises(TypeError, match="unsupported"):
        namespace["Odd"].model_validate({})


def test_misplaced_constraints_and_clashing_names_fail_on_first_use() -> None:
    class Odd(Model):
        color: Color = field(default=Color.RED, ge=1)

    with pytest.raises(TypeError, match="takes no ge"):
        Odd.model_validate({})

    class Base(Model):
        @property
        def name(self) -> str:
            return "x"

    class Clash(Base):
        name: str

    with pytest.raises(TypeError, match="clashes"):
        Clash.model_validate({"name": "a"})
