"""Which hosts a Windows host plan (decide/winhost.py) reaches: the network preflight probes
them when, and only when, the step that reaches them is planned. Pure.

- winget where it is missing: the pinned App Installer bundle, a GitHub release download (the
  engine fetches it itself; decide/network.py adds the host github.com redirects it to);
- Docker Desktop through winget: winget reads its source (the index and the manifests) from
  cdn.winget.microsoft.com, and the manifest's installer comes from desktop.docker.com;
- `wsl --update --web-download`: WSL asks GitHub's API for microsoft/WSL's latest release and
  downloads its package from that release. Its fallback (`wsl --update`, from the Microsoft
  Store) is not probed: the Store's hosts are Windows' own and the step warns and goes on.

Enabling a Windows feature (DISM) installs what Windows already holds; the rest (making WSL 2
the default, docker-users, .wslconfig, autostart, Docker Desktop's first start) reaches
nothing. A plan with a blocker changes nothing, so it needs no host; neither does one for a
machine whose Docker Desktop answers (tier 0: no steps).
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
