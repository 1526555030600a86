"""The one question before the first change (`Install? [y/N]`, default no), and the refusal
when there is nobody to ask and no --yes. `agree` asks every y/N question of the engine
(install, the local cluster's go-ahead, uninstall, the Windows reboot), one way."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from installer.commands import credentials
from installer.decide import yesno
from installer.decide.errors import BadInput, InstallerError
from installer.decide.localcluster_state import Local
from installer.decide.model import os_name
from installer.decide.settings import PlanConfig
from installer.present import question
from installer.present.changes import Change
from installer.present.ui import Ui

if TYPE_CHECKING:
    from installer.commands.install_plan import Plan

log = logging.getLogger(__name__)


class Declined(InstallerError):
    """The operator answered no at the one question: none of the listed changes was made.
    An answer, not a failure: cli says so without `error:`, with the documented exit 1."""

    declined = True


def local_heading(local: Local, cfg: PlanConfig) -> list[str]:
    s = local.settings
    name = s.name if s is not None else "tracebloc"
    verb = {
        "create": "created",
        "start": "started",
        "recreate": "deleted and created again for the GPU",
    }.get(local.action or "", "used")
    return [
        f"  local cluster:  {name}, to be {verb} (Docker on this machine)",
        f"  namespace:      {cfg.probe.namespace} (release {cfg.probe.release})",
        f"  chart:          {cfg.chart}",
        "  training size:  decided from the new cluster's nodes once it is up"
        if local.action in ("create", "recreate")
        else "  training size:  decided from the cluster's nodes once it answers",
    ]


def shown_path(path: str) -> str:
    return question.shown_path(path, os.path.expanduser("~"))


def local_context(local: Local, cfg: PlanConfig, said: str = "") -> question.Context:
    s = local.settings
    name = s.name if s is not None else "tracebloc"
    where = {
        "create": f"{name} (new, local)",
        "recreate": f"{name} (local, recreated for the GPU)",
        "start": f"{name} (local, stopped now)",
    }.get(local.action or "", f"{name} (local)")
    return question.Context(
        where,
        cfg.probe.namespace,
        cfg.probe.release,
        shown_path(cfg.host_data_dir),
        more=[f"old data:  {said}"] if said else [],
    )


def target_context(plan: Plan) -> question.Context:
    kube, probe, verdict = plan.kube, plan.cfg.probe, plan.verdict
    where = (
        f"{kube.context} ({kube.server or 'server unknown'})"
        if kube is not None and kube.readable
        else "the current kube context"
    )
    upgrade = verdict is not None and verdict.action.startswith("upgrade")
    return question.Context(
        where,
        probe.namespace,
        probe.release,
        shown_path(plan.cfg.host_data_dir),
        upgrade=upgrade,
        more=[f"training:  {plan.facts.training.size}"],
    )


def leftover_lines(said: str) -> list[str]:
    """The plan's line for an earlier client's data: what was chosen (leftover.Choice.said)."""
    return [f"  earlier data:   {said}"] if said else []


def terminal_or_refuse(interactive: bool) -> None:
    """No terminal to ask on and no --yes: no change. Refused (exit 2) after the blockers
    and before credentials are asked for or sent. Under `curl … | sh` the controlling
    terminal (/dev/tty) still counts."""
    if interactive and credentials.open_terminal(os_name(sys.platform)) is None:
        raise BadInput(
            "install asks before it changes anything, and there is no terminal to ask on",
            "run it again with --yes to install without the question "
            "(the credentials then come from TRACEBLOC_CLIENT_ID and "
            "TRACEBLOC_CLIENT_PASSWORD)",
        )


def ask_once(
    found: Sequence[Change],
    fetched: Sequence[str],
    ui: Ui,
    *,
    interactive: bool,
    data_dir: str,
    heading: Sequence[str] = (),
    notes: Sequence[str] = (),
    context: question.Context | None = None,
    shown_before: bool = False,
) -> None:
    """The one question, before the first change: a few plain lines; `d` shows every change with
    its argv. The full list is always in the log. `shown_before`: not shown again."""
    # Fitted to a watched terminal; elsewhere each line whole, every change with its argv.
    width = ui.columns() if ui.fancy else 10**6
    if shown_before:
        log.info(
            "about to change:\n%s", "\n".join(question.details(found, fetched, heading, 10**6))
        )
    else:
        if context is not None and ui.fancy:
            ui.info("\n".join(question.summary(found, context, width)))
            log.info(
                "about to change:\n%s", "\n".join(question.details(found, fetched, heading, 10**6))
            )
        else:
            ui.info("\n".join(question.details(found, fetched, heading, width)))
    for note in notes:
        ui.info(f"notice: {note}")
    if not interactive:
        return
    terminal = credentials.open_terminal(os_name(sys.platform))
    if terminal is None:  # checked before credentials; the terminal went away since
        terminal_or_refuse(interactive)
        return

    def show_details() -> None:
        ui.info("\n".join(question.details(found, fetched, heading, width)))

    if not agree(terminal.ask, "Install?", details=show_details):
        kept = (
            "; the tools downloaded into the engine's tools directory stay there" if fetched else ""
        )
        raise Declined(f"Only the engine's own log and lock in {data_dir} were written{kept}.")


def agree(
    ask: Callable[[str], str],
    prompt: str,
    *,
    default: bool = False,
    details: Callable[[], None] | None = None,
) -> bool:
    """Every y/N question (`[Y/n]` when the default is yes), read by decide/yesno.answer. End of
    input or an unreadable terminal is never a yes. `details`: `d` shows them, asks again."""
    while True:
        try:
            typed = ask(f"{prompt} [{'Y/n' if default else 'y/N'}] ")
        except (EOFError, OSError):
            return False
        if details is None or typed.strip().lower() not in ("d", "details"):
            return yesno.answer(typed, default=default)
        details()
