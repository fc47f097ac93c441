"""An offline wheelhouse made from this environment's installed distributions.

The packaging and pre-commit tests install trainspec the way a user does, with pip resolving its
dependencies, but tests never reach a package index. So each installed distribution a requirement
needs (its markers evaluated for this interpreter, its extras followed) is packed back into a wheel:
its files as its RECORD lists them, its own ``WHEEL`` tag, a fresh RECORD. ``pip install --no-index
--find-links HOUSE`` then resolves from these wheels alone, and a requirement this environment does
not satisfy fails loudly instead of being fetched.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: dist-info files of an installation, not of the wheel it came from.
_INSTALL_ONLY = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def closure(requirements: Iterable[str]) -> dict[str, metadata.Distribution]:
    """The installed distributions ``requirements`` need, transitively, by canonical name."""
    found: dict[str, metadata.Distribution] = {}
    visited: set[tuple[str, str]] = set()
    pending = [(Requirement(text), "") for text in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        dist = found.get(name) or metadata.distribution(requirement.name)
        if not requirement.specifier.contains(dist.version, prereleases=True):
            raise AssertionError(f"{requirement} is not satisfied here: {dist.metadata['Name']} {dist.version}")
        found[name] = dist
        for wanted in ("", *sorted(requirement.extras)):
            if (name, wanted) not in visited:
                visited.add((name, wanted))
                pending += [(Requirement(text), wanted) for text in dist.requires or []]
    return found


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack(dist: metadata.Distribution, house: Path) -> Path:
    """Write ``dist`` (an installed distribution) into ``house`` as the wheel it was installed from."""
    files = dist.files
    wheel_info = dist.read_text("WHEEL")
    if files is None or wheel_info is None:
        raise AssertionError(f"{dist.metadata['Name']} was not installed from a wheel (no RECORD or WHEEL)")
    tag = next(line.split(":", 1)[1].strip() for line in wheel_info.splitlines() if line.startswith("Tag:"))
    name = canonicalize_name(dist.metadata["Name"]).replace("-", "_")
    target = house / f"{name}-{dist.version}-{tag}.whl"
    record: list[str] = []
    info_dir = ""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as wheel:
        for file in files:
            parts = file.parts
            # Scripts (../../bin) are regenerated from entry_points.txt; caches are the installer's.
            if parts[0] == ".." or "__pycache__" in parts or file.suffix == ".pyc":
                continue
            if parts[0].endswith(".dist-info"):
                info_dir = parts[0]
                if parts[-1] in _INSTALL_ONLY and len(parts) == 2:
                    continue
            data = Path(str(dist.locate_file(file))).read_bytes()
            wheel.writestr(file.as_posix(), data)
            record.append(f"{file.as_posix()},{_digest(data)},{len(data)}")
        record.append(f"{info_dir}/RECORD,,")
        wheel.writestr(f"{info_dir}/RECORD", "\n".join(record) + "\n")
    return target


def build_wheelhouse(house: Path, requirements: Iterable[str]) -> Path:
    """``house`` holding a wheel of every installed distribution ``requirements`` need."""
    house.mkdir(parents=True, exist_ok=True)
    for dist in closure(requirements).values():
        repack(dist, house)
    return house
