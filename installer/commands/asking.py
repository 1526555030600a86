"""The one question before the first change (`Install? [y/N]`, default no), and the refusal
when there is nobody to ask and no --yes. `agree` asks every y/N question of the engine
(install, the local cluster's go-ahead, uninstall, the Windows reboot), one way."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from installer.commands import credentials
from installer.decide import yesno
from installer.decide.errors import BadInput, InstallerError
from installer.decide.localstate import Local
from installer.decide.model import os_name
from installer.decide.settings import PlanConfig
from installer.present import changes
from installer.present.changes import Change
from installer.present.ui import Ui


class Declined(InstallerError):
    """The operator answered no at the one question: none of the listed changes was made."""


def local_heading(local: Local, cfg: PlanConfig) -> list[str]:
    s = local.settings
    name = s.name if s is not None else "tracebloc"
    verb = {"create": "created", "start": "started"}.get(local.action or "", "used")
    return [f"  local cluster:  {name}, to be {verb} (Docker on this machine)",
            f"  namespace:      {cfg.probe.namespace} (release {cfg.probe.release})",
            f"  chart:          {cfg.chart}",
            "  training size:  decided from the new cluster's nodes once it is up"
            if local.action == "create" else
            "  training size:  decided from the cluster's nodes once it answers"]  # fmt: skip


def leftover_lines(said: str) -> list[str]:
    """The plan's line for an earlier client's data: what was chosen (leftover.Choice.said)."""
    return [f"  earlier data:   {said}"] if said else []


def terminal_or_refuse(interactive: bool) -> None:
    """No terminal to ask on and no --yes: no change. Refused (exit 2) after the blockers
    and before credentials are asked for or sent. Under `curl … | sh` the controlling
    terminal (/dev/tty) still counts."""
    if interactive and credentials.open_terminal(os_name(sys.platform)) is None:
        raise BadInput("install asks before it changes anything, and there is no terminal "
                       "to ask on", "run it again with --yes to install without the question "
                       "(the credentials then come from TRACEBLOC_CLIENT_ID and "
                       "TRACEBLOC_CLIENT_PASSWORD)")  # fmt: skip


def ask_once(found: Sequence[Change], fetched: Sequence[str], ui: Ui, *, interactive: bool,
             data_dir: str, heading: Sequence[str] = (), notes: Sequence[str] = ()) -> None:  # fmt: skip
    """The one question, before the first change: every change outside the engine's data
    directory, in order, with its argv. Under --yes the same lines are the record."""
    lines = list(heading) + ["changes, in order:", *changes.text(found, fetched)]
    ui.info("about to change:\n" + "\n".join(lines))
    for note in notes:
        ui.info(f"notice: {note}")
    if not interactive:
        return
    terminal = credentials.open_terminal(os_name(sys.platform))
    if terminal is None:  # checked before credentials; the terminal went away since
        terminal_or_refuse(interactive)
        return
    if not agree(terminal.ask, "Install?"):
        kept = "; the tools downloaded into the engine's tools directory stay there" if fetched else ""
        raise Declined(f"not confirmed: none of the changes above was made; only the "
                       f"engine's own files in {data_dir} (its log and lock) were "
                       f"written{kept}", "run again and answer y, or use --yes to skip "
                       "the question")  # fmt: skip


def agree(ask: Callable[[str], str], question: str, *, default: bool = False) -> bool:
    """Every y/N question: asked as `question [y/N] ` (`[Y/n] ` when the default is yes), the
    answer read by decide/yesno.answer. The end of input or a terminal that cannot be read
    is never a yes, whatever the default: nobody agreed."""
    try:
        typed = ask(f"{question} [{'Y/n' if default else 'y/N'}] ")
    except (EOFError, OSError):
        return False
    return yesno.answer(typed, default=default)
