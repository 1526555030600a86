"""Which hosts a Windows host plan reaches (decide/winhostnet.py), as the network preflight
probes them: the winget bundle's GitHub release (and the host github.com redirects it to),
winget's source and Docker Desktop's installer host, the WSL release GitHub serves; each only
when the step that reaches it is planned. Decisions only: they run on any OS."""

from __future__ import annotations

import pytest

from installer.commands import network_hosts
from installer.decide import endpoints
from installer.decide import winhost as wh
from installer.decide.winhostnet import winhost_urls
from tests.test_winhost import facts

CURRENT_WSL = "WSL version: 2.3.26.0\nKernel version: 5.15.153.1-2"
RELEASE_ASSETS = "release-assets.githubusercontent.com:443"
WSL_UPDATE = ["api.github.com:443", "github.com:443", RELEASE_ASSETS]
DESKTOP_BY_WINGET = ["cdn.winget.microsoft.com:443", "desktop.docker.com:443"]


def runtime_hosts(plan: wh.HostPlan) -> list[str]:
    found = endpoints.endpoints(
        "https://api.tracebloc.io/", chart_repo=None, mirror="m.example", runtime=winhost_urls(plan)
    )
    return [e.hostport for e in found if e.kind is endpoints.Kind.RUNTIME]


@pytest.mark.parametrize(
    ("machine", "expected"),
    [
        pytest.param(
            facts(), [*WSL_UPDATE, *DESKTOP_BY_WINGET], id="winget-no-docker-desktop-wsl-stale"
        ),
        pytest.param(
            facts(wsl_version=CURRENT_WSL),
            DESKTOP_BY_WINGET,
            id="winget-no-docker-desktop-wsl-current",
        ),
        pytest.param(
            facts(
                winget=False, temp_dir=r"C:\Users\nurse\AppData\Local\Temp", wsl_version=CURRENT_WSL
            ),
            ["github.com:443", RELEASE_ASSETS, *DESKTOP_BY_WINGET],
            id="no-winget-bundle-from-its-github-release",
        ),
        pytest.param(
            facts(winget=False, temp_dir=r"C:\Temp"),
            [*WSL_UPDATE, *DESKTOP_BY_WINGET],
            id="no-winget-and-wsl-stale-once-each",
        ),
        pytest.param(
            facts(docker_desktop=True, wsl_version=CURRENT_WSL),
            [],
            id="docker-desktop-installed-not-answering-only-started",
        ),
        pytest.param(
            facts(docker_desktop=True), WSL_UPDATE, id="docker-desktop-installed-wsl-stale"
        ),
        pytest.param(
            facts(virtualization=False), [], id="virtualization-off-a-blocker-changes-nothing"
        ),
        pytest.param(facts(winget=False, temp_dir=""), [], id="no-winget-no-temp-a-blocker"),
    ],
)
def test_the_windows_hosts_are_the_ones_its_plan_reaches(
    machine: wh.WinFacts, expected: list[str]
) -> None:
    assert runtime_hosts(wh.plan_host(machine, wh.Options())) == expected


def test_a_usable_docker_desktop_lists_none_of_them() -> None:
    """Docker Desktop answers as this user: tier 0, no step, so none of the Windows hosts
    (even with winget missing and WSL stale: nothing is installed or updated)."""
    plan = wh.plan_host(
        facts(docker_usable=True, docker_desktop=True, winget=False, temp_dir=r"C:\Temp"),
        wh.Options(),
    )
    assert plan.tier == 0 and plan.steps == ()
    assert winhost_urls(plan) == []
    needs = network_hosts.combine(None, None, {}, False, plan)
    assert needs.runtime == ()


def test_an_unread_machine_or_no_plan_reaches_nothing() -> None:
    unread = wh.plan_host(wh.WinFacts(False, reason="powershell.exe was not found"), wh.Options())
    assert winhost_urls(unread) == []
    assert winhost_urls(None) == []


def test_the_windows_hosts_join_the_derivation_the_runtime_hosts_use() -> None:
    """network_hosts.combine (what `plan` and `install` feed the preflight) carries the Windows
    plan's hosts as runtime hosts, labelled, public (a certificate not from a public CA on
    them is TLS inspection)."""
    needs = network_hosts.combine(None, None, {}, False, wh.plan_host(facts(), wh.Options()))
    found = endpoints.endpoints(
        "https://api.tracebloc.io/", chart_repo=None, mirror="m.example", runtime=needs.runtime
    )
    runtime = [e for e in found if e.kind is endpoints.Kind.RUNTIME]
    assert [e.label for e in runtime] == [
        "GitHub API (WSL releases) (api.github.com)",
        "GitHub (github.com)",
        "GitHub release downloads (release-assets.githubusercontent.com)",
        "winget source (cdn.winget.microsoft.com)",
        "Docker Desktop (desktop.docker.com)",
    ]
    assert all(e.well_known for e in runtime)
