"""The in-process runner behind `FakeCluster.run` (tests/fakes/inprocess.py): it answers as
`python -m installer` does, and leaves this process as it found it."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from typing import Any

import pytest

from tests.fakes import inprocess
from tests.fakes.cluster import FakeCluster, installer_command, node

POSIX = pytest.mark.skipif(os.name != "posix", reason="the engine runs in process on POSIX only")
IN_PROCESS = pytest.mark.skipif(
    bool(os.environ.get("TB_INSTALLER_BIN") or os.environ.get("TB_TEST_SUBPROCESS")),
    reason="every run is a process here (TB_INSTALLER_BIN or TB_TEST_SUBPROCESS)",
)


def counted_main(mocker: Any) -> Any:
    from installer import cli

    return mocker.patch.object(cli, "main", side_effect=cli.main)


def process_state() -> dict[str, Any]:
    logger = logging.getLogger("installer")
    return {
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "argv": list(sys.argv),
        "streams": (sys.stdin, sys.stdout, sys.stderr),
        "fds": [(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in (0, 1, 2)],
        "signals": {n: signal.getsignal(n) for n in inprocess.SIGNALS},
        "logger": (list(logger.handlers), logger.level, logger.propagate),
    }


@POSIX
@IN_PROCESS
def test_run_calls_the_entry_point_in_this_process_and_puts_everything_back(
    cluster: FakeCluster, mocker: Any
) -> None:
    main = counted_main(mocker)
    cluster.nodes(node("laptop", "8", "16Gi")).release_absent()
    before = process_state()
    result = cluster.run("probe", "--json", "--verbose")
    assert result.returncode == 0, result.stderr
    assert '"nodes"' in result.stdout
    assert main.call_count == 1
    assert process_state() == before


@POSIX
@pytest.mark.subprocess
def test_a_test_marked_subprocess_starts_the_engine_as_a_process(
    cluster: FakeCluster, mocker: Any
) -> None:
    main = counted_main(mocker)
    result = cluster.run("version")
    assert result.returncode == 0, result.stderr
    assert main.call_count == 0
    assert result.args[: len(installer_command())] == installer_command()


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        pytest.param(("--help",), 0, "usage:", id="help-exits-0-through-SystemExit"),
        pytest.param(("probe", "--no-such-flag"), 2, "--no-such-flag", id="bad-flag-exits-2"),
    ],
)
def test_an_exit_through_system_exit_is_the_exit_code(
    cluster: FakeCluster, args: tuple[str, ...], code: int, said: str
) -> None:
    result = cluster.run(*args)
    assert result.returncode == code, result.stderr
    assert said in result.stdout + result.stderr


@POSIX
def test_a_run_past_its_timeout_raises_timeout_expired_as_subprocess_run(
    cluster: FakeCluster,
) -> None:
    cluster.nodes(node("laptop", "8", "16Gi"), sleep=60).release_absent()
    before = process_state()
    with pytest.raises(subprocess.TimeoutExpired):
        cluster.run("probe", "--json", timeout=3, TB_PROBE_TIMEOUT_S="120")
    assert process_state() == before
