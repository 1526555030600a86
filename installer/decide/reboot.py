"""The summary's "after a reboot" line: what brings the client back, from what was seen. Pure.

The client returns by itself only when Docker starts by itself (a boot-enabled service, the
LaunchAgent/Daemon, Docker Desktop at sign-in) and the node containers carry the restart
policy (unless TRACEBLOC_NO_AUTOSTART).
"""

from __future__ import annotations

from dataclasses import dataclass

from installer.decide import shellquote


@dataclass(frozen=True)
class Boot:
    os: str  # linux | darwin | windows
    runtime_starts: bool  # Docker starts by itself after a reboot (or at sign-in)
    nodes_restart: bool  # the cluster's containers restart with Docker
    cluster: str  # the local cluster's name
    k3d: str = "k3d"  # how the person's shell runs k3d (a full path when not on PATH)
    colima: str = ""  # colima is this Mac's runtime: its path
    headless: bool = False  # a Mac without a desktop session


def start_docker(boot: Boot) -> str:
    """How a person starts Docker by hand on this machine."""
    if boot.os == "linux":
        return "sudo systemctl start docker"
    if boot.os == "darwin":
        return f"{shellquote.join([boot.colima])} start" if boot.colima else "open -a Docker"
    return "start Docker Desktop"


def when(boot: Boot) -> str:
    if boot.os == "linux" or boot.headless:
        return "at boot"
    return "when you sign in"


def line(boot: Boot) -> str:
    start_cluster = shellquote.join([boot.k3d, "cluster", "start", boot.cluster])
    if boot.runtime_starts and boot.nodes_restart:
        return (
            f"After a reboot, tracebloc restarts automatically (Docker starts {when(boot)}; "
            "the cluster's containers restart with it)."
        )
    if not boot.nodes_restart:
        first = (
            "once Docker runs" if boot.runtime_starts else f"start Docker ({start_docker(boot)})"
        )
        return f"After a reboot, {first}, then start the cluster: {start_cluster}"
    out = f"After a reboot, start Docker to bring tracebloc back: {start_docker(boot)}"
    if boot.os == "linux":
        out += " (to make it automatic: sudo systemctl enable docker)"
    return out
