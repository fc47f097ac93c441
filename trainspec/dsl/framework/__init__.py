"""The model framework: declarative, validated value classes (`Model`, `field`) and the typed scalars they hold.

Knows no spec kind: it imports only the foundation modules of :mod:`trainspec.dsl` (errors, records,
Kubernetes facts)."""
