"""The errors a CEL engine reports to the checker (shared by every engine)."""

from __future__ import annotations

from trainspec.dsl.errors import TrainspecError


class CelCompileError(TrainspecError):
    """The rule text cannot be compiled by the offline engine (a TS502 warning)."""


class CelEvalError(TrainspecError):
    """The rule failed as CEL defines it (``no such key: x``, ``division by zero``, ...): the
    API server rejects the object with this text. ``overload`` marks a runtime overload
    mismatch, which the server words differently."""

    def __init__(self, message: str, *, overload: bool = False) -> None:
        super().__init__(message)
        self.overload = overload


class CelUnsupportedError(CelEvalError):
    """The offline engine cannot evaluate the rule faithfully (a TS502 warning, not a verdict)."""
