"""Kubernetes resource quantities: exact parsing and the `cpu=N,memory=MGi` size form.

The grammar is apimachinery's resource.Quantity (`n`/`u` are nano and micro: the kubelet
reports CPU in nano-cores). Values are exact `Fraction`s; as in Kubernetes, a non-zero value
finer than 1n is rounded away from zero to the next nano.
"""

from __future__ import annotations

import re
from fractions import Fraction

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# An exponent beyond this is no machine's allocatable (and `1e999999999` would not end).
MAX_EXPONENT = 64

GIB = 2**30
NANO = 10**9

_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>\d+(?:\.\d*)?|\.\d+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE](?P<exp>[+-]?\d+))?",
    re.ASCII,  # \d is [0-9] only: a node reporting "٣Gi" has not reported 3Gi
)
# Longer than any real quantity; also below Python's int-from-text digit limit.
MAX_LENGTH = 128
_SIZE = re.compile(r"cpu=(?P<cpu>[^,=\s]+),memory=(?P<memory>[^,=\s]+)")


class QuantityError(ValueError):
    pass


def parse_quantity(text: str) -> Fraction:
    """Parse a Kubernetes quantity exactly; raise QuantityError for anything else."""
    match = _QUANTITY.fullmatch(text) if isinstance(text, str) else None
    if match is not None and len(text) > MAX_LENGTH:
        raise QuantityError(f"{text[:20]!r}… is too long to be a Kubernetes quantity")
    if match is None:
        shown = text if not isinstance(text, str) or len(text) <= 40 else text[:40] + "…"
        raise QuantityError(f"{shown!r} is not a Kubernetes quantity")
    value = Fraction(match["number"])
    suffix, exp = match["suffix"], match["exp"]
    if exp is not None:
        power = int(exp)
        if abs(power) > MAX_EXPONENT:
            raise QuantityError(f"{text!r} is out of range")
        value *= Fraction(10) ** power
    elif suffix in BINARY:
        value *= BINARY[suffix]
    else:
        value *= Fraction(10) ** DECIMAL[suffix or ""]
    value = _nano_up(value)
    return -value if match["sign"] == "-" else value


def _nano_up(value: Fraction) -> Fraction:
    """Kubernetes keeps at most nano precision: a finer non-negative value rounds up."""
    nanos = value * NANO
    if nanos.denominator == 1:
        return value
    return Fraction(-(-nanos.numerator // nanos.denominator), NANO)


def to_millicores(text: str) -> int:
    """CPU quantity in whole millicores, rounded down (never claim more than measured)."""
    return int((parse_quantity(text) * 1000) // 1)


def to_bytes(text: str) -> int:
    """Memory quantity in whole bytes, rounded down."""
    return int(parse_quantity(text) // 1)


def render_size(cpu_millicores: int, memory_bytes: int) -> str:
    """Whole cores and whole GiB, both rounded down: `cpu=<n>,memory=<m>Gi`."""
    return f"cpu={max(0, cpu_millicores) // 1000},memory={max(0, memory_bytes) // GIB}Gi"


def parse_size(text: str) -> tuple[Fraction, Fraction]:
    """Validate a `cpu=<quantity>,memory=<quantity>` pair; return (cores, bytes).

    Both must be positive: a size of nothing is not a size anyone meant to choose.
    """
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise QuantityError(f"{text!r} is not of the form cpu=<quantity>,memory=<quantity>")
    cpu = parse_quantity(match["cpu"])
    memory = parse_quantity(match["memory"])
    if cpu <= 0 or memory <= 0:
        raise QuantityError(f"{text!r}: cpu and memory must both be greater than zero")
    return cpu, memory
