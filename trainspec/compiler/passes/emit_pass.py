"""The *emit* pass: the files of an output directory (path -> text), byte-identical for the same inputs."""

from __future__ import annotations

from trainspec.compiler.passes.options import Options
from trainspec.compiler.passes.products import Lowered, Rendered


def emit(lowered: Lowered, options: Options) -> Rendered:
    """Every output file's text, sources named relative to ``options.output``."""
    from trainspec.compiler.emit import render_tree

    return Rendered(files_text=render_tree(list(lowered.outputs), gitops=lowered.gitops, root=options.output))
