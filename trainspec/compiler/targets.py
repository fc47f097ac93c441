"""Target versions: which Kubeflow Trainer and Kueue the manifests are for.

The target comes from ``--target trainer=2.3,kueue=0.19`` (fields given there win), else the
project file's ``spec.target``, else the newest supported pair (Trainer 2.3, Kueue 0.19).

* **Trainer 2.2 and 2.3** get the same output. The 2.3 additions (runtime snapshot,
  ``torch.envInjection``, ``terminationGracePeriodSeconds`` in patches, the storageUri CEL rule,
  ``resourcesPerNode`` merged instead of replaced) are either unused by the compiler or already
  covered: the compiler writes the fully merged per-node resources.
* **Trainer 2.1** is its own lowering dialect (``compiler.lower.trainer.trainer_v21``): pod patches
  become ``podTemplateOverrides``, JobSet-level metadata ``spec.labels``/``annotations``, and
  what 2.1 cannot express or enforce is a diagnostic (TS521, TS522).
* **The version matrix** (TS520): Kueue 0.14 speaks the Trainer v2.0 API (podSpecOverrides),
  0.15-0.16 v2.1 (podTemplateOverrides), 0.17+ v2.2+ (runtimePatches). Trainer 2.1 with Kueue
  >= 0.17 is admitted but never started; Trainer >= 2.2 with Kueue < 0.17 likewise.

Importing this module is cheap (the argument parser uses :func:`parse_target_option`).
Which lowering a target selects is :func:`trainspec.compiler.lower.dialects.dialect_for`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainspec.compiler.engines import DEFAULT_ENGINE, EMITS_FOR, Engine, engine_named
from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.record import TupleRecord
from trainspec.dsl.versions import Version as Version, parse_version

if TYPE_CHECKING:
    from trainspec.dsl.load.loaded import LoadedSpec

SUPPORTED_TRAINER: tuple[Version, ...] = ((2, 1), (2, 2), (2, 3))
KNOWN_KUEUE: tuple[Version, Version] = ((0, 14), (0, 19))
DEFAULT_TRAINER: Version = (2, 3)
DEFAULT_KUEUE: Version = (0, 19)
MATRIX = (
    "Kueue 0.14 speaks the Trainer v2.0 API (podSpecOverrides), 0.15-0.16 the v2.1 API "
    "(podTemplateOverrides), 0.17 and later v2.2+ (runtimePatches)"
)
OPTION = "--target"


def _fmt(version: Version | None) -> str:
    return "none" if version is None else f"{version[0]}.{version[1]}"


class Target(TupleRecord):
    """The engine and versions to emit for (``kueue`` None: no Kueue).

    ``engine`` is the default engine of jobs (``trainer``, ``ray``, ``training-operator``);
    a runtime's ``spec.engine`` overrides it unless the command line chose one.
    """

    trainer: Version = DEFAULT_TRAINER
    kueue: Version | None = DEFAULT_KUEUE
    engine: Engine = DEFAULT_ENGINE
    #: JobSet feature gates the cluster turned on (off by default upstream: InPlaceRestart, ...).
    jobset_gates: tuple[str, ...] = ()

    def __str__(self) -> str:
        engine = f"engine={self.engine.value}," if self.engine != DEFAULT_ENGINE else ""
        gates = "".join(f",jobset-gate={g}" for g in self.jobset_gates)
        return f"{engine}trainer={_fmt(self.trainer)},kueue={_fmt(self.kueue)}{gates}"

    @property
    def runtime_patches(self) -> bool:
        """Whether TrainJobs carry runtimePatches (2.2+) rather than podTemplateOverrides (2.1)."""
        return self.trainer >= (2, 2)


def _version(text: str, *, allow_none: bool) -> Version | None:
    if allow_none and text.strip().lower() in ("none", "null", ""):
        return None
    return parse_version(text)


#: Engines a target may name, and the one version of each that trainspec emits for.
ENGINES: dict[str, Version | None] = {engine.value: version for engine, version in EMITS_FOR.items()}


def parse_target_option(text: str) -> dict[str, Any]:
    """``trainer=2.1,kueue=0.16``, ``ray``, ``engine=training-operator,kueue=0.19`` -> the fields it sets.

    Raise ValueError (argparse: exit 2).
    """
    fields: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, eq, value = item.partition("=")
        name = name.strip().lower()
        # An engine of one version may be named alone (`ray`); trainer=X.Y is Trainer's version.
        if ENGINES.get(name) is not None and (not eq or _version(value, allow_none=False) == ENGINES[name]):
            fields["engine"] = name  # `ray`, `ray=1.7`, `training-operator`, `training-operator=1.9`
            continue
        if ENGINES.get(name) is not None:
            raise ValueError(f"trainspec emits for {name} {_fmt(ENGINES[name])} only, got {item!r}")
        if name == "jobset-gate" and eq and value.strip():
            fields.setdefault("jobset_gates", []).append(value.strip())
            continue
        if name == "engine" and eq:
            if value.strip() not in ENGINES:
                raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {value.strip()!r}")
            fields["engine"] = value.strip()
            continue
        if not eq or name not in ("trainer", "kueue"):
            raise ValueError(
                "expected trainer=X.Y, kueue=X.Y (or kueue=none), ray, training-operator, "
                f"engine=NAME or jobset-gate=NAME, got {item!r}"
            )
        fields[name] = _version(value, allow_none=name == "kueue")
    if "trainer" in fields and fields["trainer"] is None:
        raise ValueError("trainer needs a version")
    return fields


# -- resolving the target -------------------------------------------------------------------------


def resolve_target(project: LoadedSpec | None, option: Mapping[str, Any] | None) -> tuple[Target, list[Diagnostic]]:
    """The target: ``option`` (``--target``) over the project file's ``spec.target`` over the defaults.

    ``option`` holds what :func:`parse_target_option` returns: ``trainer``/``kueue`` versions, the
    ``engine`` name and the ``jobset_gates`` list.

    Returns it with the TS52x problems of the chosen versions, located at the project file's
    line when that is where a version came from.
    """
    chosen: dict[str, Version | None] = {"trainer": DEFAULT_TRAINER, "kueue": DEFAULT_KUEUE}
    where: dict[str, tuple[str | None, int | None, int | None]] = {
        "trainer": (OPTION, None, None),
        "kueue": (OPTION, None, None),
    }
    problems: list[Diagnostic] = []
    if project is not None:
        spec_target = project.spec.spec.target
        for name, text in (("trainer", spec_target.trainer), ("kueue", spec_target.kueue)):
            mark = project.mark(("spec", "target", name))
            where[name] = (project.file, mark.line, mark.column)
            try:
                chosen[name] = _version(text or "none", allow_none=name == "kueue")
            except ValueError as exc:
                problems.append(
                    Diagnostic(
                        code=codes.UNKNOWN_TARGET_VERSION,
                        message=str(exc),
                        file=project.file,
                        line=mark.line,
                        column=mark.column,
                        path=f"spec.target.{name}",
                    )
                )
    engine: Engine = DEFAULT_ENGINE
    gates: tuple[str, ...] = ()
    if project is not None and project.spec.spec.target.engine is not None:
        engine = engine_named(project.spec.spec.target.engine)
    if project is not None:
        gates = tuple(project.spec.spec.target.jobset_feature_gates)
    for name, value in (option or {}).items():
        if name == "engine":
            engine = engine_named(value)
            continue
        if name == "jobset_gates":
            gates = tuple(value)
            continue
        chosen[name] = value
        where[name] = (OPTION, None, None)
    target = Target(
        trainer=chosen["trainer"] or DEFAULT_TRAINER,
        kueue=chosen["kueue"],
        engine=engine,
        jobset_gates=tuple(sorted(set(gates))),
    )
    for code, severity, field, message in matrix_problems(target):
        file, line, column = where[field]
        problems.append(
            Diagnostic(
                code=code,
                severity=severity,
                message=message,
                file=file,
                line=line,
                column=column,
                path=f"spec.target.{field}" if file != OPTION else "",
            )
        )
    return target, problems


def matrix_problems(target: Target) -> list[tuple[Code, Severity, str, str]]:
    """(code, severity, field, message) for versions trainspec cannot emit for or pairings that fail."""
    trainer, kueue = target.trainer, target.kueue
    out: list[tuple[Code, Severity, str, str]] = []

    def add(code: Code, severity: Severity, field: str, message: str) -> None:
        out.append((code, severity, field, message))

    if trainer not in SUPPORTED_TRAINER:
        supported = ", ".join(_fmt(v) for v in SUPPORTED_TRAINER)
        add(
            codes.UNKNOWN_TARGET_VERSION,
            Severity.ERROR,
            "trainer",
            f"Trainer {_fmt(trainer)} is not a supported target (trainspec emits for Trainer {supported})",
        )
    if kueue is None:
        return out
    pair = f"Trainer {_fmt(trainer)} with Kueue {_fmt(kueue)}"
    known = f"{_fmt(KNOWN_KUEUE[0])}-{_fmt(KNOWN_KUEUE[1])}"
    if kueue < KNOWN_KUEUE[0]:
        add(
            codes.BAD_VERSION_PAIR,
            Severity.ERROR,
            "kueue",
            f"Kueue {_fmt(kueue)} has no TrainJob integration (it arrived in 0.14)",
        )
    elif kueue > KNOWN_KUEUE[1]:
        add(
            codes.UNKNOWN_TARGET_VERSION,
            Severity.WARNING,
            "kueue",
            (
                f"Kueue {_fmt(kueue)} is newer than the versions trainspec knows "
                f"({known}); assuming it speaks Trainer v2.2+ like 0.17-0.19"
            ),
        )
    if trainer < (2, 2) and kueue >= (0, 17):
        add(
            codes.BAD_VERSION_PAIR,
            Severity.ERROR,
            "kueue",
            (
                f"{pair} is a pairing known to fail: Kueue >= 0.17 writes its node selectors and tolerations into "
                "runtimePatches, which Trainer 2.1 does not have, so jobs are admitted but never start "
                f"(kueue#11931, kueue#14722). {MATRIX}; use kueue=0.16 or upgrade Trainer to 2.2+"
            ),
        )
    elif trainer >= (2, 2) and (0, 14) <= kueue < (0, 17):
        add(
            codes.BAD_VERSION_PAIR,
            Severity.ERROR,
            "kueue",
            (
                f"{pair} is a pairing known to fail: Trainer 2.2 replaced podTemplateOverrides with runtimePatches, so "
                f"Kueue < 0.17 cannot place or start the jobs. {MATRIX}; upgrade Kueue to 0.17+ or target trainer=2.1"
            ),
        )
    elif trainer == (2, 1) and kueue == (0, 14):
        add(
            codes.BAD_VERSION_PAIR,
            Severity.WARNING,
            "kueue",
            (
                f"{pair}: Kueue 0.14.0 was built against the Trainer v2.0 API (podSpecOverrides); use Kueue 0.15 or "
                f"0.16 with Trainer 2.1. {MATRIX}"
            ),
        )
    return out


__all__ = [
    "DEFAULT_KUEUE",
    "DEFAULT_TRAINER",
    "ENGINES",
    "MATRIX",
    "OPTION",
    "SUPPORTED_TRAINER",
    "Target",
    "Version",
    "matrix_problems",
    "parse_target_option",
    "resolve_target",
]
