"""A bare run is `plan`; a Windows double-click waits for Enter before its window closes."""

from __future__ import annotations

import pytest
from pytest_mock import MockerFixture

from installer import cli
from installer.present.console import owns_console
from tests.fakes.cluster import FakeCluster, node


@pytest.mark.parametrize(
    ("os_", "frozen", "count", "expected"),
    [
        pytest.param("windows", False, 1, True, id="double-clicked-script-alone-on-console"),
        pytest.param("windows", True, 2, True, id="double-clicked-onefile-bootloader-and-python"),
        pytest.param("windows", False, 2, False, id="started-from-cmd"),
        pytest.param("windows", True, 3, False, id="onefile-started-from-powershell"),
        pytest.param("windows", False, 0, False, id="no-console-at-all"),
        pytest.param("linux", False, 1, False, id="posix-terminal-never-pauses"),
        pytest.param("darwin", True, 1, False, id="macos-never-pauses"),
    ],
)
def test_owns_console(os_: str, frozen: bool, count: int, expected: bool) -> None:
    assert owns_console(os_, frozen, lambda: count) is expected


def test_console_query_failing_means_no_pause() -> None:
    def broken() -> int:
        raise OSError("GetConsoleProcessList failed")

    assert owns_console("windows", False, broken) is False


def test_bare_run_is_an_interactive_install(cluster: FakeCluster) -> None:
    """A bare run installs; with no terminal to ask on and no credentials it stops at once,
    naming the two variables, before touching the cluster."""
    cluster.nodes(node("laptop", "8", "16Gi")).installed()
    bare = cluster.run(TRACEBLOC_SKIP_PREFLIGHT="1")
    assert bare.returncode == 2, bare.stderr
    assert "TRACEBLOC_CLIENT_ID" in bare.stderr and "TRACEBLOC_CLIENT_PASSWORD" in bare.stderr
    # Only reads ran (the cluster is read before credentials: an unreachable one is said first).
    assert sorted(argv[0] for argv in cluster.calls("helm")) == ["get", "list", "repo", "status"]


@pytest.mark.parametrize(
    ("argv", "owns", "tty", "pauses"),
    [
        pytest.param([], True, True, True, id="double-click-pauses"),
        pytest.param(["plan"], True, True, False, id="explicit-command-never-pauses"),
        pytest.param(["install", "--yes"], True, True, False, id="automation-never-pauses"),
        pytest.param([], False, True, False, id="bare-run-in-a-shell-does-not-pause"),
        pytest.param([], True, False, False, id="stdin-not-a-terminal-does-not-pause"),
    ],
)
def test_pause_only_for_a_double_click(
    mocker: MockerFixture, argv: list[str], owns: bool, tty: bool, pauses: bool
) -> None:
    mocker.patch.object(cli, "owns_console", return_value=owns)
    mocker.patch.object(cli, "_stdin_is_terminal", return_value=tty)
    pause = mocker.patch.object(cli, "pause")
    run = mocker.patch.object(cli, "_main", return_value=0)
    assert cli.main(argv, env={}) == 0
    run.assert_called_once_with(argv, {})  # the default command is chosen inside _main
    assert pause.called is pauses
