"""Which hosts a Windows host plan (decide/winhost.py) reaches: the network preflight probes
them when, and only when, the step that reaches them is planned. Pure.

winget's bundle (a GitHub release), Docker Desktop through winget, and `wsl --update
--web-download` (GitHub's API and release). The Store fallback, DISM features and the local
steps reach nothing probed; a plan with a blocker or no steps needs no host.
"""

from __future__ import annotations

from installer.decide import winget
from installer.decide.winhost import HostPlan

WINGET_SOURCE = "https://cdn.winget.microsoft.com/cache/"
DOCKER_DESKTOP_INSTALLER = "https://desktop.docker.com/"
WSL_RELEASES_API = "https://api.github.com/repos/microsoft/WSL/releases/latest"
WSL_RELEASE_DOWNLOADS = "https://github.com/microsoft/WSL/releases/download/"


def winhost_urls(plan: HostPlan | None) -> list[str]:
    """The URLs the planned steps reach, once each, in the plan's order."""
    if plan is None or plan.unread or plan.blockers:
        return []
    out: list[str] = []
    for step in plan.steps:
        if step.key == "winget-download":
            out.append(winget.URL)
        elif step.key == "wsl-update":
            out += [WSL_RELEASES_API, WSL_RELEASE_DOWNLOADS]
        elif step.key == "docker-desktop":
            out += [WINGET_SOURCE, DOCKER_DESKTOP_INSTALLER]
    return list(dict.fromkeys(out))
