"""The one quantity parser and formatter (issue 10, item 3): the API server's grammar and rounding,
exact arithmetic, a bound instead of silent caps and overflows, and work linear in the input."""

from __future__ import annotations

import contextlib
import sys
import tracemalloc
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from trainspec.dsl.framework.quantity import (
    MAX_QUANTITY,
    QUANTITY_PATTERN,
    Quantity,
    QuantityError,
    format_quantity,
    is_quantity,
    parse_quantity,
    quantity_value,
)

NANO = Fraction(1, 10**9)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # Values from the API server's own parse table (k8s.io/apimachinery resource tests).
        ("0", 0),
        ("0Ki", 0),
        ("1Ki", 1024),
        ("3Ei", 3 * 2**60),
        ("5n", 5 * NANO),
        ("50k", 50000),
        ("1E", 10**18),
        ("9E", 9 * 10**18),
        ("1E-3", Fraction(1, 1000)),
        ("1.3E+6", 1300000),
        ("100.035k", 100035),
        ("0.0005k", Fraction(1, 2)),
        ("1.7E18", 17 * 10**17),
        ("100.035Ki", Fraction(10243584, 100)),
        (".001", Fraction(1, 1000)),
        ("1.", 1),
        ("1.G", 10**9),
        ("+1", 1),
        ("-2Mi", -(2**21)),
        # ... and what it rounds: a value finer than 1n rounds up, away from zero.
        ("3.001n", 4 * NANO),
        ("1.1E-9", 2 * NANO),
        ("0.0000000001", NANO),
        ("0.5e-9", NANO),
        ("0.9n", NANO),
        ("0.00000012345", 124 * NANO),
        ("0.00000012354", 124 * NANO),
        ("0.000000000001Ki", 2 * NANO),
        ("-0.1n", -NANO),
        ("1e-5000", NANO),
    ],
)
def test_parses_as_the_api_server_does(text: str, value: Fraction) -> None:
    assert parse_quantity(text).value == value
    assert is_quantity(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        ".",
        "-.",
        "1.1.M",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        ".5i",
        "1i",
        "-3.01i",
        "-3.01e-",
        " 1",
        "1 ",
        "1KiB",
        "--1",
        "1e",
        "1e+",
        "e3",
        "1gi",
        "1e2.5",
    ],
)
def test_rejects_what_the_api_server_rejects(text: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(text)
    assert caught.value.reason == "syntax"
    assert not is_quantity(text)


@pytest.mark.parametrize(
    "text",
    [
        str(MAX_QUANTITY + 1),
        "9223372036854775808",
        "8Ei",
        "9Ei",  # the server caps binary ones silently
        "9223372036854775807Ki",
        "1e19",
        "12E",
        "1e5000",
        "1e3000000",  # and keeps decimal ones of any size
        "1e2147483648",
        "1e-2147483648",
        "1e99999999999999999999",  # exponents the server truncates to int32
    ],
)
def test_out_of_range_is_a_range_error(text: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(text)
    assert caught.value.reason == "range"


def test_the_bound_is_exactly_int64() -> None:
    assert parse_quantity(str(MAX_QUANTITY)).value == MAX_QUANTITY
    assert parse_quantity(f"-{MAX_QUANTITY}").value == -MAX_QUANTITY
    assert parse_quantity("7Ei").value == 7 * 2**60
    assert Quantity.parse(MAX_QUANTITY).value == MAX_QUANTITY
    with pytest.raises(QuantityError):
        Quantity.parse(MAX_QUANTITY + 1)
    with pytest.raises(QuantityError):
        Quantity.parse(10**5000)  # an int too long to print is described, not printed
    with pytest.raises(QuantityError):
        Quantity.parse(1e300)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("1.5Gi", "1536Mi"),
        ("2000", "2k"),
        ("1025Ki", "1025Ki"),
        ("0.5Ki", "512"),
        ("1.5", "1500m"),
        ("-1.5", "-1500m"),
        ("-0.1n", "-1n"),
        ("100.035Ki", "102435840m"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    assert str(parse_quantity(text)) == canonical


def test_binary_values_keep_binary_digits() -> None:
    # As Kubernetes: once binary, 2000 stays 2000 (never 2k) when no binary suffix divides it.
    assert format_quantity(Fraction(2000), binary=True) == "2000"
    assert format_quantity(Fraction(2000), binary=False) == "2k"


def test_values_of_any_type_the_yaml_may_hold() -> None:
    assert quantity_value(8) == 8
    assert quantity_value(0.5) == Fraction(1, 2)
    assert quantity_value(" 3Ti ") == 3 * 2**40  # the API server's JSON decoder trims blanks
    for bad in (True, None, [], float("inf"), float("nan")):
        with pytest.raises(QuantityError, match=r"quantity|finite number|a string like"):
            quantity_value(bad)


def test_the_schema_pattern_is_the_grammar() -> None:
    import re

    pattern = re.compile(QUANTITY_PATTERN)
    for text in ("1", "1.", ".5", "+1e-3", "-2Mi", "9E"):
        assert pattern.match(text) and is_quantity(text)
    for text in ("", ".", "1e", "1 Gi", "1KiB"):
        assert not pattern.match(text) and not is_quantity(text)


# -- work is linear in the input ---------------------------------------------------------------

MEGABYTE = 10**6


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1" * MEGABYTE, "range"),
        ("1e" + "9" * MEGABYTE, "range"),
        ("1" * MEGABYTE + "x", "syntax"),
        ("0." + "0" * MEGABYTE + "x", "syntax"),
    ],
)
def test_a_megabyte_of_digits_builds_no_big_integer(text: str, reason: str) -> None:
    """With the interpreter's int/str conversion limit at its minimum, converting any long digit
    run would raise a plain ValueError, not a QuantityError: the parser only counts them."""
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        with pytest.raises(QuantityError) as caught:
            parse_quantity(text)
    finally:
        sys.set_int_max_str_digits(previous)
    assert caught.value.reason == reason
    assert len(str(caught.value)) < 300  # the message quotes the start, not the megabyte


@pytest.mark.parametrize("text", ["0." + "0" * MEGABYTE + "1", "0." + "1" * MEGABYTE, "1." + "0" * MEGABYTE])
def test_long_fractions_round_in_bounded_space(text: str) -> None:
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        value = parse_quantity(text).value
    finally:
        sys.set_int_max_str_digits(previous)
    assert value.denominator in (1, 10**9) or (value * 10**9).denominator == 1


@pytest.mark.parametrize("text", ["1e3000000", "1e-3000000", "1e2147483647", "9" * 30 + "e-2147483647"])
def test_huge_exponents_allocate_nothing_large(text: str) -> None:
    """``Decimal('1e3000000')`` into a Fraction builds a 1.2 MB integer; the parser needs none."""
    tracemalloc.start()
    try:
        with contextlib.suppress(QuantityError):
            parse_quantity(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


# -- properties --------------------------------------------------------------------------------

SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
quantities = st.builds(
    lambda nano, binary: Quantity(Fraction(nano, 10**9), binary),
    st.integers(min_value=-MAX_QUANTITY * 10**9, max_value=MAX_QUANTITY * 10**9),
    st.booleans(),
)


@given(quantities)
def test_parse_of_format_is_the_same_quantity(quantity: Quantity) -> None:
    again = parse_quantity(str(quantity))
    assert again.value == quantity.value
    # The canonical form of what was parsed is a fixed point. (Not of any Quantity built by hand:
    # a binary-format 15625000, not a multiple of 1024, prints without a suffix and reads back as
    # decimal, 15625k, as Kubernetes' own String() and ParseQuantity do.)
    assert str(parse_quantity(str(again))) == str(again)
    if not quantity.binary:
        assert str(again) == str(quantity)


@given(
    st.decimals(allow_nan=False, allow_infinity=False, places=12, min_value=-(10**12), max_value=10**12),
    st.sampled_from(SUFFIXES),
)
def test_written_forms_parse_exactly_or_round_up_to_a_nano(number, suffix: str) -> None:
    text = f"{number:f}{suffix}"
    scale = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}.get(suffix) or Fraction(
        10
    ) ** {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}[suffix]
    exact = Fraction(number) * scale
    try:
        value = parse_quantity(text).value
    except QuantityError as exc:
        # A property over any input: raising is allowed, and then the error's kind is what is checked.
        assert exc.reason == "range" and abs(exact) > MAX_QUANTITY  # noqa: PT017
        return
    assert abs(exact) <= MAX_QUANTITY + 1
    assert abs(value) >= abs(exact) and abs(value) - abs(exact) < NANO  # away from zero, by less than 1n
    assert (value * 10**9).denominator == 1


@given(st.text(alphabet="0123456789.eE+-kMGTPiun", max_size=40))
def test_any_text_parses_or_is_a_quantity_error(text: str) -> None:
    try:
        quantity = parse_quantity(text)
    except QuantityError as exc:
        assert exc.reason in ("syntax", "range")  # noqa: PT017 (a property: raising is allowed, of these kinds)
        return
    assert abs(quantity.value) <= MAX_QUANTITY
