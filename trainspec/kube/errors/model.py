"""The shared parts of the classifier: what a request was about, its context, the Status it got."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.errors import TrainspecError


class GaveUp(TrainspecError):
    """A call retried until the policy gave up: the last error, the attempts and the seconds spent."""

    def __init__(self, last: BaseException, attempts: int, seconds: float) -> None:
        super().__init__(str(last))
        self.last, self.attempts, self.seconds = last, attempts, seconds


@dataclass(frozen=True)
class Target:
    """What a request was about, read from its path (``/apis/G/V/namespaces/NS/PLURAL/NAME``)."""

    group: str
    version: str
    plural: str
    namespace: str = ""
    name: str = ""
    sub: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        """``trainjobs.trainer.kubeflow.org`` (kubectl's and RBAC's spelling)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def kind(self) -> str:
        from trainspec.kube.resources import KINDS

        found = next((r.kind for r in KINDS.values() if r.plural == self.plural), None)
        return found or self.plural


_PATH = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?$"
)


def target_of(path: str) -> Target | None:
    """The :class:`Target` of a request path (query string allowed); None for other paths."""
    m = _PATH.match(path.split("?", 1)[0])
    if m is None:
        return None
    return Target(
        m["group"] or "", m["core"] or m["version"], m["plural"], m["ns"] or "", m["name"] or "", m["sub"] or ""
    )


@dataclass
class Context:
    """What was being done when a call failed, and where to place the diagnostic."""

    what: str
    file: str
    line: int = 1
    column: int = 1
    server: str = ""  # the API's URL
    context: str = ""  # the kubeconfig context's name
    auth: str = ""  # the kind of credentials sent (see session): "exec", "token", "certificate", ""
    #: GET of a discovery path (``/apis/G/V``): the decoded answer; raises as the client does.
    probe: Callable[[str], Any] | None = None
    #: compiler.provenance.FieldSources of the object being applied: rejected fields -> spec fields.
    sources: Any = None


def status_of(exc: BaseException) -> dict[str, Any]:
    """The API server's ``Status`` of a failed call ({} when the body is not one)."""
    try:
        data = json.loads(getattr(exc, "body", None) or "")
    except (TypeError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("kind") == "Status" else {}


def text_of(exc: BaseException) -> str:
    """The answer in one short line: the Status message, else the body (an HTML page's title, or its
    text without markup); "" for an empty body."""
    message = status_of(exc).get("message")
    if message:
        return str(message)
    body = str(getattr(exc, "body", "") or "")
    title = re.search(r"<title>(.*?)</title>", body, re.I | re.S)
    text = title.group(1) if title else re.sub(r"<[^>]+>", " ", body)
    return " ".join(text.split())[:200]


def is_html(exc: BaseException) -> bool:
    return bool(re.match(r"\s*<(!doctype|html|head|body)", str(getattr(exc, "body", "") or ""), re.I))


def diag(
    code: Code, ctx: Context, message: str, hint: str, path: str = "", related: tuple = (), **where: Any
) -> Diagnostic:
    """A diagnostic at the context's place (``where`` overrides it)."""
    place = {"file": ctx.file, "line": ctx.line, "column": ctx.column, **where}
    return Diagnostic(code, message, path=path, hint=hint, related=related, **place)
