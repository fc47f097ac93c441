"""Records and tuple records (trainspec.dsl.record): what a dataclass or typing.NamedTuple gave the
classes on the start-up path, without generating code at import; and the annotation resolver of
the spec models (trainspec.dsl.framework.hints), which must agree with typing.get_type_hints."""

from __future__ import annotations

import copy
import importlib
import pickle
import pkgutil
import typing
from typing import ClassVar

import pytest

import trainspec
from trainspec.dsl.framework.hints import type_hints
from trainspec.dsl.framework.modeling import Model
from trainspec.dsl.record import FrozenInstanceError, Record, TupleRecord, field, fields, replace


class Point(Record):
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list, compare=False, repr=False)
    unit: ClassVar[str] = "m"


class Point3(Point):
    z: int = 0


class Bag(Record, frozen=False):
    items: list[int] = field(default_factory=list)


class Marker(Record, eq=False):
    name: str


class Mark(TupleRecord):
    """A position."""

    line: int
    column: int = 1

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


def test_a_record_is_built_like_a_dataclass() -> None:
    p = Point(1, tags=["a"])
    assert (p.x, p.y, p.tags, Point.unit) == (1, 0, ["a"], "m")
    assert repr(p) == "Point(x=1, y=0)"
    assert Point.__match_args__ == ("x", "y", "tags")
    assert [f.name for f in fields(Point)] == ["x", "y", "tags"]
    assert Point(1).tags is not Point(1).tags  # a factory per instance
    assert Point3(1, 2, z=3) == Point3(x=1, y=2, z=3) and repr(Point3(1)) == "Point3(x=1, y=0, z=0)"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Point(), "Point() missing required argument: 'x'"),
        (lambda: Point(1, x=2), "Point() got multiple values for argument 'x'"),
        (lambda: Point(1, w=2), "Point() got an unexpected keyword argument 'w'"),
        (lambda: Point(y=1, w=2), "Point() missing required argument: 'x'"),  # as a call with no x says first
        (lambda: Point(1, 2, [], 4), "Point() takes 3 positional arguments but 4 were given"),
    ],
)
def test_wrong_arguments_are_type_errors(make: typing.Callable[[], object], message: str) -> None:
    with pytest.raises(TypeError) as error:
        make()
    assert str(error.value) == message


def test_frozen_records_compare_hash_and_refuse_assignment() -> None:
    p = Point(1, 2, ["a"])
    assert p == Point(1, 2, ["b"]) and hash(p) == hash(Point(1, 2))  # tags: compare=False
    assert p != Point3(1, 2) and Point(1) != (1, 0)
    with pytest.raises(FrozenInstanceError):
        p.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y  # type: ignore[misc]
    assert replace(p, y=7) == Point(1, 7) and p.y == 2


def test_mutable_records_are_unhashable_and_eq_false_is_identity() -> None:
    bag = Bag()
    bag.items.append(1)
    bag.items = [2]
    assert bag == Bag([2])
    with pytest.raises(TypeError):
        hash(bag)
    assert Marker("a") != Marker("a") and len({Marker("a"), Marker("a")}) == 2


def test_records_copy_and_pickle() -> None:
    p = Point3(1, 2, ["t"], z=3)
    assert pickle.loads(pickle.dumps(p)) == p and copy.deepcopy(p) == p and copy.copy(p) == p


def test_replace_hands_dataclasses_to_dataclasses() -> None:
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class D:
        a: int

    assert replace(D(1), a=2) == D(2)


def test_a_tuple_record_is_a_named_tuple() -> None:
    m = Mark(3)
    assert m == (3, 1) and isinstance(m, tuple) and str(m) == "3:1" and repr(m) == "Mark(line=3, column=1)"
    assert Mark._fields == ("line", "column") and Mark._field_defaults == {"column": 1}
    assert m._replace(column=4) == Mark(3, 4) and Mark.__doc__ == "A position."
    assert pickle.loads(pickle.dumps(m)) == m and Mark.__qualname__ == "Mark"


def test_a_tuple_record_refuses_what_named_tuple_refuses() -> None:
    with pytest.raises(TypeError):

        class Bad(TupleRecord):  # a field without a default after one with a default
            a: int = 0
            b: int

    with pytest.raises(AttributeError):

        class Worse(TupleRecord):
            a: int

            def _replace(self) -> None: ...  # type: ignore[override]


def _models() -> set[type]:
    for info in pkgutil.walk_packages(trainspec.__path__, "trainspec."):
        if not info.name.endswith("__main__") and info.name.startswith(("trainspec.dsl", "trainspec.compiler")):
            importlib.import_module(info.name)

    def below(cls: type) -> typing.Iterator[type]:
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)

    return set(below(Model))


def test_type_hints_agree_with_get_type_hints_for_every_spec_model() -> None:
    models = _models()
    assert len(models) > 20
    for cls in models:
        mine, theirs = type_hints(cls), typing.get_type_hints(cls, include_extras=True)
        assert mine == theirs and list(mine) == list(theirs), cls


class _Later(Model):
    things: list["_Thing"]  # noqa: UP037 - a quoted name inside the annotation: get_type_hints settles it


class _Thing(Model):
    name: str


def test_type_hints_hand_a_quoted_inner_name_to_get_type_hints() -> None:
    assert type_hints(_Later) == typing.get_type_hints(_Later, include_extras=True) == {"things": list[_Thing]}
