"""The Kubernetes quantity grammar, rounding, and the `cpu=N,memory=MGi` size form."""

from __future__ import annotations

import re
import time
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from installer.decide.quantity import (
    QuantityError,
    parse_quantity,
    parse_size,
    render_size,
    to_bytes,
    to_millicores,
)

GiB = 2**30
# Written out independently of installer.decide.quantity's tables, so a wrong table fails here.
MULTIPLIERS: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(1024),
    "Mi": Fraction(1024**2),
    "Gi": Fraction(1024**3),
    "Ti": Fraction(1024**4),
    "Pi": Fraction(1024**5),
    "Ei": Fraction(1024**6),
    "e0": Fraction(1),
    "e3": Fraction(1000),
    "E3": Fraction(1000),
    "e+3": Fraction(1000),
    "e-3": Fraction(1, 1000),
    "E-6": Fraction(1, 10**6),
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("0", Fraction(0), id="zero"),
        pytest.param("4", Fraction(4), id="plain-int"),
        pytest.param("007", Fraction(7), id="leading-zeros"),
        pytest.param("+3", Fraction(3), id="explicit-plus"),
        pytest.param("-2", Fraction(-2), id="negative"),
        pytest.param("7.5", Fraction(15, 2), id="decimal"),
        pytest.param(".5", Fraction(1, 2), id="decimal-without-integer-part"),
        pytest.param("5.", Fraction(5), id="decimal-without-fraction-part"),
        pytest.param("0.1", Fraction(1, 10), id="decimal-is-exact-not-float"),
        pytest.param("1e3", Fraction(1000), id="exponent-lower"),
        pytest.param("1E3", Fraction(1000), id="exponent-upper"),
        pytest.param("1e-3", Fraction(1, 1000), id="negative-exponent"),
        pytest.param("2.5e+2", Fraction(250), id="decimal-with-signed-exponent"),
        pytest.param("1E", Fraction(10**18), id="bare-E-is-exa-not-exponent"),
        pytest.param("250m", Fraction(1, 4), id="milli"),
        pytest.param("1939588112n", Fraction(1939588112, 10**9), id="kubelet-nano-cores"),
        pytest.param("500u", Fraction(1, 2000), id="micro"),
        pytest.param("0.5n", Fraction(1, 10**9), id="finer-than-nano-rounds-up"),
        pytest.param("-0.5n", Fraction(-1, 10**9), id="negative-finer-than-nano-rounds-away"),
        pytest.param("1e-12", Fraction(1, 10**9), id="tiny-exponent-rounds-up-to-a-nano"),
        pytest.param("1.5k", Fraction(1500), id="kilo-lowercase"),
        pytest.param("2M", Fraction(2 * 10**6), id="mega"),
        pytest.param("3G", Fraction(3 * 10**9), id="giga"),
        pytest.param("1T", Fraction(10**12), id="tera"),
        pytest.param("1P", Fraction(10**15), id="peta"),
        pytest.param("1Ki", Fraction(1024), id="kibi"),
        pytest.param("16Mi", Fraction(16 * 2**20), id="mebi"),
        pytest.param("1.5Gi", Fraction(3 * 2**29), id="decimal-gibi"),
        pytest.param("1Ti", Fraction(2**40), id="tebi"),
        pytest.param("1Pi", Fraction(2**50), id="pebi"),
        pytest.param("1Ei", Fraction(2**60), id="exbi"),
        pytest.param("16302572Ki", Fraction(16302572 * 1024), id="typical-node-memory"),
        pytest.param("3920m", Fraction(392, 100), id="typical-node-cpu"),
    ],
)
def test_valid_quantities(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("GB", id="GB-is-not-a-suffix"),
        pytest.param("16GB", id="number-with-GB"),
        pytest.param("1e", id="exponent-without-digits"),
        pytest.param("1e+", id="exponent-sign-without-digits"),
        pytest.param("Gi", id="suffix-without-number"),
        pytest.param("m", id="milli-without-number"),
        pytest.param(".", id="lone-dot"),
        pytest.param(" 1", id="leading-space"),
        pytest.param("1 ", id="trailing-space"),
        pytest.param("1 Gi", id="space-before-suffix"),
        pytest.param("1\n", id="trailing-newline"),
        pytest.param("1.2.3", id="two-dots"),
        pytest.param("--1", id="double-sign"),
        pytest.param("+-1", id="mixed-signs"),
        pytest.param("1gi", id="lowercase-binary-suffix"),
        pytest.param("1K", id="uppercase-K"),
        pytest.param("1mi", id="milli-binary"),
        pytest.param("1Gi1", id="digits-after-suffix"),
        pytest.param("1e3Gi", id="exponent-and-suffix"),
        pytest.param("0x10", id="hex"),
        pytest.param("1_000", id="underscore-separator"),
        pytest.param("1,5", id="comma-decimal"),
        pytest.param("inf", id="inf"),
        pytest.param("nan", id="nan"),
        pytest.param("\u0663", id="arabic-indic-three"),
        pytest.param("\uff11Gi", id="fullwidth-one-gibi"),
        pytest.param("1\u0660", id="ascii-then-arabic-indic-zero"),
        pytest.param("1" * 5000, id="5000-digit-number"),
        pytest.param("0." + "1" * 5000, id="5000-digit-fraction"),
        pytest.param("1e" + "9" * 5000, id="5000-digit-exponent"),
    ],
)
def test_invalid_quantities(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("value", [None, 4, 4.0, b"4"], ids=["none", "int", "float", "bytes"])
def test_non_text_is_a_quantity_error(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["1e999999999", "1e-999999999", "9.9E999999999"])
def test_huge_exponent_is_rejected_quickly(text: str) -> None:
    started = time.monotonic()
    with pytest.raises(QuantityError):
        parse_quantity(text)
    # Generous bound: evaluating 10**999999999 would take minutes and gigabytes.
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("text", "millicores"),
    [
        pytest.param("4", 4000, id="whole-cores"),
        pytest.param("3920m", 3920, id="millicores"),
        pytest.param("0.5", 500, id="half-core"),
        pytest.param("1.9999", 1999, id="rounds-down-not-to-nearest"),
        pytest.param("0.0009", 0, id="below-one-millicore-is-zero"),
        pytest.param("1500.9m", 1500, id="fractional-millicores-round-down"),
        pytest.param("1e3", 1_000_000, id="exponent"),
        pytest.param("2k", 2_000_000, id="kilo-cores"),
    ],
)
def test_to_millicores_rounds_down(text: str, millicores: int) -> None:
    assert to_millicores(text) == millicores


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        pytest.param("16Gi", 16 * GiB, id="gibi"),
        pytest.param("1.5", 1, id="fraction-of-a-byte-rounds-down"),
        pytest.param("999m", 0, id="milli-bytes-round-down-to-zero"),
        pytest.param("1500m", 1, id="milli-bytes-above-one"),
        pytest.param("0.3Ki", 307, id="decimal-kibi-rounds-down"),  # 307.2
        pytest.param("8G", 8 * 10**9, id="decimal-giga"),
        pytest.param("1E", 10**18, id="exa"),
    ],
)
def test_to_bytes_rounds_down(text: str, nbytes: int) -> None:
    assert to_bytes(text) == nbytes


def test_to_millicores_and_to_bytes_raise_quantity_error() -> None:
    with pytest.raises(QuantityError):
        to_millicores("4 cores")
    with pytest.raises(QuantityError):
        to_bytes("16GB")


@pytest.mark.parametrize(
    ("millicores", "nbytes", "size"),
    [
        pytest.param(3000, 13 * GiB, "cpu=3,memory=13Gi", id="whole"),
        pytest.param(3999, 14 * GiB - 1, "cpu=3,memory=13Gi", id="rounds-down-both"),
        pytest.param(1000, GiB, "cpu=1,memory=1Gi", id="one-each"),
        pytest.param(999, GiB - 1, "cpu=0,memory=0Gi", id="below-one-each"),
        pytest.param(-5, -1, "cpu=0,memory=0Gi", id="negative-clamped-to-zero"),
    ],
)
def test_render_size(millicores: int, nbytes: int, size: str) -> None:
    assert render_size(millicores, nbytes) == size


@pytest.mark.parametrize(
    ("text", "cores", "nbytes"),
    [
        pytest.param("cpu=4,memory=16Gi", Fraction(4), Fraction(16 * GiB), id="whole"),
        pytest.param("cpu=500m,memory=1.5Gi", Fraction(1, 2), Fraction(3 * 2**29), id="fractional"),
        pytest.param("  cpu=2,memory=8G\n", Fraction(2), Fraction(8 * 10**9), id="outer-spaces"),
        pytest.param("cpu=1e1,memory=1E", Fraction(10), Fraction(10**18), id="exponent-and-exa"),
    ],
)
def test_parse_size_valid(text: str, cores: Fraction, nbytes: Fraction) -> None:
    assert parse_size(text) == (cores, nbytes)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("memory=16Gi,cpu=4", id="wrong-order"),
        pytest.param("cpu=4", id="missing-memory"),
        pytest.param("memory=16Gi", id="missing-cpu"),
        pytest.param("cpu=,memory=16Gi", id="empty-cpu"),
        pytest.param("cpu=0,memory=16Gi", id="zero-cpu"),
        pytest.param("cpu=4,memory=0Gi", id="zero-memory"),
        pytest.param("cpu=-1,memory=16Gi", id="negative-cpu"),
        pytest.param("cpu=4,memory=16GB", id="invalid-memory-quantity"),
        pytest.param("cpu=4,memory=16Gi,gpu=1", id="extra-pair"),
        pytest.param("cpu=4,memory=16Gi;", id="trailing-text"),
        pytest.param("xcpu=4,memory=16Gi", id="leading-text"),
        pytest.param("cpu=4;memory=16Gi", id="wrong-separator"),
        pytest.param("4,16Gi", id="bare-values"),
    ],
)
def test_parse_size_invalid(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_size(text)


# --- properties ---------------------------------------------------------------------------


@given(n=st.integers(min_value=0, max_value=10**30), suffix=st.sampled_from(sorted(MULTIPLIERS)))
def test_integer_with_any_suffix_scales_exactly(n: int, suffix: str) -> None:
    assert parse_quantity(f"{n}{suffix}") == n * MULTIPLIERS[suffix]


@given(
    whole=st.integers(min_value=0, max_value=10**12),
    digits=st.text("0123456789", min_size=1, max_size=9),
)
def test_decimal_is_exact(whole: int, digits: str) -> None:
    expected = whole + Fraction(int(digits), 10 ** len(digits))
    assert parse_quantity(f"{whole}.{digits}") == expected


@given(m=st.integers(min_value=0, max_value=10**15))
def test_millicores_round_trip(m: int) -> None:
    assert to_millicores(f"{m}m") == m


@given(cores=st.integers(min_value=0, max_value=10**6))
def test_whole_cores_are_thousand_millicores(cores: int) -> None:
    assert to_millicores(str(cores)) == cores * 1000


@given(millicores=st.integers(min_value=0, max_value=10**9), nbytes=st.integers(0, 2**50))
def test_render_size_rounds_down_to_whole_units(millicores: int, nbytes: int) -> None:
    match = re.fullmatch(r"cpu=(\d+),memory=(\d+)Gi", render_size(millicores, nbytes))
    assert match is not None
    cores, gib = int(match[1]), int(match[2])
    assert cores * 1000 <= millicores < (cores + 1) * 1000
    assert gib * GiB <= nbytes < (gib + 1) * GiB


@given(text=st.text())
def test_arbitrary_text_only_ever_raises_quantity_error(text: str) -> None:
    try:
        value = parse_quantity(text)
    except QuantityError:
        return
    assert isinstance(value, Fraction)
