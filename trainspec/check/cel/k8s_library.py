"""The Kubernetes CEL libraries, engine-neutral: what kube-apiserver adds to standard CEL.

Pure Python on plain values; :mod:`.expr_engine` and :mod:`.celpy_engine` declare them in their
engine. Libraries (as the server's base environment lists them, Kubernetes 1.27-1.31):

* quantity: ``isQuantity``, ``quantity`` and ``sign``, ``isInteger``, ``asInteger``,
  ``asApproximateFloat``, ``add``, ``sub``, ``isGreaterThan``, ``isLessThan``, ``compareTo``
  (exact arithmetic; the one quantity parser of the package);
* URL: ``isURL``, ``url`` and ``getScheme``, ``getHost``, ``getHostname``, ``getPort``,
  ``getEscapedPath``, ``getQuery``;
* IP and CIDR: ``isIP``, ``ip``, ``ip.isCanonical``, ``family``, ``isUnspecified``,
  ``isLoopback``, ``isLinkLocalMulticast``, ``isLinkLocalUnicast``, ``isGlobalUnicast``,
  ``isCIDR``, ``cidr``, ``containsIP``, ``containsCIDR``, ``ip()``, ``masked``,
  ``prefixLength``, ``string()`` of both;
* format: ``format.named(name)`` and ``format.<name>()`` with ``validate(value)``;
* lists: ``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``;
* regex: ``find``, ``findAll``;
* strings (extension version 2): ``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``,
  ``upperAscii``, ``replace``, ``split``, ``substring``, ``trim``, ``join``, ``strings.quote``;
* sets: ``sets.contains``, ``sets.equivalent``, ``sets.intersects``.

An error CEL defines (an invalid quantity, an index out of range) raises :class:`LibraryError`;
engines report it as an evaluation error, which the API server turns into a rejection.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.framework.quantity import QuantityError, is_quantity, parse_quantity
from trainspec.dsl.kube_facts import INT64_MAX
from trainspec.k8s.name_rules import (
    dns1035_problem,
    label_problem,
    label_value_problem,
    qualified_name_problem,
    subdomain_problem,
)


class LibraryError(ValueError, TrainspecError):
    """An error as the Kubernetes library function reports it (becomes a CEL error)."""


# -- quantity -----------------------------------------------------------------------------------


class Quantity:
    """A CEL ``kubernetes.Quantity``: equal when the values are (``1`` == ``1000m``)."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"quantity({float(self.value)!r})"

    def key(self) -> str:
        """A canonical text of the value (engines that need a string form use it)."""
        return f"{self.value.numerator}/{self.value.denominator}"

    @classmethod
    def from_key(cls, key: str) -> Quantity:
        return cls(Fraction(key))


def quantity(text: str) -> Quantity:
    """``quantity(s)``: bounded like the package's parser (beyond 2^63-1 base units is an error)."""
    try:
        return Quantity(parse_quantity(str(text)).value)
    except QuantityError as exc:
        raise LibraryError(str(exc)) from exc


def _operand(other: Any) -> Fraction:
    if isinstance(other, Quantity):
        return other.value
    if isinstance(other, int) and not isinstance(other, bool):
        return Fraction(other)
    raise LibraryError("no such overload")


def _is_int64(value: Fraction) -> bool:
    return value.denominator == 1 and -INT64_MAX - 1 <= value.numerator <= INT64_MAX


def as_integer(q: Quantity) -> int:
    if not _is_int64(q.value):
        raise LibraryError("cannot convert value to integer")
    return q.value.numerator


def compare(a: Quantity, b: Quantity) -> int:
    return (a.value > b.value) - (a.value < b.value)


# -- URL ----------------------------------------------------------------------------------------


class URL:
    """A CEL ``kubernetes.URL``, from Go's ``url.ParseRequestURI`` rules (absolute URL or path)."""

    __slots__ = ("text", "parts")

    def __init__(self, text: str) -> None:
        self.text = text
        self.parts = urlsplit(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)


def is_url(text: Any) -> bool:
    if not isinstance(text, str) or not text or any(c.isspace() for c in text) or "#" in text:
        return False
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    return bool(parts.scheme) or text.startswith("/")


def url(text: str) -> URL:
    if not is_url(text):
        raise LibraryError(f"URL parse error during conversion from string: {text!r}")
    return URL(text)


def url_host(u: URL) -> str:
    return u.parts.netloc.rpartition("@")[2]


def url_hostname(u: URL) -> str:
    host = url_host(u)
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if ":" in host else host


def url_port(u: URL) -> str:
    host = url_host(u)
    tail = host.rpartition("]")[2] if host.startswith("[") else host
    return tail.rpartition(":")[2] if ":" in tail else ""


def url_query(u: URL) -> dict[str, list[str]]:
    return {k: list(v) for k, v in parse_qs(u.parts.query, keep_blank_values=True).items()}


# -- IP and CIDR ---------------------------------------------------------------------------------

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _parse_ip(text: str) -> IPAddress:
    # As the Kubernetes library: no zones, no IPv4-mapped IPv6 addresses.
    if "%" in text:
        raise ValueError("zones are not allowed")
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError("IPv4-mapped IPv6 addresses are not allowed")
    return address


def is_ip(text: Any) -> bool:
    try:
        _parse_ip(str(text))
    except ValueError:
        return False
    return True


def ip(text: str) -> IPAddress:
    try:
        return _parse_ip(str(text))
    except ValueError as exc:
        raise LibraryError(f"IP Address {text!r} parse error during conversion from string: {exc}") from exc


def ip_is_canonical(text: str) -> bool:
    return str(ip(text)) == text


def ip_is_global_unicast(address: IPAddress) -> bool:
    # Go's net/netip IsGlobalUnicast: private ranges count, special ones do not.
    if address.is_unspecified or address.is_loopback or address.is_multicast or address.is_link_local:
        return False
    return not (isinstance(address, ipaddress.IPv4Address) and address == ipaddress.IPv4Address("255.255.255.255"))


def ip_is_link_local_multicast(address: IPAddress) -> bool:
    # Go: 224.0.0.0/24, and ffX2::/16 (any flags, link-local scope).
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.ip_network("224.0.0.0/24")
    return (int(address) >> 112) & 0xFF0F == 0xFF02


def ip_is_link_local_unicast(address: IPAddress) -> bool:
    return address.is_link_local and not address.is_multicast


class CIDR:
    """A CEL ``net.CIDR``: the address as written and the prefix length."""

    __slots__ = ("address", "length")

    def __init__(self, address: IPAddress, length: int) -> None:
        self.address, self.length = address, length

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDR) and (self.address, self.length) == (other.address, other.length)

    def __hash__(self) -> int:
        return hash((self.address, self.length))

    def __str__(self) -> str:
        return f"{self.address}/{self.length}"

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(f"{self.address}/{self.length}", strict=False)


def _parse_cidr(text: str) -> CIDR:
    address, slash, length = str(text).partition("/")
    if not slash or not length.isdigit() or (len(length) > 1 and length.startswith("0")):
        raise ValueError("not an address/prefix-length")
    parsed = _parse_ip(address)
    if int(length) > parsed.max_prefixlen:
        raise ValueError("prefix length out of range")
    return CIDR(parsed, int(length))


def is_cidr(text: Any) -> bool:
    try:
        _parse_cidr(str(text))
    except ValueError:
        return False
    return True


def cidr(text: str) -> CIDR:
    try:
        return _parse_cidr(text)
    except ValueError as exc:
        raise LibraryError(f"network address parse error during conversion from string: {exc}") from exc


def cidr_contains_ip(c: CIDR, other: Any) -> bool:
    address = other if isinstance(other, (ipaddress.IPv4Address, ipaddress.IPv6Address)) else ip(str(other))
    return address.version == c.address.version and address in c.network


def cidr_contains_cidr(c: CIDR, other: Any) -> bool:
    inner = other if isinstance(other, CIDR) else cidr(str(other))
    if inner.address.version != c.address.version or inner.length < c.length:
        return False
    return inner.network.subnet_of(c.network)  # type: ignore[arg-type]  # same version: checked above


def cidr_masked(c: CIDR) -> CIDR:
    return CIDR(c.network.network_address, c.length)


# -- format ---------------------------------------------------------------------------------------

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


def _prefix(check: Callable[[str], str | None]) -> Callable[[str], str | None]:
    # A generateName prefix: valid once a suffix is appended (a trailing '-' is fine).
    return lambda value: check(value[:-1] if value.endswith("-") else value) if value != "" else check(value)


def _uri(value: str) -> str | None:
    return None if is_url(value) else "must be a URI"


def _date(value: str) -> str | None:
    return None if re.match(r"^\d{4}-\d{2}-\d{2}$", value) else "must be a date (YYYY-MM-DD)"


def _datetime(value: str) -> str | None:
    pattern = r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
    return None if re.match(pattern, value) else "must be an RFC 3339 date-time"


#: The named formats of ``format.named`` -> a check returning the error or None.
FORMATS: dict[str, Callable[[str], str | None]] = {
    "dns1123Label": label_problem,
    "dns1123Subdomain": subdomain_problem,
    "dns1035Label": dns1035_problem,
    "qualifiedName": qualified_name_problem,
    "dns1123LabelPrefix": _prefix(label_problem),
    "dns1123SubdomainPrefix": _prefix(subdomain_problem),
    "dns1035LabelPrefix": _prefix(dns1035_problem),
    "labelValue": label_value_problem,
    "uri": _uri,
    "uuid": lambda v: None if _UUID.match(v) else "must be a UUID",
    "byte": lambda v: None if _BASE64.match(v) else "must be base64-encoded bytes",
    "date": _date,
    "datetime": _datetime,
}


def format_errors(name: str, value: str) -> list[str]:
    """What ``format.<name>().validate(value)`` holds: ``[]`` when valid."""
    problem = FORMATS[name](str(value))
    return [] if problem is None else [problem]


# -- lists, regex, strings, sets -----------------------------------------------------------------


def _comparable(items: Sequence[Any]) -> list[Any]:
    kinds = {type(i) if not isinstance(i, (int, float)) or isinstance(i, bool) else float for i in items}
    if len(kinds) > 1:
        raise LibraryError("no such overload")
    return list(items)


def is_sorted(items: Sequence[Any]) -> bool:
    values = _comparable(items)
    return all(values[i] <= values[i + 1] for i in range(len(values) - 1))


def list_sum(items: Sequence[Any]) -> Any:
    values = _comparable(items)
    total: Any = 0
    for value in values:
        total = total + value
    if isinstance(total, int) and not -INT64_MAX - 1 <= total <= INT64_MAX:
        raise LibraryError("integer overflow")
    return total


def list_min(items: Sequence[Any]) -> Any:
    if not items:
        raise LibraryError("min called on empty list")
    return min(_comparable(items))


def list_max(items: Sequence[Any]) -> Any:
    if not items:
        raise LibraryError("max called on empty list")
    return max(_comparable(items))


def index_of(target: Any, item: Any, *start: Any) -> int:
    if isinstance(target, str):
        offset = int(start[0]) if start else 0
        if not 0 <= offset <= len(target):
            raise LibraryError(f"index out of range: {offset}")
        return target.find(str(item), offset)
    return next((i for i, v in enumerate(target) if _same(v, item)), -1)


def last_index_of(target: Any, item: Any, *end: Any) -> int:
    if isinstance(target, str):
        stop = int(end[0]) if end else len(target)
        if not 0 <= stop <= len(target):
            raise LibraryError(f"index out of range: {stop}")
        return target.rfind(str(item), 0, stop + len(str(item)))
    return next((i for i in range(len(target) - 1, -1, -1) if _same(target[i], item)), -1)


def _same(a: Any, b: Any) -> bool:
    # CEL equality: booleans are not numbers.
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _re2() -> Any:
    import re2  # google-re2, the RE2 semantics the API server has

    return re2


def find(text: str, pattern: str) -> str:
    try:
        found = _re2().search(pattern, text)
    except Exception as exc:  # re2.error: an invalid pattern is an evaluation error
        raise LibraryError(f"invalid regular expression: {pattern}") from exc
    return found.group(0) if found else ""


def find_all(text: str, pattern: str, *limit: Any) -> list[str]:
    try:
        found = [m.group(0) for m in _re2().finditer(pattern, text)]
    except Exception as exc:
        raise LibraryError(f"invalid regular expression: {pattern}") from exc
    count = int(limit[0]) if limit else -1
    return found if count < 0 else found[:count]


def char_at(text: str, index: int) -> str:
    if not 0 <= index <= len(text):
        raise LibraryError(f"index out of range: {index}")
    return text[index] if index < len(text) else ""


def replace(text: str, old: str, new: str, *count: Any) -> str:
    return text.replace(old, new, int(count[0]) if count else -1)


def split(text: str, sep: str, *limit: Any) -> list[str]:
    count = int(limit[0]) if limit else -1
    if count == 0:
        return []
    if sep == "":
        parts = list(text)
        return parts if count < 0 or count >= len(parts) else [*parts[: count - 1], text[count - 1 :]]
    return text.split(sep, count - 1) if count > 0 else text.split(sep)


def substring(text: str, start: int, *end: Any) -> str:
    stop = int(end[0]) if end else len(text)
    if not 0 <= start <= stop <= len(text):
        raise LibraryError(f"index out of range: [{start}:{stop}] of {len(text)}")
    return text[start:stop]


def lower_ascii(text: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in text)


def upper_ascii(text: str) -> str:
    return "".join(c.upper() if c.isascii() else c for c in text)


def join(items: Sequence[Any], *sep: Any) -> str:
    if not all(isinstance(i, str) for i in items):
        raise LibraryError("no such overload")
    return (str(sep[0]) if sep else "").join(items)


def quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped.replace(chr(13), chr(92) + "r")}"'


def sets_contains(items: Sequence[Any], subset: Sequence[Any]) -> bool:
    return all(any(_same(a, b) for a in items) for b in subset)


def sets_equivalent(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return sets_contains(a, b) and sets_contains(b, a)


def sets_intersects(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return any(any(_same(x, y) for y in b) for x in a)


__all__ = [
    "CIDR",
    "FORMATS",
    "LibraryError",
    "Quantity",
    "URL",
    "as_integer",
    "cidr",
    "compare",
    "format_errors",
    "ip",
    "is_cidr",
    "is_ip",
    "is_quantity",
    "is_url",
    "quantity",
    "url",
]
