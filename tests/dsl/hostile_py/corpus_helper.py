"""A helper module beside a spec module (not a spec itself)."""

VALUE = 1
