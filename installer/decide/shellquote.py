"""One quoter per shell: a command printed for pasting reads back, in the shell it is pasted
into, as the argv it names. POSIX shells: `shlex.quote`. PowerShell: single quotes with each
single-quote character doubled (nothing inside is expanded), and only where needed."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence

_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./\\-]+")


def posix(part: str) -> str:
    return shlex.quote(part)


# Every character PowerShell reads as a single quote; inside a quoted string each is doubled.
SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"


def powershell(part: str) -> str:
    if part and _PLAIN.fullmatch(part) and not part.startswith("@"):  # @x would splat
        return part
    return "'" + "".join(c * 2 if c in SINGLE_QUOTES else c for c in part) + "'"


def join(argv: Sequence[str], *, windows: bool | None = None) -> str:
    """`argv` for the shell of this OS (PowerShell on Windows), or of the one named."""
    windows = sys.platform.startswith("win") if windows is None else windows
    quote = powershell if windows else posix
    return " ".join(quote(part) for part in argv)
