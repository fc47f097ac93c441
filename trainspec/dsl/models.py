"""The public import path of the spec models: ``from trainspec.dsl.models import Runtime``.

Spec modules written against it keep working wherever the definitions live (they are in
:mod:`trainspec.dsl.spec.models` and its parts); ``from trainspec import Runtime`` is the same
object. trainspec's own code imports :mod:`trainspec.dsl.spec` directly.
"""

from __future__ import annotations

from trainspec.dsl.spec.models import *  # noqa: F403 (the re-export is the point of this module)
from trainspec.dsl.spec.models import __all__ as __all__
