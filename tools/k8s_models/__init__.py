"""The generator of the typed model modules of :mod:`trainspec.k8s` (meta, core, batch, jobset,
trainer, legacy, ray, kubeflow_v1, mpi) and of the lazy export table in ``trainspec/k8s/__init__.py``.

:mod:`.generator` renders them from the CRDs; :mod:`.config` says what to generate, in the
vocabulary of :mod:`.vocabulary`, from one ``models_<name>`` module per generated module
(``models_core`` takes its volume and scheduling classes from ``models_core_volumes`` and
``models_core_scheduling``). The class docstrings there are trainspec's own words about how the compiler
uses each type; no upstream ``description`` is copied.
``core.json`` and ``manual.json`` are the committed schema descriptions no CRD provides.
Run through ``python -m tools.regenerate``; nothing here is imported at run time.
"""
