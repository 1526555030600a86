"""`prepare-host`: the privileged half alone (what the tracebloc
CLI's `prepare-host` runs): on Linux and macOS Docker installed, started and enabled and
TB_PREPARE_USER granted; on Windows the host preparation's elevated half. No question, no
cluster, no credentials."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.present import output


def run_prepare_host(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    """The privileged half alone: Docker installed, started and
    enabled, TB_PREPARE_USER granted; no question, no cluster, no credentials."""
    from installer.commands.runtime import prepare_host
    from installer.config import parse_timeout, prepare_user
    from installer.decide.runtime import granted_line
    from installer.edges import tempdirs
    from installer.edges.machine import read_machine
    from installer.present.ui import Ui

    tempdirs.sweep()  # staged root files a killed run left behind
    ui = Ui(sys.stderr, env=env, redactor=redactor, is_tty=False)
    if os_name(sys.platform) == "windows":
        return _prepare_windows_host(args, env, redactor, ui)
    target = prepare_user(env)
    done = prepare_host(
        env, redactor, ui, os_name(sys.platform), read_machine(env), parse_timeout(env), target
    )
    # Announced only once the membership was read back (edges/runtime.py's "member" step).
    granted = bool(target) and granted_line(target) in done
    text = "\n".join(
        ["host prepared; done:", *(f"  {line}" for line in done)]
        + (
            [
                f"{target} can now install as themselves (a new login may be needed "
                "for the docker group)"
            ]
            if granted
            else []
        )
    )
    output.emit(
        args.json, {"ok": True, "done": done, "user": target if granted else None}, text, redactor
    )
    return 0


def _prepare_windows_host(
    args: argparse.Namespace, env: dict[str, str], redactor: Redactor, ui: Any
) -> int:
    """Windows, as administrator (IT, or the engine's own elevated child): the privileged
    half of the host preparation (commands/winhost.py), recorded for the daily user's half."""
    from installer.commands import winhost
    from installer.config import data_dir
    from installer.decide.settings import thresholds

    said: list[str] = []
    exe, _ = winhost.engine_command()
    plan = winhost.prepare(
        exe,
        env,
        winhost.options(env, thresholds(env).min_mem_gib),
        redactor,
        data_dir(env, "windows"),
        ask=None,
        say=said.append,
        our_cluster_running=None,
        elevated_child=True,
    )
    text = "\n".join(
        ["host prepared; done:", *(f"  {line}" for line in said)]
        if said
        else ["nothing to prepare: Docker Desktop answers"]
    )
    output.emit(args.json, {"ok": True, "done": said, "user": plan.user or None}, text, redactor)
    return 0
