"""Regenerate every file of the package that a generator writes, or check that none is stale.

    python -m tools.regenerate                # rewrite what is stale
    python -m tools.regenerate --check        # write nothing; exit 1 when anything is stale
    python -m tools.regenerate --crds DIR     # the CRDs are elsewhere than ../shared/crds
    python -m tools.regenerate --offline      # only what needs no CRDs

The steps, in order (a later step reads what an earlier one wrote):

1. the JSON Schemas of the spec language (``trainspec/schemas/*.json``), from the spec models;
2. ``tools/k8s_models/core.json``, the core sub-trees of the Kubernetes API cut from the CRDs;
3. the typed model modules of ``trainspec.k8s`` and its lazy export table (without CRDs: only the
   modules that come from the committed descriptions, ``core`` and ``meta``);
4. the CRD data ``trainspec check`` ships (``trainspec/check/schema/data/``).

Exit status: 0 when everything is (now) fresh, 1 when ``--check`` found a stale file, 2 when a
generator failed or the CRDs are missing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tools import crd_data, json_schemas
from tools.k8s_models import generator
from tools.k8s_models.schema_paths import CORE_JSON, GenerationError

__all__ = ["CRDS", "ROOT", "STEPS", "Step", "main", "run"]

ROOT = Path(__file__).resolve().parents[1]
#: Where the real CRDs are by default: a ``shared`` folder beside the repository.
CRDS = ROOT.parent / "shared" / "crds"

Files = Mapping[str, str]


def _differ(files: Files, out: Path) -> list[str]:
    return [name for name, text in files.items() if not _same(out / name, text)]


def _same(path: Path, text: str) -> bool:
    return path.is_file() and path.read_text(encoding="utf-8") == text


def _write(files: Files, out: Path) -> list[str]:
    changed = _differ(files, out)
    for name in changed:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(files[name], encoding="utf-8")
    return changed


def _crd_data_stale(files: Files, out: Path) -> list[str]:
    # Beyond what the generator itself wrote before (crd_data.stale): every JSON file in the data
    # folder is shipped, so one the generator does not make is stale too (delete it by hand).
    extra = sorted(p.name for p in out.glob("*.json") if p.name not in files)
    return sorted(set(crd_data.stale(files, out)) | set(extra))


@dataclass(frozen=True)
class Step:
    """One generator: what it makes (file name relative to ``out`` -> text), from the CRDs or not."""

    name: str
    out: Path
    make: Callable[[Path | None], dict[str, str]]
    #: Without CRDs the step is skipped (a step that does not need them may still use them).
    needs_crds: bool = False
    stale: Callable[[Files, Path], list[str]] = _differ
    write: Callable[[Files, Path], list[str]] = _write


def _schemas(crds: Path | None) -> dict[str, str]:
    return json_schemas.generate()


def _core_json(crds: Path | None) -> dict[str, str]:
    assert crds is not None  # needs_crds
    return {CORE_JSON.name: generator.derive_core(crds)}


def _crd_data(crds: Path | None) -> dict[str, str]:
    assert crds is not None  # needs_crds
    return crd_data.generate(crds)


STEPS: tuple[Step, ...] = (
    Step("JSON Schemas", json_schemas.SCHEMA_DIR, _schemas),
    Step("core schemas of the Kubernetes models", CORE_JSON.parent, _core_json, needs_crds=True),
    Step("Kubernetes models", generator.K8S, generator.generate),
    Step("CRD data", crd_data.DATA_DIR, _crd_data, needs_crds=True, stale=_crd_data_stale, write=crd_data.write),
)


def run(crds: Path | None, *, check: bool, steps: Sequence[Step] = STEPS) -> list[Path]:
    """Run ``steps`` (without ``crds``: those that need none). Returns the stale files (``check``)
    or the files written. Raises the generators' errors (GenerationError, VendorError, OSError)."""
    touched: list[Path] = []
    for step in steps:
        if step.needs_crds and crds is None:
            continue
        files = step.make(crds)
        names = step.stale(files, step.out) if check else step.write(files, step.out)
        touched += [step.out / name for name in names]
    return touched


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.regenerate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--crds", type=Path, default=CRDS, help=f"folder of the CRDs (default: {_shown(CRDS)})")
    parser.add_argument("--offline", action="store_true", help="only the files that need no CRDs")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is stale")
    args = parser.parse_args(list(argv) if argv is not None else None)
    crds: Path | None = None if args.offline else args.crds
    if crds is not None and not crds.is_dir():
        print(f"error: no CRDs at {crds}: pass --crds DIR (or --offline for what needs none)", file=sys.stderr)
        return 2
    try:
        touched = run(crds, check=args.check)
    except (GenerationError, crd_data.VendorError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in touched:
        if args.check:
            print(f"stale: {_shown(path)}", file=sys.stderr)
        else:
            print(f"wrote {_shown(path)}")
    return 1 if args.check and touched else 0


if __name__ == "__main__":
    sys.exit(main())
