"""The engine registry: every engine trainspec compiles for, and where its dialect lives.

An engine is a value of :class:`Engine` (what a Runtime's ``spec.engine``, a project file's
``spec.target.engine`` and ``--target`` name). Everything trainspec knows about one engine is
its dialect (:class:`trainspec.compiler.lower.dialects.Dialect`), in one folder under
``trainspec/compiler/lower/``; :func:`trainspec.compiler.lower.dialects.dialect_for` finds it
through :data:`DIALECT_MODULES`. Other modules ask the dialect, never compare engine names.

Standard library only (and the enum): the command line's parsers read :data:`ENGINE_NAMES`.
"""

from __future__ import annotations

from trainspec.dsl.spec.engine import Engine

#: The engine of a job whose runtime, project file and command line name none.
DEFAULT_ENGINE = Engine.TRAINER

#: Every engine's name, in the order help texts and error messages list them.
ENGINE_NAMES: tuple[str, ...] = tuple(engine.value for engine in Engine)

#: The one version of each engine's operator that trainspec emits for; None: the target's
#: ``trainer=X.Y`` chooses (the Trainer dialect serves several versions).
EMITS_FOR: dict[Engine, tuple[int, int] | None] = {
    Engine.TRAINER: None,
    Engine.RAY: (1, 7),
    Engine.TRAINING_OPERATOR: (1, 9),
}

#: The module of each engine's dialect; it defines ``dialect(target)``. Imported when a job needs it.
DIALECT_MODULES: dict[Engine, str] = {
    Engine.TRAINER: "trainspec.compiler.lower.trainer.dialect",
    Engine.RAY: "trainspec.compiler.lower.ray.dialect",
    Engine.TRAINING_OPERATOR: "trainspec.compiler.lower.training_operator.dialect",
}


def engine_named(name: str | Engine) -> Engine:
    """The engine called ``name``; ValueError, naming every engine, for any other name."""
    try:
        return Engine(name)
    except ValueError:
        raise ValueError(f"engine must be one of {', '.join(ENGINE_NAMES)}, got {str(name)!r}") from None


__all__ = ["DEFAULT_ENGINE", "DIALECT_MODULES", "EMITS_FOR", "ENGINE_NAMES", "Engine", "engine_named"]
