"""Value types: quantities, durations, parameter counts, names."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from trainspec.dsl.framework.types import Duration, ParamCount, Quantity


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("96", "96"),
        (96, "96"),
        ("1600Gi", "1600Gi"),
        ("500m", "500m"),
        (0.5, "500m"),
        ("0.5", "500m"),
        ("1.5Gi", "1536Mi"),
        ("2048Mi", "2Gi"),
        ("1000", "1k"),
        ("1e3", "1k"),
        ("1.5", "1500m"),
        ("0", "0"),
        ("100Mi", "100Mi"),
        ("1Ki", "1Ki"),
        ("12e6", "12M"),
        ("0.1", "100m"),
        ("1u", "1u"),
    ],
)
def test_quantities_are_canonical(raw, canonical) -> None:
    assert str(Quantity.parse(raw)) == canonical


@pytest.mark.parametrize("raw", ["1600GB", "", "Gi", "1.2.3", "-", True, None, [], float("inf"), "1 Gi"])
def test_bad_quantities_are_rejected(raw) -> None:
    with pytest.raises(ValueError, match=r"quantity|finite number|a string like"):
        Quantity.parse(raw)


def test_quantities_emit_ints_where_they_can() -> None:
    assert Quantity.parse("8").to_k8s() == 8
    assert Quantity.parse(8).to_k8s() == 8
    assert Quantity.parse("64Gi").to_k8s() == "64Gi"
    assert Quantity.parse("2000").to_k8s() == "2k"


# 8e6 Ti is below 2^63-1 bytes, the largest quantity (tests/dsl/test_bounds.py covers the bound).
@given(st.integers(min_value=0, max_value=8 * 10**6), st.sampled_from(["", "k", "M", "G", "Ki", "Mi", "Gi", "Ti", "m"]))
def test_canonical_form_is_exact_and_stable(number: int, suffix: str) -> None:
    """Parsing the canonical text gives the same amount and the same text again."""
    quantity = Quantity.parse(f"{number}{suffix}")
    again = Quantity.parse(str(quantity))
    assert again.value == quantity.value
    assert str(again) == str(quantity)


@given(st.fractions(min_value=0, max_value=10**6, max_denominator=1000))
def test_canonical_decimal_form_never_loses_precision(value: Fraction) -> None:
    quantity = Quantity(value)
    assert Quantity.parse(str(quantity)).value >= value  # finer than 1n rounds up, like Kubernetes


@pytest.mark.parametrize(
    ("raw", "seconds", "text"),
    [
        ("72h", 259200, "72h"),
        ("90m", 5400, "1h30m"),
        ("1h30m", 5400, "1h30m"),
        ("2d", 172800, "48h"),
        ("45s", 45, "45s"),
    ],
)
def test_durations(raw, seconds, text) -> None:
    duration = Duration.parse(raw)
    assert duration.seconds == seconds and str(duration) == text


@pytest.mark.parametrize("raw", ["72", 72, "0h", "", "1w", "h", "1.5h", None])
def test_bad_durations(raw) -> None:
    with pytest.raises(ValueError, match=r"duration|longer than zero"):
        Duration.parse(raw)


@pytest.mark.parametrize(
    ("raw", "count"),
    [
        ("70B", 70 * 10**9),
        ("405B", 405 * 10**9),
        ("7.5B", 7_500_000_000),
        ("350M", 350 * 10**6),
        ("1.2T", 1_200_000_000_000),
        (124_000_000, 124_000_000),
    ],
)
def test_parameter_counts(raw, count) -> None:
    assert ParamCount.parse(raw).count == count


@pytest.mark.parametrize("raw", ["70 billion", "B", "-7B", 0, "0B", True, 1.5])
def test_bad_parameter_counts(raw) -> None:
    with pytest.raises(ValueError, match=r"parameter count|a count like"):
        ParamCount.parse(raw)
