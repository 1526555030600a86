"""The one reading of a yes/no variable, and of an answer typed at a y/N question. Pure.

A variable: 1/true/yes/on or 0/false/no/off in any case; unset or empty is the default;
anything else is bad input (a typo must not decide). An answer: y/yes is yes, empty is the
default, anything else is no.
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
    raise BadInput(
        f"{name}={env[name]!r} is not understood", f"set {name} to 1 (yes) or 0 (no), or unset it"
    )


ANSWER_YES = ("y", "yes")


def answer(typed: str, *, default: bool = False) -> bool:
    """An answer typed at a y/N ([Y/n] when `default`) question: spaces and case aside."""
    said = typed.strip().lower()
    return said in ANSWER_YES if said else default


# Every yes/no variable, read only through `flag` and all checked up front, so a typo stops
# before anything changes. NO_COLOR and TB_PLAIN mean "set to anything" and are not here.
VARIABLES = (
    "TRACEBLOC_SKIP_PREFLIGHT",
    "TRACEBLOC_ALLOW_NETWORK_FS",
    "TRACEBLOC_FORCE_REINSTALL",
    "TB_FORCE_REINSTALL",
    "TB_SET_CONTEXT_NAMESPACE",
    "TRACEBLOC_NO_AUTOSTART",
    "TRACEBLOC_SKIP_LEFTOVER_GUARD",
    "TRACEBLOC_SKIP_DAILY_USER",
    "TRACEBLOC_NO_REBOOT",
    "TRACEBLOC_RESUME",
    "TRACEBLOC_RECREATE_CLUSTER",
)


def check_all(env: Mapping[str, str]) -> dict[str, bool]:
    """Each of `VARIABLES` that is set, read (BadInput for the first typo, naming it)."""
    return {name: flag(env, name) for name in VARIABLES if env.get(name, "").strip()}
