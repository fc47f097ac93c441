"""The parallelism planner: which TP x PP x DP (x ZeRO/FSDP, recomputation) layouts fit, and which to use.

Pure arithmetic on :class:`~trainspec.explain.planner.inputs.PlannerInputs`, in small modules:
``layouts`` (what is valid), ``memory`` (bytes per GPU), ``comms`` (what each axis sends over
which link), ``recommend`` (the choice and its reasons); ``inputs`` reads a compiled plan,
``check`` turns a pinned layout's problems into diagnostics, ``contract`` the chosen layout into
environment variables and framework flags. The formulas and their sources: docs/parallelism.md.
"""

from trainspec.explain.planner import fromplan
from trainspec.explain.planner.inputs import Arch, Cluster, PlannerInputs
from trainspec.explain.planner.layouts import Layout
from trainspec.explain.planner.recommend import Plan, Scored, plan_layouts

__all__ = ["Arch", "Cluster", "Layout", "Plan", "PlannerInputs", "Scored", "fromplan", "plan_layouts"]
