"""The generator of the typed model modules of :mod:`trainspec.k8s` (meta, core, batch, jobset,
trainer, legacy, ray, kubeflow_v1, mpi) and of the lazy export table in ``trainspec/k8s/__init__.py``.

:mod:`.generator` renders them from the CRDs; :mod:`.config` (with :mod:`.models_core` and
:mod:`.models_jobs`, in the vocabulary of :mod:`.vocabulary`) says what to generate;
``core.json`` and ``manual.json`` are the committed schema descriptions no CRD provides.
Run through ``python -m tools.regenerate``; nothing here is imported at run time.
"""
