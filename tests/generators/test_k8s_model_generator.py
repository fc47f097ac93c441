"""The generator of the model modules of ``trainspec.k8s`` (tools/k8s_models), on small synthetic
schemas and on its committed inputs. That its output is fresh is tests/test_generated_fresh.py's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import trainspec.k8s as k8s
from tools.k8s_models import config, generator as gen
from tools.k8s_models.schema_paths import CORE_JSON, MANUAL_JSON, GenerationError, resolve_paths, schema_at
from tools.k8s_models.vocabulary import Cls, Field, Module


def test_no_upstream_prose_is_committed() -> None:
    for path in (CORE_JSON, MANUAL_JSON):
        assert "description" not in path.read_text(encoding="utf-8"), path.name
    assert json.loads(CORE_JSON.read_text(encoding="utf-8"))["Container"]["required"] == ["name"]


def test_the_export_block_must_exist() -> None:
    with pytest.raises(GenerationError, match=r"no .* block"):
        gen.render_exports(config.MODULES, config.STATIC_EXPORTS, "nothing here\n")


def test_core_and_meta_generate_without_crds() -> None:
    files = gen.generate(None)
    assert {"core.py", "meta.py"} <= set(files)
    assert "__init__.py" not in files  # the export table needs every module


# --- the generator itself, on small synthetic schemas --------------------------------------------

_SOURCE = {
    "properties": {
        "spec": {
            "type": "object",
            "required": ["mode"],
            "properties": {
                "mode": {"type": "string", "enum": ["Fast", "Slow"]},
                "size": {"x-kubernetes-int-or-string": True, "pattern": "^[0-9]+$"},
                "port": {"x-kubernetes-int-or-string": True},
                "enableDNSName": {"type": "boolean"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
                "byName": {
                    "type": "object",
                    "additionalProperties": {"type": "object", "properties": {"n": {"type": "integer"}}},
                },
            },
        },
    },
}


def _render(fields: tuple[Any, ...], item_path: str | None = None) -> str:
    module = Module(
        name="demo",
        doc="Demo.",
        classes=(
            Cls("Demo", "A demo.", fields, path="src:spec"),
            Cls("Item", "An item.", ("n",), path=item_path),
        ),
    )
    sources = {"src": _SOURCE}
    paths = resolve_paths([module], sources)
    nodes = {c.name: schema_at(sources, paths[c.name]) for c in module.classes}
    owners = {"Demo": "demo", "Item": "demo", "Quantity": "core"}
    return gen.render_module(module, nodes, paths, owners, {})


def test_types_enums_required_and_wire_names_come_from_the_schema() -> None:
    text = _render(
        ("mode", "size", "port", "enable_dns_name", Field("items", ref="Item"), Field("by_name", ref="Item"))
    )
    assert '    mode: Literal["Fast", "Slow"]\n' in text  # required: no default
    assert "    size: Quantity | None = None\n" in text
    assert "from trainspec.k8s.core import Quantity\n" in text
    assert "    port: int | str | None = None\n" in text
    assert 'enable_dns_name: bool | None = field(default=None, metadata={"wire": "enableDNSName"})' in text
    assert "    items: list[Item] | None = None\n" in text
    assert "    by_name: dict[str, Item] | None = None\n" in text
    assert "    n: int | None = None\n" in text  # Item's path was inferred from Demo.items


def test_the_generated_code_runs_and_serialises() -> None:
    text = _render(("mode", Field("items", ref="Item"))).replace("from trainspec.k8s.core import Quantity\n", "")
    namespace: dict[str, Any] = {}
    exec(compile(text, "demo.py", "exec"), namespace)  # noqa: S102  (our own generated text)
    demo = namespace["Demo"](mode="Fast", items=[namespace["Item"](n=1)])
    assert k8s.to_dict(demo) == {"mode": "Fast", "items": [{"n": 1}]}
    with pytest.raises(TypeError):
        namespace["Demo"]()  # the schema requires mode


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (("colour",), "no property for field 'colour'"),
        (("items",), "needs a ref"),
        ((Field("mode", ref="Item"),), "ref Item on a string field"),
        ((Field("port", alias="Port"),), None),  # int-or-string: no enum is needed, alias unused
        ((Field("enable_dns_name", alias="Flag"),), "needs an enum"),
    ],
)
def test_config_and_schema_disagreements_are_errors(fields: tuple[Any, ...], message: str | None) -> None:
    if message is None:
        _render(fields, "src:spec.items[]")
        return
    with pytest.raises(GenerationError, match=message):
        _render(fields, "src:spec.items[]")


def test_a_class_without_a_schema_path_is_an_error() -> None:
    module = Module(name="demo", doc="Demo.", classes=(Cls("Orphan", "No path.", ("n",)),))
    with pytest.raises(GenerationError, match="no schema path"):
        resolve_paths([module], {"src": _SOURCE})
