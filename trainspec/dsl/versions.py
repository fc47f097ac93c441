"""Release versions of the components trainspec emits for (Kubeflow Trainer, Kueue): the one parser.

Standard library only: the command line's ``--target`` parser and the KFP launcher (in a pod) read
versions without loading the spec models. Only the minor release matters to trainspec (a patch
release changes no API), so a version is ``(major, minor)``.
"""

from __future__ import annotations

import re

__all__ = ["Version", "parse_version"]

Version = tuple[int, int]

#: ``2.3``, ``v2.3``, ``2.3.0``: a patch number is allowed and ignored.
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


def parse_version(text: str) -> Version:
    """``"2.3"``, ``"v0.19.2"`` -> ``(2, 3)``, ``(0, 19)``.

    Raises ValueError (``'two' is not a version like 2.3``) for anything else; callers turn it
    into their own diagnostic or error type.
    """
    match = _VERSION.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a version like 2.3")
    return int(match.group(1)), int(match.group(2))
