"""Development tools of the repository, never installed: the generators of the files trainspec
ships (the model modules of ``trainspec.k8s``, the CRD data of ``trainspec.check``, the JSON Schemas
of the spec language), behind one command, ``python -m tools.regenerate [--check]``.

The package reads these generated files at run time; it never imports anything from here.
"""
