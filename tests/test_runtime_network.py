"""Which hosts a runtime plan reaches (decide/endpoints.runtime_urls): the network preflight
probes them when, and only when, the runtime will be installed."""

from __future__ import annotations

import pytest

from installer.decide import endpoints
from installer.decide import runtime as rt
from installer.decide.runtime_route import decide
from tests.test_runtime_route import darwin, linux


def hosts(plan: rt.RuntimePlan, fetch_mirror: str | None = None) -> list[str]:
    found = endpoints.endpoints(
        "https://api.tracebloc.io/",
        chart_repo=None,
        mirror="m.example",
        runtime=endpoints.runtime_urls(plan, fetch_mirror),
    )
    return [e.hostport for e in found if e.kind is endpoints.Kind.RUNTIME]


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        pytest.param(linux("debian"), ["download.docker.com:443"], id="debian-apt-repository"),
        pytest.param(linux("ubuntu"), ["download.docker.com:443"], id="ubuntu-apt-repository"),
        pytest.param(linux("rocky9"), ["download.docker.com:443"], id="rocky-9-dnf-repository"),
        pytest.param(linux("amzn2023"), [], id="amazon-linux-from-its-own-packages"),
        pytest.param(linux("arch"), [], id="arch-from-its-own-packages"),
        pytest.param(
            linux("ubuntu", docker="stopped", docker_cli=True), [], id="stopped-is-only-started"
        ),
        pytest.param(linux("ubuntu", docker="running", docker_cli=True), [], id="tier-0"),
        pytest.param(darwin(), ["desktop.docker.com:443"], id="mac-with-a-desktop-docker-desktop"),
        pytest.param(
            darwin(tools=frozenset()),
            ["raw.githubusercontent.com:443", "github.com:443", "desktop.docker.com:443"],
            id="mac-without-homebrew",
        ),
        pytest.param(
            darwin(gui=False),
            ["formulae.brew.sh:443", "ghcr.io:443"],
            id="headless-mac-colima-through-brew",
        ),
        pytest.param(
            darwin(docker="stopped", docker_cli=True, docker_app=True),
            [],
            id="mac-docker-desktop-stopped",
        ),
        pytest.param(darwin(admin=False), [], id="mac-not-admin-refused"),
    ],
)
def test_the_runtime_hosts_are_the_ones_its_plan_reaches(
    facts: rt.Facts, expected: list[str]
) -> None:
    assert hosts(decide(facts)) == expected


def test_a_directory_tools_mirror_replaces_the_engines_own_downloads_but_not_apts() -> None:
    """The signing key comes from the mirror; apt still reads Docker's repository."""
    assert hosts(decide(linux("debian")), "") == ["download.docker.com:443"]
    assert hosts(decide(darwin()), "") == []
    assert hosts(decide(darwin()), "https://tools.hospital.example/m/") == [
        "tools.hospital.example:443"
    ]


def test_no_runtime_plan_reaches_nothing() -> None:
    assert endpoints.runtime_urls(None) == []
