"""The parallelism planner: which TP x PP x DP (x ZeRO/FSDP, recomputation) layouts fit, and which to use.

Pure arithmetic on :class:`~trainspec.compiler.parallelism.inputs.PlannerInputs`, in small modules:
``layouts`` (what is valid), ``memory`` (bytes per GPU), ``comms`` (what each axis sends over
which link), ``recommend`` (the choice and its reasons); ``fromplan`` reads a job plan and
:func:`~trainspec.compiler.parallelism.fromplan.decide` runs the planner once per job, in the plan
pass (the plan keeps its answer: ``JobPlan.parallel``); ``check`` turns a pinned layout's problems
into diagnostics, ``contract`` the chosen layout into environment variables and framework flags.
The formulas and their sources: docs/parallelism.md.

The package imports nothing itself: most jobs never load the planner, and the plan module names
its answer's type without loading the modules that compute it.
"""
