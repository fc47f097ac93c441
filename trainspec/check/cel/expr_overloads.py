"""The Kubernetes CEL library as cel-expr-python overloads (see :mod:`.k8s_library` for semantics).

Object types travel as protobuf messages of one string field ``value``, built here in a
private descriptor pool: ``kubernetes.Quantity`` (the exact value as ``num/den``),
``kubernetes.URL`` (the text), ``net.IP`` (canonical text), ``net.CIDR`` (``address/length``),
``kubernetes.NamedFormat`` (the format's name). Converters turn them into :mod:`.k8s_library`
objects on the way in and back on the way out.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from typing import Any

from trainspec.check.cel import k8s_library as lib

# IP and CIDR share one message type: the bindings dispatch Python overloads by kind (every
# message is a "struct"), so string(ip) and string(cidr) could not both be declared otherwise.
# The functions of each check their receiver (a CIDR's text holds a '/').
_MESSAGES = {
    "Quantity": "kubernetes.Quantity",
    "URL": "kubernetes.URL",
    "IP": "net.Address",
    "CIDR": "net.Address",
    "Format": "kubernetes.NamedFormat",
}


class ObjectTypes:
    """The message classes and CEL types of the library's objects."""

    def __init__(self, cel: Any) -> None:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        self.pool = descriptor_pool.DescriptorPool()
        for package in sorted({full.rpartition(".")[0] for full in _MESSAGES.values()}):
            file = descriptor_pb2.FileDescriptorProto(
                name=f"trainspec_cel_{package}.proto", package=package, syntax="proto3"
            )
            for full in sorted({v for v in _MESSAGES.values() if v.rpartition(".")[0] == package}):
                message = file.message_type.add(name=full.rpartition(".")[2])
                message.field.add(
                    name="value",
                    number=1,
                    type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                )
            self.pool.Add(file)
        self.classes = {
            short: message_factory.GetMessageClass(self.pool.FindMessageTypeByName(full))
            for short, full in _MESSAGES.items()
        }
        self.types = {short: cel.Type(full) for short, full in _MESSAGES.items()}
        self._by_class = {cls: short for short, cls in self.classes.items() if short != "CIDR"}

    def decode(self, value: Any) -> Any:
        """A message -> the :mod:`.k8s_library` object; anything else unchanged."""
        short = self._by_class.get(type(value))
        if short is None:
            return value
        text = value.value
        if short == "Quantity":
            return lib.Quantity.from_key(text)
        if short == "URL":
            return lib.URL(text)
        if short == "IP":
            return lib.cidr(text) if "/" in text else ipaddress.ip_address(text)
        return _FormatName(text)

    def encode(self, value: Any) -> Any:
        """A :mod:`.k8s_library` object -> its message; anything else unchanged."""
        if isinstance(value, lib.Quantity):
            return self.classes["Quantity"](value=value.key())
        if isinstance(value, lib.URL):
            return self.classes["URL"](value=value.text)
        if isinstance(value, (ipaddress.IPv4Address, ipaddress.IPv6Address, lib.CIDR)):
            return self.classes["IP"](value=str(value))
        if isinstance(value, _FormatName):
            return self.classes["Format"](value=value.name)
        return value


class _FormatName:
    """A named format (``format.dns1123Label()``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _same(value: Any) -> Any:
    return value


Overload = tuple[str, str, Any, list[Any], bool, Callable[..., Any], Callable[[Any], Any], Callable[[Any], Any]]


def library_overloads(cel: Any, types: ObjectTypes | None) -> Iterator[Overload]:
    """``(function, overload id, result, params, member, impl, decode, encode)`` for every overload."""
    t = cel.Type
    string, integer, boolean, dyn = t.STRING, t.INT, t.BOOL, t.DYN
    lst, strings = t.List(dyn), t.List(t.STRING)
    # Runtime dispatch needs concrete kinds: a ``dyn`` parameter is declared once per kind.
    kinds = {
        "int": t.INT,
        "uint": t.UINT,
        "double": t.DOUBLE,
        "string": t.STRING,
        "bool": t.BOOL,
        "bytes": t.BYTES,
        "null": t.NULL,
        "list": lst,
        "map": t.Map(dyn, dyn),
    }

    def plain(name: str, oid: str, result: Any, params: list[Any], member: bool, impl: Callable[..., Any]) -> Overload:
        return name, oid, result, params, member, impl, _same, _same

    yield plain("charAt", "string_char_at_int", string, [string, integer], True, lib.char_at)
    for name, impl in (("indexOf", lib.index_of), ("lastIndexOf", lib.last_index_of)):
        key = "index_of" if name == "indexOf" else "last_index_of"
        yield plain(name, f"string_{key}_string", integer, [string, string], True, impl)
        yield plain(name, f"string_{key}_string_int", integer, [string, string, integer], True, impl)
        for kind, kind_type in kinds.items():
            yield plain(name, f"list_{key}_{kind}", integer, [lst, kind_type], True, impl)
    yield plain("lowerAscii", "string_lower_ascii", string, [string], True, lib.lower_ascii)
    yield plain("upperAscii", "string_upper_ascii", string, [string], True, lib.upper_ascii)
    yield plain("trim", "string_trim", string, [string], True, lambda s: s.strip())
    yield plain("replace", "string_replace_string_string", string, [string, string, string], True, lib.replace)
    yield plain(
        "replace", "string_replace_string_string_int", string, [string, string, string, integer], True, lib.replace
    )
    yield plain("split", "string_split_string", strings, [string, string], True, lib.split)
    yield plain("split", "string_split_string_int", strings, [string, string, integer], True, lib.split)
    yield plain("substring", "string_substring_int", string, [string, integer], True, lib.substring)
    yield plain("substring", "string_substring_int_int", string, [string, integer, integer], True, lib.substring)
    yield plain("join", "list_join", string, [lst], True, lib.join)
    yield plain("join", "list_join_string", string, [lst, string], True, lib.join)
    yield plain("strings.quote", "strings_quote", string, [string], False, lib.quote)
    yield plain("isSorted", "list_is_sorted", boolean, [lst], True, lib.is_sorted)
    yield plain("sum", "list_sum", dyn, [lst], True, lib.list_sum)
    yield plain("min", "list_min", dyn, [lst], True, lib.list_min)
    yield plain("max", "list_max", dyn, [lst], True, lib.list_max)
    yield plain("find", "string_find_string", string, [string, string], True, lib.find)
    yield plain("findAll", "string_find_all_string", strings, [string, string], True, lib.find_all)
    yield plain("findAll", "string_find_all_string_int", strings, [string, string, integer], True, lib.find_all)
    yield plain("sets.contains", "list_sets_contains_list", boolean, [lst, lst], False, lib.sets_contains)
    yield plain("sets.equivalent", "list_sets_equivalent_list", boolean, [lst, lst], False, lib.sets_equivalent)
    yield plain("sets.intersects", "list_sets_intersects_list", boolean, [lst, lst], False, lib.sets_intersects)
    if types is not None:
        yield from _object_overloads(cel, types)


def _object_overloads(cel: Any, types: ObjectTypes) -> Iterator[Overload]:
    t = cel.Type
    string, integer, double, boolean = t.STRING, t.INT, t.DOUBLE, t.BOOL
    q, u, ip, cidr, fmt = (types.types[k] for k in ("Quantity", "URL", "IP", "CIDR", "Format"))
    dec, enc = types.decode, types.encode

    def obj(name: str, oid: str, result: Any, params: list[Any], member: bool, impl: Callable[..., Any]) -> Overload:
        if (oid.startswith("ip_") and not oid.startswith("ip_is_canonical")) or oid.startswith("cidr_"):
            impl = _receiver(impl, lib.CIDR if oid.startswith("cidr_") else _IP)
        return name, oid, result, params, member, impl, dec, enc

    yield obj("isQuantity", "is_quantity_string", boolean, [string], False, lib.is_quantity)
    yield obj("quantity", "string_to_quantity", q, [string], False, lib.quantity)
    yield obj("sign", "quantity_sign", integer, [q], True, lambda a: (a.value > 0) - (a.value < 0))
    yield obj("isInteger", "quantity_is_integer", boolean, [q], True, lambda a: lib._is_int64(a.value))
    yield obj("asInteger", "quantity_as_integer", integer, [q], True, lib.as_integer)
    yield obj("asApproximateFloat", "quantity_as_float", double, [q], True, lambda a: float(a.value))
    for name, sign in (("add", 1), ("sub", -1)):
        yield obj(
            name, f"quantity_{name}", q, [q, q], True, lambda a, b, s=sign: lib.Quantity(a.value + s * lib._operand(b))
        )
        yield obj(
            name,
            f"quantity_{name}_int",
            q,
            [q, integer],
            True,
            lambda a, b, s=sign: lib.Quantity(a.value + s * lib._operand(b)),
        )
    yield obj("isGreaterThan", "quantity_is_greater_than", boolean, [q, q], True, lambda a, b: lib.compare(a, b) > 0)
    yield obj("isLessThan", "quantity_is_less_than", boolean, [q, q], True, lambda a, b: lib.compare(a, b) < 0)
    yield obj("compareTo", "quantity_compare_to", integer, [q, q], True, lib.compare)
    yield obj("isURL", "is_url_string", boolean, [string], False, lib.is_url)
    yield obj("url", "string_to_url", u, [string], False, lib.url)
    yield obj("getScheme", "url_get_scheme", string, [u], True, lambda a: a.parts.scheme)
    yield obj("getHost", "url_get_host", string, [u], True, lib.url_host)
    yield obj("getHostname", "url_get_hostname", string, [u], True, lib.url_hostname)
    yield obj("getPort", "url_get_port", string, [u], True, lib.url_port)
    yield obj("getEscapedPath", "url_get_escaped_path", string, [u], True, lambda a: a.parts.path)
    yield obj("getQuery", "url_get_query", t.Map(string, t.List(string)), [u], True, lib.url_query)
    yield obj("isIP", "is_ip_string", boolean, [string], False, lib.is_ip)
    yield obj("ip", "string_to_ip", ip, [string], False, lib.ip)
    yield obj("ip", "cidr_ip", ip, [cidr], True, lambda c: c.address)
    yield obj("ip.isCanonical", "ip_is_canonical_string", boolean, [string], False, lib.ip_is_canonical)
    yield obj("family", "ip_family", integer, [ip], True, lambda a: a.version)
    yield obj("isUnspecified", "ip_is_unspecified", boolean, [ip], True, lambda a: a.is_unspecified)
    yield obj("isLoopback", "ip_is_loopback", boolean, [ip], True, lambda a: a.is_loopback)
    yield obj("isLinkLocalMulticast", "ip_is_link_local_multicast", boolean, [ip], True, lib.ip_is_link_local_multicast)
    yield obj("isLinkLocalUnicast", "ip_is_link_local_unicast", boolean, [ip], True, lib.ip_is_link_local_unicast)
    yield obj("isGlobalUnicast", "ip_is_global_unicast", boolean, [ip], True, lib.ip_is_global_unicast)
    yield obj("isCIDR", "is_cidr_string", boolean, [string], False, lib.is_cidr)
    yield obj("cidr", "string_to_cidr", cidr, [string], False, lib.cidr)
    yield obj("containsIP", "cidr_contains_ip_ip", boolean, [cidr, ip], True, lib.cidr_contains_ip)
    yield obj("containsIP", "cidr_contains_ip_string", boolean, [cidr, string], True, lib.cidr_contains_ip)
    yield obj("containsCIDR", "cidr_contains_cidr_cidr", boolean, [cidr, cidr], True, lib.cidr_contains_cidr)
    yield obj("containsCIDR", "cidr_contains_cidr_string", boolean, [cidr, string], True, lib.cidr_contains_cidr)
    yield obj("masked", "cidr_masked", cidr, [cidr], True, lib.cidr_masked)
    yield obj("prefixLength", "cidr_prefix_length", integer, [cidr], True, lambda c: c.length)
    # The standard ``string()`` cannot take more overloads here; ``__k8s_string`` stands in for
    # string(ip) and string(cidr) (rewrite.py renames those calls).
    yield obj("__k8s_string", "address_to_string", string, [ip], False, str)
    yield obj("__k8s_string", "string_to_string", string, [string], False, str)
    yield obj("__k8s_string", "int_to_string", string, [integer], False, str)
    yield obj("__k8s_string", "uint_to_string", string, [t.UINT], False, str)
    yield obj("__k8s_string", "bool_to_string", string, [boolean], False, lambda b: "true" if b else "false")
    yield obj("__k8s_string", "bytes_to_string", string, [t.BYTES], False, lambda b: b.decode("utf-8"))
    # The format library, through rewrite.py: plain values in, CEL wraps the optionals.
    yield obj("__k8s_format_known", "format_known_string", boolean, [string], False, lambda n: n in lib.FORMATS)
    yield obj("__k8s_format", "format_string", fmt, [string], False, _format_name)
    yield obj(
        "__k8s_format_errors",
        "format_errors_format_string",
        t.List(string),
        [fmt, string],
        False,
        lambda f, s: lib.format_errors(f.name, s),
    )


_IP = (ipaddress.IPv4Address, ipaddress.IPv6Address)


def _receiver(impl: Callable[..., Any], kind: Any) -> Callable[..., Any]:
    """``impl`` for a receiver of ``kind`` only (IP and CIDR share a CEL type here)."""

    def call(first: Any, *rest: Any) -> Any:
        if not isinstance(first, kind):
            raise lib.LibraryError("no such overload")
        return impl(first, *rest)

    return call


def _format_name(name: str) -> _FormatName:
    if name not in lib.FORMATS:
        raise lib.LibraryError(f"unknown format: {name}")
    return _FormatName(name)
