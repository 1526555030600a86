"""`uninstall`'s conversation: show what the survey found (the cluster, what goes, what
stays), ask before anything is removed (and for the namespace, before data is deleted), then
remove it. Runs under the lock `cli.run_uninstall` holds."""

from __future__ import annotations

import argparse
import sys

from installer.commands import uninstall, uninstall_removal
from installer.commands.asking import agree
from installer.commands.credentials import open_terminal
from installer.decide import printable
from installer.decide.errors import BadInput
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.decide.settings import ProbeConfig
from installer.present import output


def confirm_and_remove(
    args: argparse.Namespace,
    cfg: ProbeConfig,
    tools: uninstall.Tools,
    survey: uninstall.Survey,
    options: uninstall.Options,
    redactor: Redactor,
) -> int:
    """Confirm what the survey found, under the lock `run_uninstall` holds, then remove it."""
    remove, keep = uninstall.plan(survey, options)
    if not remove:
        output.emit(
            args.json,
            {"removed": [], "kept": keep},
            "nothing to remove: " + f"no release {cfg.release} in namespace {cfg.namespace}",
            redactor,
        )
        return 0
    shown = [
        *uninstall.target_lines(survey),
        "will remove:",
        *(f"  {r}" for r in remove),
        "will keep:",
        *(f"  {k}" for k in keep),
    ]
    sys.stderr.write(printable.shown(redactor("\n".join(shown))) + "\n")  # cluster names escaped
    if not args.yes:
        terminal = open_terminal(os_name(sys.platform))
        if terminal is None:
            raise BadInput(
                "uninstall asks before it removes anything, and there is no terminal to ask on",
                "run it again with --yes to confirm",
            )
        agreed = agree(terminal.ask, "Remove these?")
        try:
            if agreed and args.delete_data:
                typed = terminal.ask(f"Type the namespace ({cfg.namespace}) to delete its data: ")
                agreed = typed.strip() == cfg.namespace
        except EOFError:
            agreed = False
        if not agreed:
            output.emit(
                args.json, {"removed": [], "kept": remove + keep}, "nothing was removed", redactor
            )
            return 1
    done = uninstall_removal.execute(survey, tools, cfg, options)
    output.emit(
        args.json,
        {"removed": done, "kept": keep},
        "\n".join(done + [f"kept: {k}" for k in keep]),
        redactor,
    )
    return 0
