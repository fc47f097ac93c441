"""Where a streamed run's outputs go (:mod:`trainspec.compiler.streaming`): rendered at once.

Each output is rendered to text as its batch is lowered, so no object outlives its batch:

* :class:`SpilledStream` (``compile -o -``) writes each output's YAML to an anonymous temporary
  file and keeps its place; :meth:`SpilledStream.write_to` copies them out in apply order
  (runtimes, then jobs by path), the bytes a whole run prints.
* :class:`TreeTexts` (``compile -o DIR``) spills each file's text the same way and hands the
  tree writer a mapping that reads them back one at a time (trainspec.compiler.outtree compares,
  seals and writes the tree as a whole).

A runtime used by the jobs of several batches is lowered by each of them (the same text): the
first is kept. Two outputs of one path from different specs or waves (a job named like a runtime
in the namespace ``runtimes``) are a collision the tree cannot hold: :attr:`TreeTexts.collisions`
lists them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from trainspec.compiler.emit import KUSTOMIZATION, dump_objects, kustomization, manifest_dicts, render_output
from trainspec.compiler.yaml_writer import Writer
from trainspec.dsl.errors import TrainspecError

if TYPE_CHECKING:
    from trainspec.compiler.passes.products import Output

__all__ = ["SpillFailed", "SpilledStream", "TreeTexts"]


class SpillFailed(TrainspecError):
    """The temporary file the outputs are spilled to cannot be written (its file system is full)."""

    def __init__(self, exc: OSError) -> None:
        self.directory = tempfile.gettempdir()
        super().__init__(f"cannot write a temporary file in {self.directory}: {exc.strerror or exc}")


class _SpillFile:
    """An anonymous temporary file that texts are appended to and read back from by place.

    Unlinked at once where the platform allows: nothing is left behind, even after a kill.
    """

    def __init__(self) -> None:
        try:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115  # closed by close()
        except OSError as exc:
            raise SpillFailed(exc) from exc

    def append(self, text: str) -> tuple[int, int]:
        """Spill ``text``; its (offset, length) in bytes."""
        data = text.encode("utf-8")
        try:
            offset = self._file.seek(0, os.SEEK_END)
            self._file.write(data)
        except OSError as exc:  # a full file system says so here, or at the read that flushes
            raise SpillFailed(exc) from exc
        return offset, len(data)

    def read(self, offset: int, length: int) -> str:
        try:
            self._file.seek(offset)
            data = self._file.read(length)
        except OSError as exc:
            raise SpillFailed(exc) from exc
        return data.decode("utf-8")

    def clear(self) -> None:
        self._file.seek(0)
        self._file.truncate()

    def close(self) -> None:
        self._file.close()


class SpilledStream:
    """``compile -o -``'s stream, spilled to a temporary file as the batches are lowered."""

    def __init__(self) -> None:
        self._file = _SpillFile()  # closed by close() / the with block
        # Where each output's text is: (wave, path, offset, length) packed in one growing buffer,
        # a few dozen bytes per output instead of a tuple and a dict entry.
        self._index = bytearray()
        self._runtimes: set[str] = set()  # a runtime is lowered by each batch that uses it: once
        self._writer = Writer()

    def add(self, output: Output, gitops: str | None) -> None:
        """Render ``output``'s objects and spill them."""
        if output.wave == 0:
            if output.path in self._runtimes:
                return
            self._runtimes.add(output.path)
        offset, length = self._file.append(dump_objects(manifest_dicts(output.objects, gitops=gitops), self._writer))
        # paths hold no tab or newline (names and namespaces are DNS labels)
        self._index += f"{output.wave}\t{output.path}\t{offset}\t{length}\n".encode()

    def products(self, reached: list[Any]) -> bool | None:
        """Nothing but the outputs is written."""
        return None

    def reset(self) -> None:
        """Forget everything spilled."""
        self._file.clear()
        self._index.clear()
        self._runtimes.clear()

    def write_to(self, stream: TextIO) -> None:
        """The whole stream, in apply order, one output at a time."""
        entries = sorted(
            (int(wave), path, int(offset), int(length))
            for wave, path, offset, length in (line.split("\t") for line in self._index.decode().splitlines())
        )
        separator = ""
        for _, _, offset, length in entries:
            stream.write(separator + self._file.read(offset, length))
            separator = "---\n"

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SpilledStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TreeTexts:
    """``compile -o DIR``'s files (relative path -> text), rendered as the batches are lowered.

    The texts are spilled to a temporary file too: :meth:`files` reads each back when the tree
    writer asks for it (to compare, seal and write it), so a tree of any size is never in memory.
    """

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self._root = root
        self._file = _SpillFile()  # closed by close() / the with block
        # path -> (wave, offset, length, the spec files it was compiled from)
        self._places: dict[str, tuple[int, int, int, tuple[str, ...]]] = {}
        self._writer = Writer()
        #: (path, the spec files of the file kept, those of the other) for each path two different
        #: outputs claimed: the tree would lose one of them, so the compile refuses it.
        self.collisions: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []

    def add(self, output: Output, gitops: str | None) -> None:
        """Render ``output`` as its file and spill it."""
        place = self._places.get(output.path)
        if place is not None:  # a runtime lowered again by a later batch: the same file, kept once
            if (place[0], place[3]) != (output.wave, output.sources):  # anything else: another file
                self.collisions.append((output.path, place[3], output.sources))
            return
        text = render_output(output, gitops=gitops, root=self._root, writer=self._writer)
        offset, length = self._file.append(text)
        self._places[output.path] = (output.wave, offset, length, output.sources)

    def products(self, reached: list[Any]) -> bool | None:
        """Nothing but the outputs is written."""
        return None

    def reset(self) -> None:
        """Forget every file."""
        self._file.clear()
        self._places.clear()
        self.collisions.clear()

    def sources(self, paths: list[str] | None = None) -> list[str]:
        """The spec files the files at ``paths`` (None: all) were compiled from (built-in runtimes have none)."""
        chosen = self._places if paths is None else paths
        found = {
            source
            for path in chosen
            if path in self._places
            for source in self._places[path][3]
            if not source.startswith("<")
        }
        return sorted(found)

    def files(self, gitops: str | None) -> Mapping[str, str]:
        """Every file by path (sorted), with the kustomization when no GitOps controller reads the tree."""
        extra = {}
        if gitops is None:
            ordered = sorted(self._places, key=lambda path: (self._places[path][0], path))
            extra[KUSTOMIZATION] = kustomization(ordered)
        return _Spilled(self._file, {path: place[1:3] for path, place in self._places.items()}, extra)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> TreeTexts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Spilled(Mapping[str, str]):
    """Relative path -> text, read back from the spill file on each access; sorted by path."""

    def __init__(self, file: _SpillFile, places: dict[str, tuple[int, int]], extra: dict[str, str]) -> None:
        self._file = file
        self._places = places
        self._extra = extra
        self._order = sorted([*places, *extra])

    def __getitem__(self, path: str) -> str:
        if path in self._extra:
            return self._extra[path]
        return self._file.read(*self._places[path])

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, path: object) -> bool:
        return path in self._places or path in self._extra
