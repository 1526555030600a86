"""Text from outside the engine (the cluster, other processes), made safe to print.

A release's clientId, a pod's message, helm's error or another process's command line may
hold terminal control sequences: ESC [ … would recolour, move the cursor, retitle the window
or hide what follows. They are shown escaped (`\\x1b`), never sent to the terminal.
"""

from __future__ import annotations

import re

# C0 (but tab and line feed, kept when lines are allowed), DEL, C1, and the bidirectional
# overrides and isolates that reorder what the reader sees.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if char == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: str, *, lines: bool = True) -> str:
    """`text` with every control character escaped; line feeds and tabs kept when `lines`."""
    pattern = _CONTROL if lines else _CONTROL_ONE_LINE
    return pattern.sub(_escape, text)
