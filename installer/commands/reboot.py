"""The summary's "after a reboot" line for the local cluster just set up (decide/reboot.py),
from what this machine shows once the install is done: nothing is assumed from what the
run meant to do."""

from __future__ import annotations

import os
from collections.abc import Mapping

from installer.decide import reboot
from installer.decide.errors import InstallerError
from installer.decide.localcluster_state import Local
from installer.decide.tooling import ToolChoice
from installer.decide.yesno import flag

DOCKER_APPS = ("/Applications/Docker.app",)


def as_typed(choice: ToolChoice | None, name: str, env: Mapping[str, str], os_: str) -> str:
    """How the person's shell runs a tool the engine used: its bare name when PATH finds
    that very file (through ~/.local/bin's link too), else its full path."""
    if choice is None or choice.path is None:
        return name
    from installer.edges import toolpath

    found = toolpath.find_on_path(name, env, os_)
    if found is not None and os.path.realpath(found.path) == os.path.realpath(choice.path):
        return name
    return choice.path


def after_reboot(local: Local | None, env: Mapping[str, str], os_: str, *, timeout: float) -> str:
    """ "" for a cluster that is not this machine's (nothing to say about its reboots)."""
    if local is None or local.settings is None or not local.managed:
        return ""
    from installer.edges import autostart

    headless = False
    colima = ""
    if os_ == "darwin":
        from installer.edges import runtime_macos, toolpath

        headless = runtime_macos.has_gui_session() is False
        home = env.get("HOME", "").strip()
        desktop = (
            any(os.path.isdir(p) for p in (*DOCKER_APPS, f"{home}/Applications/Docker.app"))
            and not headless
        )
        found = toolpath.find_on_path("colima", env, "darwin")
        colima = "" if desktop or found is None else os.path.abspath(found.path)
    choice = local.k3d_choice
    if choice is None:
        from installer.commands.localcluster_survey import choose_k3d

        try:
            choice = choose_k3d(env, fetch=False)
        except InstallerError:  # none resolvable: the bare name is shown
            choice = None
    boot = reboot.Boot(
        os_,
        autostart.runtime_starts(env, os_, timeout=timeout, headless=headless),
        not flag(env, "TRACEBLOC_NO_AUTOSTART"),
        local.settings.name,
        k3d=as_typed(choice, "k3d", env, os_),
        colima=colima,
        headless=headless,
    )
    return reboot.line(boot)
