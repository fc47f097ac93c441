"""The output tree of ``trainspec compile -o DIR``: planned, checked, and replaced as a whole.

* :mod:`.marker`: each file's seal says trainspec wrote it; an older tree's ``.trainspec-managed.json``
  is read once more, as untrusted input (TS409), and dropped.
* :mod:`.tree_plan` compares the compile's files with the directory (never following symlinks):
  added, changed, removed, files in the way (TS407), hand edits (TS411), vanishing
  PersistentVolumeClaims (TS410, :mod:`.claims`).
* :mod:`.safety` refuses ``-o`` values whose replacement could lose work (TS412).
* :mod:`.swap` builds the new generation beside the directory and swaps it in atomically,
  recovering what an interrupted run left (TS413).
* :mod:`.access` checks what the swap needs of the tree's permissions before anything is written,
  removes retired generations (read-only directories too), and names the path a failure was at
  (TS407).
* :mod:`.apply` ties them together for the command line: :func:`emit_directory`, which also
  refuses a directory trainspec never wrote (TS417, unless ``adopt``).
"""

from __future__ import annotations

from trainspec.compiler.outtree.apply import OutputReport, emit_directory, file_mode
from trainspec.compiler.outtree.marker import MARKER

__all__ = ["MARKER", "OutputReport", "emit_directory", "file_mode"]
