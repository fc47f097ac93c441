"""The CRD data shipped in the package, and how the registry reads it.

``trainspec/check/schema/data/`` holds the CRDs of the default target (see ``index.json`` and
``tools/crd_data.py``, which derives them from the real CRDs): one compact JSON CRD document a file,
keys sorted, no descriptions. :class:`~.crds.CrdRegistry` reads them like any CRD file; two
hooks make that cheap: :func:`scan_json_header` finds the group and kind of such a file
without parsing it (so only the CRDs a check needs are ever parsed), and
:func:`load_json_documents` parses JSON with :mod:`json` instead of the YAML loader.

:func:`shipped_for` picks the bundles that match a target: the data of Trainer 2.3 must not
judge a TrainJob written for Trainer 2.1. Importing this module is cheap (standard library).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).with_name("data")
INDEX = "index.json"
FORMAT = 1

# The generator writes sorted keys without spaces, so a vendored CRD starts exactly like this;
# ``names`` holds strings and lists of strings only, never a nested object.
_HEADER = re.compile(
    r'\{"apiVersion":"apiextensions\.k8s\.io/v1","kind":"CustomResourceDefinition",'
    r'"metadata":\{[^{}]*\},"spec":\{"group":"([a-z0-9.-]+)","names":\{([^{}]*)\}'
)
_KIND = re.compile(r'"kind":"([A-Za-z0-9]+)"')


def scan_json_header(text: str) -> tuple[str, str] | None:
    """(group, kind) of a CRD file in the shipped JSON form, or None (then it is parsed at once)."""
    match = _HEADER.match(text)
    if match is None:
        return None
    kind = _KIND.search(match.group(2))
    return (match.group(1), kind.group(1)) if kind else None


def load_json_documents(text: str) -> list[Any] | None:
    """The documents of a ``.json`` CRD file: one JSON value (a CRD or a ``List``), or None when the
    text is not JSON (a YAML file named ``.json``: the caller falls back to the YAML loader)."""
    try:
        return [json.loads(text)]
    except ValueError:
        return None


@dataclass(frozen=True)
class Bundle:
    """One shipped set of CRDs (``Kubeflow Trainer 2.3``) and the target version it is for."""

    name: str
    product: str
    version: str
    target: dict[str, str] = field(hash=False, compare=False)
    groups: frozenset[str] = frozenset()
    files: tuple[Path, ...] = field(default=(), repr=False)

    def __str__(self) -> str:
        return f"{self.product} {self.version}"

    def matches(self, target: Any) -> bool:
        """Whether ``target`` (a :class:`~trainspec.compiler.targets.Target`) has this bundle's version."""
        for name, version in self.target.items():
            wanted = getattr(target, name, None)
            if wanted is None or f"{wanted[0]}.{wanted[1]}" != version:
                return False
        return True


_INDEXES: dict[tuple[str, int, int], Any] = {}


def read_index(data_dir: Path = DATA_DIR) -> Any:
    """``index.json`` of ``data_dir``, parsed (read once a process while the file is unchanged:
    the bundles and the sources' digests both come from it). Raises OSError or ValueError."""
    path = data_dir / INDEX
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _INDEXES:
        _INDEXES[key] = json.loads(path.read_text(encoding="utf-8"))
    return _INDEXES[key]


def bundles(data_dir: Path = DATA_DIR) -> list[Bundle]:
    """The shipped bundles as ``index.json`` lists them; ``[]`` when the data is missing or damaged
    (the check then runs without CRDs, as it did before data was shipped)."""
    try:
        index = read_index(data_dir)
        if index.get("format") != FORMAT:
            return []
        return [
            Bundle(
                name=str(b["name"]),
                product=str(b["product"]),
                version=str(b["version"]),
                target={str(k): str(v) for k, v in b["target"].items()},
                groups=frozenset(str(c["group"]) for c in b["crds"]),
                files=tuple(data_dir / str(c["file"]) for c in b["crds"]),
            )
            for b in index["bundles"]
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def shipped_for(target: Any, data_dir: Path = DATA_DIR) -> tuple[list[Bundle], list[Bundle]]:
    """(bundles for ``target``, bundles shipped for another version than the target's)."""
    found = bundles(data_dir)
    return [b for b in found if b.matches(target)], [b for b in found if not b.matches(target)]


def describe(found: list[Bundle]) -> str:
    """``Kubeflow Trainer 2.3, JobSet 0.12, Kueue 0.19`` for messages and ``--help``."""
    return ", ".join(str(b) for b in found) or "none"
