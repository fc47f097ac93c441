"""The compiler's passes, one module each, every one a function from its input product to its output.

::

    Sources --load--> Loaded --project--> Projected --resolve--> Resolved --plan--> Planned
            --rules--> Checked --lower--> Lowered --emit--> Rendered

The products are in :mod:`.products`, the options every pass may read in :mod:`.options`;
:data:`trainspec.compiler.pipeline.PASSES` lists the passes in order and
:func:`trainspec.compiler.pipeline.run` runs them.
"""
