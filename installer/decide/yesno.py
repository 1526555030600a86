"""The one reading of a yes/no environment variable. Pure.

1/true/yes/on or 0/false/no/off, in any case; unset or empty is the default. Anything else
is bad input: a typo (`TRACEBLOC_NO_AUTOSTART=ture`) must not silently decide either way.
"""

from __future__ import annotations

from collections.abc import Mapping

from installer.decide.errors import BadInput

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def flag(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in TRUE:
        return True
    if raw in FALSE:
        return False
    raise BadInput(f"{name}={env[name]!r} is not understood",
                   f"set {name} to 1 (yes) or 0 (no), or unset it")  # fmt: skip
