"""Which runtime flow a machine gets (the tier routing). Pure.

Kept apart from decide/runtime.py (the shared types) so that the Linux and macOS flows can
import those types without an import cycle.
"""

from __future__ import annotations

from installer.decide.runtime import (
    INSTALL,
    PREPARE_HOST,
    PRIVILEGED,
    TIER0,
    Facts,
    RuntimePlan,
    sudo_wrapped,
)
from installer.decide.runtime_linux import decide_linux
from installer.decide.runtime_macos import decide_macos


def decide(facts: Facts, *, mode: str = INSTALL, target_user: str = "") -> RuntimePlan:
    """The runtime plan for this machine. `mode` prepare-host: the privileged half for
    `target_user` (TB_PREPARE_USER), never granting the administrator who runs it."""
    if (
        mode == INSTALL
        and facts.os == "linux"
        and facts.uid == 0
        and facts.sudo_user
        and facts.sudo_user != "root"
    ):
        return RuntimePlan(PRIVILEGED, "sudo-wrapped", refusal=sudo_wrapped(facts.sudo_user))
    if facts.docker == "running" and mode == INSTALL:
        return RuntimePlan(TIER0, "runtime-usable")
    if facts.os == "darwin":
        if mode == PREPARE_HOST:
            return RuntimePlan(
                PRIVILEGED,
                "unsupported-os",
                refusal=(
                    "prepare-host is for Linux hosts",
                    "on macOS install Docker Desktop (or colima) as an administrator, then run "
                    "the installer as yourself",
                ),
            )
        return decide_macos(facts)
    if facts.os != "linux":
        return RuntimePlan(
            PRIVILEGED,
            "unsupported-os",
            refusal=(
                "the engine installs a container runtime on Linux and macOS only",
                "install Docker Desktop, start it, then run the installer again",
            ),
        )
    if facts.docker == "unreadable":
        return RuntimePlan(
            PRIVILEGED,
            "docker-unreadable",
            refusal=(
                f"Docker did not answer: {facts.docker_reason or 'docker info timed out'}",
                "check `sudo systemctl status docker` (restart it: sudo systemctl restart "
                "docker), then run the installer again",
            ),
        )
    return decide_linux(facts, mode=mode, target_user=target_user)
