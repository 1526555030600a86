"""The sudo keepalive (edges/sudo_keepalive.py) against a fake `sudo` on PATH that logs each call:
refreshed without a prompt while the flow runs, stopped when it ends or when sudo says no."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from installer.edges.sudo_keepalive import keepalive
from tests.fakes.executables import make_executable

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="sudo")

SUDO = """import json, sys
with open({log!r}, "a", encoding="utf-8") as out:
    out.write(json.dumps(sys.argv[1:]) + "\\n")
sys.exit({rc!r})
"""


def fake_sudo(tmp_path: Path, rc: int = 0) -> dict[str, str]:
    make_executable(tmp_path / "bin" / "sudo", SUDO.format(log=str(tmp_path / "sudo.log"), rc=rc))
    return {"PATH": str(tmp_path / "bin")}


def calls(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "sudo.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def called(tmp_path: Path, count: int, within: float = 30.0) -> list[list[str]]:
    """The calls once there are `count` of them: a loaded machine starts sudo late, not never."""
    deadline = time.monotonic() + within
    while len(calls(tmp_path)) < count:
        assert time.monotonic() < deadline, f"sudo called {len(calls(tmp_path))} times, not {count}"
        time.sleep(0.05)
    return calls(tmp_path)


def test_the_ticket_is_refreshed_without_a_prompt_while_the_flow_runs_and_never_after(
    tmp_path: Path,
) -> None:
    env = fake_sudo(tmp_path)
    with keepalive(env, interval=0.2):
        called(tmp_path, 2)
    during = calls(tmp_path)
    assert len(during) >= 2 and all(argv == ["-n", "-v"] for argv in during)
    time.sleep(3 * 0.2)  # three intervals without a call: the refreshing has stopped
    assert calls(tmp_path) == during  # stopped with the flow


def test_a_refresh_sudo_refuses_ends_the_keepalive(tmp_path: Path) -> None:
    env = fake_sudo(tmp_path, rc=1)
    with keepalive(env, interval=0.1):
        called(tmp_path, 1)
        time.sleep(5 * 0.1)  # five more intervals: a second try would have come
    assert calls(tmp_path) == [["-n", "-v"]]  # no ticket left to keep: no second try


def test_nothing_is_started_where_there_is_no_sudo(tmp_path: Path) -> None:
    with keepalive({"PATH": str(tmp_path / "nowhere")}, interval=0.05):
        time.sleep(0.2)
    assert calls(tmp_path) == []


def test_the_flow_ending_in_an_error_stops_it_too(tmp_path: Path) -> None:
    env = fake_sudo(tmp_path)
    with pytest.raises(RuntimeError), keepalive(env, interval=0.1):
        time.sleep(0.35)
        raise RuntimeError("a root step failed")
    after = calls(tmp_path)
    time.sleep(0.4)
    assert calls(tmp_path) == after
