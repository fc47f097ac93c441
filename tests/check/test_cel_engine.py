"""The CEL engine (issue 11, items 4 and 5): the API server's semantics, the engine interface,
both engines, and the Kubernetes CEL libraries as extension functions.

Cases are written from how kube-apiserver (cel-go, apiextensions-apiserver) decides: a rule
that reads an absent field is a rejection worded ``no such key: <field> evaluating rule:
<message or rule>``, errors are absorbed by ``||``, transition rules are skipped on create.
"""

from __future__ import annotations

import datetime as dt

import pytest

from trainspec.check.cel import k8s_library as cel_lib, validations as cel
from trainspec.check.cel.rewrite import rewrite_format_calls
from trainspec.check.cel.typed_values import cel_value, escape_property
from trainspec.check.cel.validations import CelCompileError, CelEvalError, check_cel, make_engine
from trainspec.dsl.diagnostics import Severity

cel_expr = pytest.importorskip("cel_expr_python", reason="cel-expr-python is the default CEL engine")


@pytest.fixture(scope="module")
def engine():
    return make_engine("cel-expr")


def run(engine, rule, value=None):
    return engine.evaluate(engine.compile(rule), {"self": value})


def _schema(*rules, **properties):
    return {
        "type": "object",
        "properties": properties or {"n": {"type": "integer"}},
        "x-kubernetes-validations": [r if isinstance(r, dict) else {"rule": r} for r in rules],
    }


def _found(value, schema, **kwargs):
    return [(d.code, d.path, d.message) for d in check_cel(value, schema, **kwargs)]


# -- verdicts as the API server words them ------------------------------------------------------


def test_reading_an_absent_field_is_a_rejection_with_the_servers_words():
    schema = _schema({"rule": "self.n > 0", "message": "n must be positive"})
    assert _found({}, schema) == [("TS501", "", "no such key: n evaluating rule: n must be positive")]
    schema = _schema("self.n > 0")
    assert _found({}, schema) == [("TS501", "", "no such key: n evaluating rule: self.n > 0")]
    assert _found({"n": 1}, schema) == []


def test_has_of_a_field_of_an_absent_object_is_a_rejection():
    # The volumeClaimPolicies rule on a template without metadata: the server rejects it.
    meta = {"type": "object", "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}}}
    schema = {
        "type": "object",
        "properties": {"templates": {"type": "array", "items": {"type": "object", "properties": {"metadata": meta}}}},
        "x-kubernetes-validations": [
            {"rule": "self.templates.all(t, !has(t.metadata.namespace))", "message": "namespace cannot be set"}
        ],
    }
    assert _found({"templates": [{"metadata": {"name": "a"}}]}, schema) == []
    assert _found({"templates": [{"metadata": {"namespace": "x"}}]}, schema) == [
        ("TS501", "", "namespace cannot be set")
    ]
    assert _found({"templates": [{}]}, schema) == [
        ("TS501", "", "no such key: metadata evaluating rule: namespace cannot be set")
    ]


def test_errors_are_absorbed_by_or_and_macros():
    assert _found({}, _schema("self.n > 0 || true")) == []
    assert _found({}, _schema("[1, 2].exists(x, x == 2) || self.n > 0")) == []


def test_runtime_overload_mismatch_is_worded_as_the_server_does():
    schema = _schema({"rule": "self.mem > 1", "message": "too small"}, mem={"x-kubernetes-int-or-string": True})
    assert _found({"mem": 2}, schema) == []
    [(code, _, message)] = _found({"mem": "2Gi"}, schema)
    assert code == "TS501" and message.startswith("'no such overload': call arguments did not match")
    assert message.endswith("for rule: too small")


def test_field_path_moves_a_false_rule_but_not_an_error():
    rule = {"rule": "self.n < 10", "fieldPath": ".n", "message": "n too big"}
    assert _found({"n": 11}, _schema(rule)) == [("TS501", "n", "n too big")]
    assert _found({}, _schema(rule))[0][:2] == ("TS501", "")


def test_anything_but_true_fails_the_rule():
    assert [c for c, _, _ in _found({"n": 1}, _schema("self.n"))] == ["TS501"]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("'n is ' + string(self.n)", "n is 12"),
        ("'  padded  '", "padded"),  # trimmed
        ("''", "fallback"),  # empty: the message
        ("'two\\nlines'", "fallback"),  # line breaks: the message
        ("self.n", "fallback"),  # not a string
        ("self.missing", "fallback"),  # an error
        ("'x' * 3", "fallback"),  # does not compile
    ],
)
def test_message_expression_as_the_server_evaluates_it(expression, expected):
    rule = {"rule": "self.n < 10", "message": "fallback", "messageExpression": expression}
    assert _found({"n": 12}, _schema(rule)) == [("TS501", "", expected)]


def test_message_expression_longer_than_the_cap_falls_back():
    rule = {"rule": "self.n < 10", "messageExpression": "'" + "x" * 5200 + "'"}
    assert _found({"n": 12}, _schema(rule)) == [("TS501", "", "failed rule: self.n < 10")]


def test_empty_rule_is_no_rule():
    assert _found({"n": 1}, _schema("  ")) == []


# -- transition rules ---------------------------------------------------------------------------


def test_transition_rules_are_skipped_on_create_and_listed():
    schema = _schema({"rule": "self == oldSelf", "message": "immutable"})
    skipped: list[tuple[str, str]] = []
    assert check_cel({"n": 1}, schema, skipped=skipped) == []
    assert skipped == [("", "self == oldSelf")]
    assert _found({"n": 1}, schema, old={"n": 2}) == [("TS501", "", "immutable")]
    assert _found({"n": 1}, schema, old={"n": 1}) == []


def test_optional_old_self_runs_on_create_and_on_update():
    rule = {"rule": "!oldSelf.hasValue() || oldSelf.value().n <= self.n", "optionalOldSelf": True, "message": "m"}
    assert _found({"n": 1}, _schema(rule)) == []
    assert _found({"n": 1}, _schema(rule), old={"n": 2}) == [("TS501", "", "m")]
    assert _found({"n": 3}, _schema(rule), old={"n": 2}) == []


def test_atomic_maps_do_not_correlate_their_entries():
    node = {"type": "integer", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "fixed"}]}
    granular = {"type": "object", "properties": {"a": node}}
    atomic = {**granular, "x-kubernetes-map-type": "atomic"}
    for holder, expected in ((granular, [("TS501", "m.a", "fixed")]), (atomic, [])):
        schema = {"type": "object", "properties": {"m": holder}}
        assert _found({"m": {"a": 1}}, schema, old={"m": {"a": 2}}) == expected


# -- where rules run ----------------------------------------------------------------------------


def test_rules_of_all_of_branches_run():
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "allOf": [
            {"x-kubernetes-validations": [{"rule": "self.n > 0", "message": "branch"}]},
            {"properties": {"n": {"x-kubernetes-validations": [{"rule": "self < 5", "message": "deep"}]}}},
        ],
    }
    assert _found({"n": 0}, schema) == [("TS501", "", "branch")]
    assert _found({"n": 7}, schema) == [("TS501", "n", "deep")]
    assert sum(1 for _ in cel.iter_rules(schema)) == 2


def test_null_values_run_no_rules():
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "nullable": True, "x-kubernetes-validations": [{"rule": "self > 0"}]}},
    }
    assert _found({"n": None}, schema) == []


# -- values as the server shows them -----------------------------------------------------------


def test_keyword_properties_are_reachable_escaped_and_as_written():
    schema = _schema("self.namespace == 'a' && self.__namespace__ == 'a'", namespace={"type": "string"})
    assert _found({"namespace": "a"}, schema) == []
    assert escape_property("namespace") == "__namespace__"


def test_unescapable_property_names_are_invisible():
    schema = _schema("!has(self.x)", **{"1st": {"type": "string"}, "a b": {"type": "string"}})
    assert cel_value(schema, {"1st": "x", "a b": "y"}) == {}
    assert escape_property("1st") is None and escape_property("a b") is None


def test_string_formats_become_cel_types():
    schema = _schema(
        "self.at > timestamp('2024-01-01T00:00:00Z') && self.wait > duration('1m') && self.raw == b'hi'",
        at={"type": "string", "format": "date-time"},
        wait={"type": "string", "format": "duration"},
        raw={"type": "string", "format": "byte"},
    )
    assert _found({"at": "2025-06-01T10:00:00Z", "wait": "1h30m", "raw": "aGk="}, schema) == []
    assert [c for c, _, _ in _found({"at": "2023-06-01T10:00:00Z", "wait": "1h", "raw": "aGk="}, schema)] == ["TS501"]
    value = cel_value(schema, {"at": "2025-06-01", "wait": "soon", "raw": "!!"})
    assert value == {"at": "2025-06-01", "wait": "soon", "raw": "!!"}  # unparsable: left to the schema check
    midnight = dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc)
    assert cel_value({"type": "string", "format": "date"}, "2025-06-01") == midnight


def test_integers_beyond_int64_are_doubles():
    assert cel_value({"type": "integer"}, 2**63) == float(2**63)
    assert cel_value({"type": "number"}, 2) == 2.0 and isinstance(cel_value({"type": "number"}, 2), float)


# -- the engines ---------------------------------------------------------------------------------


def test_engine_choice(monkeypatch):
    assert type(make_engine("cel-expr")).__name__ == "CelExprEngine"
    with pytest.raises(ImportError):
        make_engine("nonsense")
    monkeypatch.setattr(cel, "_DEFAULT", None)
    monkeypatch.setenv(cel.ENV_ENGINE, "celpy")
    pytest.importorskip("celpy")
    assert type(cel.default_engine()).__name__ == "CelPyEngine"
    monkeypatch.setattr(cel, "_DEFAULT", None)  # the next caller builds the configured engine again


def test_compile_errors_are_warnings_naming_the_rule():
    found = check_cel({"n": 1}, _schema("self.n >>> 1"))
    assert [(d.code, d.severity) for d in found] == [("TS502", Severity.WARNING)]
    assert "self.n >>> 1" in found[0].message and "could not be compiled" in found[0].message


def test_a_failing_library_function_is_not_a_verdict(monkeypatch):
    def broken(text):
        raise TypeError("a bug")

    monkeypatch.setattr(cel_lib, "is_sorted", broken)
    engine = make_engine("cel-expr")  # a new engine declares the patched function
    found = check_cel({"n": 1}, _schema("[1, 2].isSorted()"), engine=engine)
    assert [(d.code, d.severity) for d in found] == [("TS502", Severity.WARNING)]
    assert "a bug" in found[0].message


def test_both_engines_reject_an_absent_field():
    celpy = pytest.importorskip("celpy")
    assert celpy
    for name in ("cel-expr", "celpy"):
        engine = make_engine(name)
        with pytest.raises(CelEvalError, match="no such key: n"):
            run(engine, "self.n > 0", {})


def test_cel_python_says_not_evaluable_where_it_is_not_cel():
    pytest.importorskip("celpy")
    found = check_cel({"n": 1}, _schema("self.n > 0.5"), engine=make_engine("celpy"))
    assert [(d.code, d.severity) for d in found] == [("TS502", Severity.WARNING)]
    assert check_cel({"n": 1}, _schema("self.n > 0.5"), engine=make_engine("cel-expr")) == []


# -- the Kubernetes libraries --------------------------------------------------------------------

LIBRARY_TRUE = [
    # quantity
    "isQuantity('1Gi') && !isQuantity('1 Gi')",
    "quantity('2Gi').isGreaterThan(quantity('1Gi')) && quantity('1').isLessThan(quantity('1001m'))",
    "quantity('2Gi').compareTo(quantity('2048Mi')) == 0 && quantity('1') == quantity('1000m')",
    "quantity('2Gi').asInteger() == 2147483648 && quantity('1.5').asApproximateFloat() == 1.5",
    "quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi') && quantity('1').sub(1).sign() == 0",
    "!quantity('1500m').isInteger() && quantity('-1').sign() == -1",
    # URL
    "isURL('https://example.com:8443/a?b=c') && !isURL('not a url') && isURL('/just/a/path')",
    "url('https://example.com:8443/a?b=c').getScheme() == 'https'",
    "url('https://example.com:8443/a').getHost() == 'example.com:8443'",
    "url('https://[::1]:80/').getHostname() == '::1' && url('https://[::1]:80/').getPort() == '80'",
    "url('https://example.com/a%20b').getEscapedPath() == '/a%20b'",
    "url('https://example.com/?b=c&b=d').getQuery()['b'] == ['c', 'd']",
    # IP and CIDR
    "isIP('10.0.0.1') && isIP('::1') && !isIP('10.0.0.256') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')",
    "ip('10.0.0.1').family() == 4 && ip('::1').family() == 6 && ip('127.0.0.1').isLoopback()",
    "ip('0.0.0.0').isUnspecified() && ip('10.0.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
    "ip('169.254.1.1').isLinkLocalUnicast() && ip('224.0.0.1').isLinkLocalMulticast()",
    "ip('ff02::1').isLinkLocalMulticast() && !ip('ff05::1').isLinkLocalMulticast()",
    "!ip('10.0.0.1').isLinkLocalUnicast()",
    "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')",
    "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/33') && !isCIDR('10.0.0.0')",
    "cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
    "!cidr('10.0.0.0/8').containsIP('11.0.0.1') && !cidr('10.0.0.0/8').containsIP('::1')",
    "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))",
    "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')",
    "cidr('10.0.0.0/8').prefixLength() == 8",
    "string(ip('10.0.0.1')) == '10.0.0.1' && string(cidr('::1/128')) == '::1/128' && string(3) == '3'",
    # format
    "!format.dns1123Label().validate('abc').hasValue() && format.dns1123Label().validate('ABC').hasValue()",
    "format.named('dns1035Label').hasValue() && !format.named('nope').hasValue()",
    "format.named('qualifiedName').value().validate('example.com/name') == optional.none()",
    "format.labelValue().validate('ok').orValue([]) == []",
    (
        "format.dns1123Subdomain().validate('a..b').value().size() == 1 && !format.uuid().validate("
        "'123e4567-e89b-12d3-a456-426614174000').hasValue()"
    ),
    # lists
    "[1, 2, 3].isSorted() && ![3, 1].isSorted() && [1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0",
    "[1, 5, 2].max() == 5 && [4, 2, 9].min() == 2 && ['b', 'a'].min() == 'a'",
    "[1, 2, 3].indexOf(2) == 1 && [1, 2, 2].lastIndexOf(2) == 2 && ['a'].indexOf('b') == -1",
    # regex
    "'abc123def456'.find('[0-9]+') == '123' && 'abc'.find('[0-9]') == ''",
    "'abc123def456'.findAll('[0-9]+') == ['123', '456'] && 'a1b2c3'.findAll('[0-9]', 2) == ['1', '2']",
    # strings
    "'Hello'.lowerAscii() == 'hello' && 'Hello'.upperAscii() == 'HELLO' && 'Ä'.lowerAscii() == 'Ä'",
    "' x '.trim() == 'x' && 'a,b,c'.split(',') == ['a', 'b', 'c'] && 'a,b,c'.split(',', 2) == ['a', 'b,c']",
    "['a', 'b'].join('-') == 'a-b' && ['a', 'b'].join() == 'ab'",
    "'abcabc'.indexOf('c') == 2 && 'abcabc'.indexOf('c', 3) == 5 && 'abcabc'.lastIndexOf('c') == 5",
    "'abc'.charAt(1) == 'b' && 'abc'.charAt(3) == '' && 'abc'.substring(1) == 'bc' && 'abc'.substring(1, 2) == 'b'",
    "'abab'.replace('b', 'x') == 'axax' && 'abab'.replace('b', 'x', 1) == 'axab'",
    "strings.quote('a\"b') == '\"a\\\\\"b\"'",
    # sets
    "sets.contains([1, 2, 3], [1, 3]) && !sets.contains([1], [2]) && sets.equivalent([1, 2], [2, 1, 1])",
    "sets.intersects([1, 2], [2, 3]) && !sets.intersects([1], [2])",
]


@pytest.mark.parametrize("rule", LIBRARY_TRUE)
def test_kubernetes_library_functions(engine, rule):
    assert run(engine, rule) is True


@pytest.mark.parametrize(
    ("rule", "error"),
    [
        ("quantity('lots').isInteger()", "not a Kubernetes quantity"),
        ("quantity('1500m').asInteger() == 1", "cannot convert value to integer"),
        ("url('not a url').getScheme() == ''", "URL parse error"),
        ("ip('10.0.0.256').family() == 4", "parse error"),
        ("cidr('10.0.0.0').prefixLength() == 0", "parse error"),
        ("ip('10.0.0.1').prefixLength() == 8", "no such overload"),
        ("'abc'.charAt(4) == ''", "index out of range"),
        ("'abc'.substring(2, 1) == ''", "index out of range"),
        ("[].max() == 1", "max called on empty list"),
        ("[1, 'a'].isSorted()", "no such overload"),
        ("'a'.find('(') == ''", "invalid regular expression"),
        ("[9223372036854775807, 1].sum() > 0", "integer overflow"),
    ],
)
def test_kubernetes_library_errors_are_evaluation_errors(engine, rule, error):
    with pytest.raises(CelEvalError, match=error):
        run(engine, rule)


def test_library_rule_in_a_crd_runs_through_check_cel():
    schema = _schema(
        {"rule": "quantity(self.size).compareTo(quantity('1Ti')) <= 0", "message": "too big"},
        size={"x-kubernetes-int-or-string": True},
    )
    assert _found({"size": "500Gi"}, schema) == []
    assert _found({"size": "2Ti"}, schema) == [("TS501", "", "too big")]


def test_rewrites_leave_literals_and_comments_alone():
    rule = "format.named('x').hasValue() // format.named(y)\n && 'format.named(z)' != ''"
    out = rewrite_format_calls(rule)
    assert out.count("__k8s_format_known") == 1 and "'format.named(z)'" in out and "// format.named(y)" in out
    chained = rewrite_format_calls("self.items[0].f(1).validate(self.x) == optional.none()")
    assert chained == "optional.ofNonZeroValue(__k8s_format_errors(self.items[0].f(1), self.x)) == optional.none()"
    assert rewrite_format_calls("a.validate(b") == "a.validate(b"  # unbalanced: left to the parser


def test_compile_errors_of_the_engine_are_cel_compile_errors(engine):
    with pytest.raises(CelCompileError, match="undeclared reference"):
        engine.compile("nosuchfunction(self)")


def test_importing_the_checker_loads_no_cel_engine():
    # Engines (and protobuf, RE2) load on the first rule evaluated, never at import.
    import subprocess
    import sys

    code = (
        "import sys, trainspec.check, trainspec.check.cel.validations, trainspec.check.crd_cache, trainspec.check.cel.k8s_library; "
        "print(sorted(m for m in ('cel_expr_python', 'celpy', 'google.protobuf', 're2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    rule_less = check_cel({"a": 1}, {"type": "object", "properties": {"a": {"type": "integer"}}})
    assert rule_less == []
