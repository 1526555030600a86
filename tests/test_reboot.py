"""The summary's "after a reboot" line (decide/reboot.py): automatic only when Docker starts
by itself and the nodes restart with it; otherwise the command that brings the client back,
as this machine's shell runs it."""

from __future__ import annotations

import pytest

from installer.decide.reboot import Boot, line


@pytest.mark.parametrize(
    ("boot", "said"),
    [
        pytest.param(
            Boot("linux", True, True, "tracebloc"),
            "After a reboot, tracebloc restarts automatically (Docker starts at boot; "
            "the cluster's containers restart with it).",
            id="linux-enabled",
        ),
        pytest.param(
            Boot("linux", False, True, "tracebloc"),
            "After a reboot, start Docker to bring tracebloc back: sudo systemctl start "
            "docker (to make it automatic: sudo systemctl enable docker)",
            id="linux-tier-0-disabled",
        ),
        pytest.param(
            Boot("linux", True, False, "tracebloc", k3d="/home/ana/.tracebloc/bin/k3d"),
            "After a reboot, once Docker runs, then start the cluster: "
            "/home/ana/.tracebloc/bin/k3d cluster start tracebloc",
            id="no-autostart-full-k3d-path",
        ),
        pytest.param(
            Boot("darwin", True, True, "tracebloc"),
            "After a reboot, tracebloc restarts automatically (Docker starts when you sign "
            "in; the cluster's containers restart with it).",
            id="mac-login-agent",
        ),
        pytest.param(
            Boot(
                "darwin", True, True, "tracebloc", colima="/opt/homebrew/bin/colima", headless=True
            ),
            "After a reboot, tracebloc restarts automatically (Docker starts at boot; the "
            "cluster's containers restart with it).",
            id="headless-mac-daemon",
        ),
        pytest.param(
            Boot(
                "darwin", False, True, "tracebloc", colima="/opt/homebrew/bin/colima", headless=True
            ),
            "After a reboot, start Docker to bring tracebloc back: /opt/homebrew/bin/colima start",
            id="headless-mac-tier-0",
        ),
        pytest.param(
            Boot("darwin", False, True, "tracebloc"),
            "After a reboot, start Docker to bring tracebloc back: open -a Docker",
            id="mac-no-agent",
        ),
        pytest.param(
            Boot("windows", False, True, "tracebloc"),
            "After a reboot, start Docker to bring tracebloc back: start Docker Desktop",
            id="windows-no-run-key",
        ),
    ],
)
def test_the_line_says_what_this_machine_does_after_a_reboot(boot: Boot, said: str) -> None:
    assert line(boot) == said


@pytest.mark.parametrize(
    ("version", "outdated"),
    [
        ("0.5.1", True),
        ("0.9.9", True),
        ("v0.10.0", False),
        ("0.10.0-rc.1", False),
        ("0.10.10", False),
        ("1.0.0", False),
        (None, False),
        ("garbage", False),
    ],
)
def test_the_cli_floor_is_the_scripts_and_fails_open(version: str | None, outdated: bool) -> None:
    from installer.decide.pins import cli_outdated

    assert cli_outdated(version) is outdated


@pytest.mark.parametrize(
    ("cli", "first"),
    [
        pytest.param("tracebloc", "tracebloc delete --keep-data", id="on-path"),
        pytest.param(
            "/home/a b/.tracebloc/bin/tracebloc",
            "'/home/a b/.tracebloc/bin/tracebloc' delete --keep-data",
            id="engine-copy",
        ),
        pytest.param(
            "",
            "get the tracebloc CLI (https://github.com/tracebloc/cli/releases/latest), "
            "then: tracebloc delete --keep-data",
            id="none",
        ),
    ],
)
def test_the_drift_remedy_names_the_cli_as_this_machine_runs_it(cli: str, first: str) -> None:
    from installer.decide.drift import recreate_remedy
    from installer.decide.localcluster import settings

    assert f"identity): {first}\n" in recreate_remedy(settings({}), cli=cli)
