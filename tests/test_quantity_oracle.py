"""parse_quantity against an independent oracle of Kubernetes' ParseQuantity rules.

The oracle below is written from the grammar documented in
k8s.io/apimachinery/pkg/api/resource/quantity.go, not from our parser: a character-by-
character recursive descent, no regular expression, its own suffix table. Kubernetes' rules:

    <quantity>        ::= <signedNumber><suffix>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedInteger> | "E" <signedInteger>
    <signedNumber>    ::= <number> | <sign><number>
    <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <sign>            ::= "+" | "-"

(the exponent is read as a 64-bit integer, so it has no fraction), and a non-zero value
finer than 1n is rounded up (away from zero) to the next nano.

The engine's deliberate limits, where it may refuse what Kubernetes takes: at most
MAX_LENGTH characters, and a decimal exponent of at most MAX_EXPONENT in magnitude. Inside
them the two must agree on every string: accepted or not, and the exact value.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import example, given, settings
from hypothesis import strategies as st

from installer.decide.quantity import MAX_EXPONENT, MAX_LENGTH, QuantityError, parse_quantity

ORACLE_SUFFIXES: dict[str, Fraction] = {
    "Ki": Fraction(2) ** 10,
    "Mi": Fraction(2) ** 20,
    "Gi": Fraction(2) ** 30,
    "Ti": Fraction(2) ** 40,
    "Pi": Fraction(2) ** 50,
    "Ei": Fraction(2) ** 60,
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10) ** 3,
    "M": Fraction(10) ** 6,
    "G": Fraction(10) ** 9,
    "T": Fraction(10) ** 12,
    "P": Fraction(10) ** 15,
    "E": Fraction(10) ** 18,
}
DIGITS = "0123456789"
INT64 = 2**63


def _digits(text: str, at: int) -> int:
    """The index after the run of ASCII digits starting at `at`."""
    while at < len(text) and text[at] in DIGITS:
        at += 1
    return at


def oracle(text: str) -> tuple[Fraction, int | None] | None:
    """(value, decimal exponent or None) when Kubernetes accepts `text`, else None."""
    at = 1 if text[:1] in ("+", "-") else 0
    negative = text[:1] == "-"
    whole_end = _digits(text, at)
    whole = text[at:whole_end]
    fraction = ""
    at = whole_end
    if at < len(text) and text[at] == ".":
        fraction_end = _digits(text, at + 1)
        fraction = text[at + 1 : fraction_end]
        at = fraction_end
        if not whole and not fraction:  # "." alone is no <number>
            return None
    elif not whole:
        return None
    number = Fraction(int(whole or "0")) + (
        Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0
    )
    suffix = text[at:]
    exponent: int | None = None
    if suffix in ORACLE_SUFFIXES:
        value = number * ORACLE_SUFFIXES[suffix]
    elif suffix[:1] in ("e", "E") and len(suffix) > 1:
        body = suffix[1:]
        sign_len = 1 if body[:1] in ("+", "-") else 0
        if _digits(body, sign_len) != len(body) or len(body) == sign_len:
            return None
        exponent = int(body)
        if not -INT64 <= exponent < INT64:
            return None
        if abs(exponent) > 10 * MAX_EXPONENT:  # far past the engine's limit: not computed
            return Fraction(0), exponent
        value = number * Fraction(10) ** exponent
    else:
        return None
    nanos = value * 10**9
    if nanos.denominator != 1:
        value = Fraction(-(-nanos.numerator // nanos.denominator), 10**9)
    return (-value if negative else value), exponent


def within_limits(text: str, exponent: int | None) -> bool:
    return len(text) <= MAX_LENGTH and (exponent is None or abs(exponent) <= MAX_EXPONENT)


def engine(text: str) -> Fraction | None:
    try:
        return parse_quantity(text)
    except QuantityError:
        return None


# --- what a quantity looks like: grammatical ones, and near misses -----------------------

ALPHABET = "0123456789.+-eEKMGTPkimnu i\u0663"
sign = st.sampled_from(["", "+", "-"])
digits = st.text(DIGITS, max_size=12)
number = st.one_of(
    digits.filter(bool),
    st.tuples(digits.filter(bool), digits).map(lambda p: f"{p[0]}.{p[1]}"),
    digits.filter(bool).map(lambda d: f".{d}"),
)
suffix = st.one_of(
    st.sampled_from(sorted(ORACLE_SUFFIXES)),
    st.tuples(st.sampled_from("eE"), sign, st.text(DIGITS, min_size=1, max_size=4)).map("".join),
)
grammatical = st.tuples(sign, number, suffix).map("".join)
near_miss = st.one_of(
    st.text(ALPHABET, max_size=16),
    st.tuples(grammatical, st.text(ALPHABET, max_size=3)).map("".join),
    st.tuples(st.text(ALPHABET, max_size=3), grammatical).map("".join),
)


@settings(max_examples=1500)
@given(text=st.one_of(grammatical, near_miss))
@example("1939588112n")
@example("100u")
@example("0.5n")
@example(".")
@example("+.")
@example("1.")
@example(".5Gi")
@example("1e")
@example("1E")
@example("1e+")
@example("1e3.5")
@example("1ei")
@example("1e-65")
@example("1e64")
@example("-0")
def test_engine_accepts_exactly_what_kubernetes_accepts(text: str) -> None:
    expected = oracle(text)
    got = engine(text)
    if expected is None:
        assert got is None, f"{text!r}: Kubernetes refuses it, the engine read {got}"
        return
    value, exponent = expected
    if not within_limits(text, exponent):
        assert got is None, f"{text!r} is past the engine's limits but was read as {got}"
        return
    assert got == value, f"{text!r}: Kubernetes reads {value}, the engine {got}"


@given(n=st.integers(min_value=0, max_value=10**18), unit=st.sampled_from(["n", "u", "m", ""]))
def test_kubelet_cpu_in_any_decimal_unit_is_read(n: int, unit: str) -> None:
    # A node whose allocatable CPU the kubelet wrote in nano-cores is a node, not skipped.
    assert engine(f"{n}{unit}") == n * ORACLE_SUFFIXES[unit]
