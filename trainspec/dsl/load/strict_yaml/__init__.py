"""The strict YAML loader: spec text in, plain Python documents with source positions out.

PyYAML's C composer (libyaml, through ``yaml.CSafeLoader``) builds the node tree; one walk over
that tree, in Python, constructs plain values, records where every field is, and finds what a
spec must not contain. Every problem becomes a :class:`~trainspec.dsl.diagnostics.Diagnostic`;
bad input never raises.

The parts, by concern:

* :mod:`~trainspec.dsl.load.strict_yaml.documents`: what comes out (:class:`Mark`, :class:`SourceDoc`);
* :mod:`~trainspec.dsl.load.strict_yaml.limits`: the caps (file size, nodes, depth) and ``--max-file-size``;
* :mod:`~trainspec.dsl.load.strict_yaml.scalars`: how a scalar resolves (YAML 1.1, as PyYAML's ``SafeLoader``);
* :mod:`~trainspec.dsl.load.strict_yaml.walk`: the one walk from a document's node tree to its data and marks;
* :mod:`~trainspec.dsl.load.strict_yaml.syntax`: positions and the diagnostics of text YAML cannot read;
* :mod:`~trainspec.dsl.load.strict_yaml.stream`: a stream of documents, and bytes or a file in (the safe reading).

Decisions worth knowing:

* **Scalars resolve exactly as PyYAML's YAML 1.1 ``SafeLoader``** (the composer runs PyYAML's
  own resolver), with one exception: timestamps stay the original string. Consequences users
  meet: ``yes``/``no``/``on``/``off`` are booleans; ``017`` is octal 15; ``1:30`` is 90
  (base 60); ``0x1f`` is 31; ``1_000`` is 1000; ``0o17`` is a **string** (YAML 1.1 has no
  ``0o``); a float needs a dot and a *signed* exponent, so ``1e3`` and ``1.0e3`` are
  **strings** while ``1.0e+3`` is 1000.0; ``.inf`` and ``.nan`` are floats. Quoted scalars are
  always strings. :attr:`SourceDoc.plain` keeps the source text of every plain scalar that
  became a non-string, and of every plain string that YAML 1.2 readers take for a number
  (``1e3``, ``0o17``, ``08``), so later layers can explain ``queue: no`` or ``tag: 1e3`` (TS109).
* **Duplicate keys (TS105): the first value is kept**; the later one is still checked for
  problems but contributes no data or positions. Any choice is arbitrary once it is an error;
  keeping the first keeps positions and data in agreement and costs nothing extra.
* **Aliases are expanded**; the positions recorded for aliased content are those of the anchored
  definition (the composer shares one node between anchor and alias), except the key of the
  entry holding the alias, which is exact. Expansion counts towards ``max_nodes`` (TS106).
* **Not allowed (TS113):** keys that are not strings (``1:``, ``null:``, ``yes:``, ``? [a]``),
  merge keys ``<<``, and tags other than ``!!str !!int !!float !!bool !!null !!seq !!map`` and
  ``!``. Such an entry is kept under its source text when it is a scalar (so validation can go
  on), dropped when it is a collection or a merge.
* **Tabs (TS104)** are reported only where YAML itself rejects them: a file whose leading tabs
  sit where libyaml accepts them (inside block or quoted scalars, flow collections) parses as
  usual. When parsing fails, every line from the failure on with a tab in its indentation
  (outside block scalars) is reported, since none of it was parsed; a failure caused by a tab
  is reported as TS104 only, not also as the TS103 syntax error.
"""

from __future__ import annotations

from trainspec.dsl.load.strict_yaml.documents import Mark as Mark, SourceDoc as SourceDoc
from trainspec.dsl.load.strict_yaml.limits import (
    DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES,
    MAX_FILE_SIZE_OPTION as MAX_FILE_SIZE_OPTION,
    LoadLimits as LoadLimits,
    parse_size as parse_size,
)
from trainspec.dsl.load.strict_yaml.stream import load_file as load_file, load_text as load_text

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_FILE_SIZE_OPTION",
    "LoadLimits",
    "Mark",
    "SourceDoc",
    "load_file",
    "load_text",
    "parse_size",
]
