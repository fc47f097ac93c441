"""The spec language: the `Runtime` and `TrainingJob` kinds, their parts, the project file, and the
checks inside one spec that need nothing else.

Built on :mod:`trainspec.dsl.framework`; reads no file (that is :mod:`trainspec.dsl.load`)."""
