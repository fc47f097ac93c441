"""The Kubernetes CEL library shims (quantity, url, strings/lists extensions) and quantities."""

from __future__ import annotations

from fractions import Fraction

import pytest

from trainspec.check import CelEvalError, default_engine
from trainspec.dsl.framework.quantity import QuantityError, is_quantity, parse_quantity as parse

pytest.importorskip("celpy", reason="cel-python is needed for the CEL shims")


def run(rule, value=None):
    engine = default_engine()
    return engine.evaluate(engine.compile(rule), {"self": value})


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("500m", Fraction(1, 2)),
        ("1Gi", 2**30),
        ("1.5k", 1500),
        ("1e3", 1000),
        ("-2Mi", -(2**21)),
        (".5", Fraction(1, 2)),
        ("100n", Fraction(1, 10**7)),
    ],
)
def test_parse_quantity(text, value):
    assert parse(text).value == value


@pytest.mark.parametrize("text", ["", "1 Gi", "Gi", "1gi", "1.2.3", "1KiB", "--1"])
def test_bad_quantities(text):
    assert not is_quantity(text)
    with pytest.raises(QuantityError):
        parse(text)


@pytest.mark.parametrize(
    "rule",
    [
        "isQuantity(self) && !isQuantity('1 Gi')",
        "quantity(self).isGreaterThan(quantity('1Gi'))",
        "quantity('1').isLessThan(quantity('1001m'))",
        "quantity(self).compareTo(quantity('2048Mi')) == 0",
        "quantity(self).asInteger() == 2147483648",
        "quantity(self).add(quantity('1Gi')).compareTo(quantity('3Gi')) == 0",
        "quantity(self).sub(1).isLessThan(quantity(self))",
        "quantity('1500m').isInteger() == false && quantity(self).sign() == 1",
        "quantity('1') == quantity('1000m')",
    ],
)
def test_quantity_shims(rule):
    assert run(rule, "2Gi") is True


def test_quantity_errors_are_evaluation_errors():
    with pytest.raises(CelEvalError):
        run("quantity('lots').isInteger()")
    with pytest.raises(CelEvalError):
        run("quantity('1500m').asInteger() == 1")


@pytest.mark.parametrize(
    "rule",
    [
        "isURL('https://example.com:8443/a?b=c') && !isURL('not a url') && isURL('/just/a/path')",
        "url('https://example.com:8443/a?b=c').getScheme() == 'https'",
        "url('https://example.com:8443/a?b=c').getHost() == 'example.com:8443'",
        "url('https://example.com:8443/a?b=c').getHostname() == 'example.com'",
        "url('https://example.com:8443/a?b=c').getPort() == '8443'",
        "url('https://example.com:8443/a?b=c').getEscapedPath() == '/a'",
        "url('https://example.com/?b=c&b=d').getQuery()['b'] == ['c', 'd']",
    ],
)
def test_url_shims(rule):
    assert run(rule) is True


@pytest.mark.parametrize(
    "rule",
    [
        "'Hello'.lowerAscii() == 'hello' && 'Hello'.upperAscii() == 'HELLO'",
        "' x '.trim() == 'x' && 'a,b,c'.split(',') == ['a', 'b', 'c'] && ['a', 'b'].join('-') == 'a-b'",
        "'abcabc'.indexOf('c') == 2 && 'abcabc'.lastIndexOf('c') == 5 && 'abc'.charAt(1) == 'b'",
        "'abc'.substring(1) == 'bc' && 'abc'.replace('b', 'x') == 'axc'",
        "[1, 2, 3].isSorted() && ![3, 1].isSorted() && [1, 2, 3].sum() == 6 && [1, 5, 2].max() == 5",
        "[1, 2, 3].indexOf(2) == 1 && [1, 2, 2].lastIndexOf(2) == 2",
        "'abc123def456'.find('[0-9]+') == '123' && 'abc123def456'.findAll('[0-9]+') == ['123', '456']",
    ],
)
def test_string_and_list_shims(rule):
    assert run(rule) is True
