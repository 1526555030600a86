"""Whether Docker starts by itself after a reboot on this machine (reads only), for the
summary's "after a reboot" line (decide/reboot.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from installer.decide.runtime_macos import AUTOSTART_LABEL, launch_daemons_dir
from installer.edges import call, toolpath

WINDOWS_RUN_KEY = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run"


def mac_plist(env: Mapping[str, str], headless: bool) -> str:
    """Where the engine's autostart lives: a LaunchAgent on a Mac with a desktop session, a
    LaunchDaemon on a headless one (a LaunchAgent never loads there)."""
    if headless:
        return os.path.join(launch_daemons_dir(env), f"{AUTOSTART_LABEL}.plist")
    home = env.get("HOME", "").strip()
    return os.path.join(home, "Library", "LaunchAgents", f"{AUTOSTART_LABEL}.plist") if home else ""


def runtime_starts(
    env: Mapping[str, str], os_: str, *, timeout: float, headless: bool = False
) -> bool:
    """Linux: docker.service is enabled at boot; macOS: the engine's plist is in place;
    Windows: Docker Desktop is in this user's Run key. False when it cannot be told."""
    if os_ == "linux":
        from installer.edges.runtime_linux import boot_enabled

        return boot_enabled(env, timeout) == "enabled"
    if os_ == "darwin":
        path = mac_plist(env, headless)
        return bool(path) and os.path.isfile(path)
    if os_ == "windows":
        tool = toolpath.find_on_path("reg", env, "windows")
        if tool is None:
            return False
        result = call.answer(
            tool, ["query", WINDOWS_RUN_KEY, "/v", "Docker Desktop"], timeout=timeout, env=env
        )
        return not isinstance(result, call.NoAnswer) and result.rc == 0
    return False
