"""The replaced scripts' settings as a run meets them: old flags translated before argparse
sees them, and one notice for each old variable that is set and no longer does anything. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from installer.decide.variables import VARIABLES, Fate


def notices(env: Mapping[str, str]) -> list[str]:
    """One line for each variable that is set and no longer does anything here."""
    lines = []
    set_now = {name for name, value in env.items() if value.strip()}
    for item in VARIABLES:
        if item.fate is Fate.HONOURED or item.name not in set_now:
            continue
        if item.fate is Fate.REPLACED:
            lines.append(f"{item.name} is not read any more: use {item.note}")
        else:
            lines.append(f"{item.name} is ignored: {item.note}")
    return lines


@dataclass(frozen=True)
class Translated:
    argv: list[str]
    env: dict[str, str]  # settings the old flags stand for
    notes: list[str]
    refused: str | None = None  # an old flag whose job is done elsewhere: exit 2 with this
    # variable → the flag that set it, so an error about the value names what was typed
    given_by: dict[str, str] = field(default_factory=dict)


def translate_argv(argv: Sequence[str]) -> Translated:
    """Old flags → what they mean now, before argparse sees them (it would only say
    "unrecognized arguments"). `--`  ends the scan: what follows is never a flag."""
    kept: list[str] = []
    env: dict[str, str] = {}
    notes: list[str] = []
    given_by: dict[str, str] = {}
    args = list(argv)
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            kept += args[index - 1 :]
            break
        lowered = arg.lower()
        if arg in ("--force", "--reinstall"):
            env["TRACEBLOC_FORCE_REINSTALL"] = "1"
        elif arg == "--reuse-data":
            env["TB_LEFTOVER_ACTION"] = "reuse"
        elif arg == "--wipe-data":
            env["TB_LEFTOVER_ACTION"] = "wipe"
        elif arg == "--data-dir" or arg.startswith("--data-dir="):
            value = (
                arg.partition("=")[2] if "=" in arg else (args[index] if index < len(args) else "")
            )
            index += 0 if "=" in arg else 1
            if not value.strip():
                return Translated(kept, env, notes, "--data-dir needs a path: --data-dir=PATH")
            env["HOST_DATA_DIR"] = value
            given_by["HOST_DATA_DIR"] = "--data-dir"
        elif lowered == "-help":
            kept.append("--help")
        elif arg == "--diagnose" or lowered == "-diagnose":
            return Translated(
                kept, env, notes, f"{arg} was replaced by: tracebloc-installer diagnose"
            )
        elif arg == "--prepare-host":
            kept.insert(0, "prepare-host")  # accepted at any position
        elif lowered in ("-noreboot", "--no-reboot"):
            env["TRACEBLOC_NO_REBOOT"] = "1"
        elif lowered in ("-resume", "--resume"):
            env["TRACEBLOC_RESUME"] = "1"
        elif arg == "--windows-elevated":
            pass  # the engine's own elevated child: prepare-host on Windows is that half anyway
        elif lowered in ("-dailyuser", "--daily-user") or lowered.startswith("--daily-user="):
            value = (
                arg.partition("=")[2] if "=" in arg else (args[index] if index < len(args) else "")
            )
            index += 0 if "=" in arg else 1
            if not value.strip():
                return Translated(kept, env, notes, f"{arg} needs a user name: {arg} NAME")
            env["TRACEBLOC_DAILY_USER"] = value
        else:
            kept.append(arg)
    return Translated(kept, env, notes, given_by=given_by)
