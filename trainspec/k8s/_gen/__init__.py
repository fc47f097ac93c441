"""Inputs of the model generator (:mod:`trainspec.k8s.generate`): the per-module configuration
and the committed schema descriptions of the core sub-trees. Never imported at run time."""
