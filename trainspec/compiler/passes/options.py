"""What a run of the compiler may be told: :class:`Options` (read-only) and :class:`Stop`."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from trainspec.dsl.record import Record, field

if TYPE_CHECKING:
    from trainspec.dsl.load.strict_yaml import LoadLimits


class Stop(str, enum.Enum):
    """The last pass a run goes through, named after the command that stops there.

    ``CHECK`` is the older name of ``VALIDATE`` (the ``check`` command goes on to ``LOWER``); it
    stays an alias, so ``Stop.CHECK is Stop.VALIDATE``.
    """

    LOAD = "load"  # the specs as read, nothing checked across them (the library's ``load()``)
    VALIDATE = "rules"  # every diagnostic, no objects (validate)
    CHECK = "rules"  # noqa: PIE796 - an alias of VALIDATE, kept for callers of the older name
    LOWER = "lower"  # typed Kubernetes objects (explain, diff, check, kfp, the library)
    EMIT = "emit"  # rendered files as well (compile)


class _Discover:
    """Find ``trainspec.yaml`` as the CLI does: from the working directory upwards to the repo root."""

    def __repr__(self) -> str:
        return "DISCOVER"


#: ``Options.project`` value: discover the project file (the default, for the CLI and the library).
DISCOVER: Any = _Discover()


class Options(Record):
    """How to compile: everything a command's flags or a library caller can choose.

    ``project``: :data:`DISCOVER` (default), a path to a project file, a :class:`Project`
    object, or None for no project file. ``values`` and ``values_files`` feed ``{{ values.x }}``
    (files are layered first, then ``values`` on top). ``target`` is the ``--target`` option
    (fields given there win over the project file's ``spec.target``).
    """

    project: Any = DISCOVER
    #: Where project discovery starts (default: the working directory).
    cwd: str | None = None
    values: Mapping[str, Any] | None = None
    values_files: tuple[str, ...] = ()
    #: What ``parse_target_option`` returns: versions, and the ``engine`` and ``jobset_gates`` chosen.
    target: Mapping[str, Any] | None = None
    stop: Stop = Stop.LOWER
    #: ``argocd`` or ``flux``: the GitOps controller the tree is for (emit); None: the project's choice.
    gitops: str | None = None
    #: The output directory files are rendered for (emit names sources relative to it).
    output: str | None = None
    #: Seconds a Python spec module may run (None: the loader's default, 10 s; 0: no limit).
    python_timeout: float | None = None
    #: Whether Python spec modules run: "allow", "warn" or "deny" (``--no-python``); None: the
    #: project's ``spec.python`` decides (trainspec.dsl.load.python.permission).
    python: str | None = None
    #: The YAML loader's caps (file size: ``--max-file-size``); None: the loader's defaults.
    limits: LoadLimits | None = None
    #: Called as ``progress(pass name, passes done, passes in all)`` before each pass (the CLI's
    #: terminal progress line, trainspec.progress); None: nothing is reported.
    progress: Callable[[str, int, int], None] | None = field(default=None, compare=False)
    #: Replace every job by its scaling ladder (1 GPU, 1 node, 2, 4 ... nodes up to its own size),
    #: expanded in the plan pass so every later pass sees each rung (trainspec.compiler.ladder_rungs).
    ladder: bool = False
    #: The namespace of jobs whose spec names none, over the project's ``defaults.namespace``
    #: (``submit -n``, as kubectl's ``-n`` places objects without a namespace); None: the project's.
    namespace: str | None = None
    #: Runtimes read and checked by an earlier run over other files (after project defaults): jobs
    #: resolve against them, nothing else reads them (a streamed run's batches,
    #: trainspec.compiler.streaming).
    known_runtimes: tuple[Any, ...] = field(default=(), compare=False)
    #: The caller checks that no two specs write the same object (TS306) across all its runs.
    names_elsewhere: bool = False
