"""A helper module that fails when imported."""

raise RuntimeError("the helper is broken")
