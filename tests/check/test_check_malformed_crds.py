"""CRDs from ``--crds`` are the user's files: a malformed schema node is never a traceback.

Found by mypy: ``format`` was used as a dict key without checking it is a string.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from trainspec.check import check_manifests
from trainspec.check.schema.structural import convert

_CRD = textwrap.dedent(
    """\
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.a.example.com
    spec:
      group: a.example.com
      names: {kind: Widget, plural: widgets}
      scope: Namespaced
      versions:
      - name: v1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              spec:
                type: object
                properties:
                  size: {type: integer, format: [int32]}
    """
)


def test_an_integer_format_that_is_not_a_string_sets_no_range() -> None:
    converted = convert({"type": "integer", "format": ["int32"]})
    assert "minimum" not in converted and "maximum" not in converted


def test_a_crd_with_a_list_format_checks_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "widget.yaml").write_text(_CRD, encoding="utf-8")
    widget = {"apiVersion": "a.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 2}}
    assert check_manifests([("w.yaml", widget)], [tmp_path]) == []
