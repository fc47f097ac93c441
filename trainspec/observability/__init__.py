"""The documented home of the job dashboard's JSON (docs/observability.md); the code lives in
:mod:`trainspec.compiler.observability`, with the rest of what a job's ``observability`` block
compiles to."""
