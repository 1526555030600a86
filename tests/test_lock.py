"""The install lock: exclusive, says who holds it, released by the OS when its holder dies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from installer.decide.errors import Refused
from installer.decide.tooling import Tool
from installer.edges import lock, proc
from tests.fakes.cluster import REPO
from tests.fakes.processes import running


def test_a_second_holder_is_refused_and_told_who(tmp_path: Path) -> None:
    path = str(tmp_path / "data" / "install.lock")
    with lock.hold([path], what="install of release a in namespace a"):
        with pytest.raises(Refused) as caught, lock.hold([path], what="another"):
            pass
    message = caught.value.message
    assert message.startswith("another install is running: install of release a in namespace a")
    assert f"pid {os.getpid()}" in message
    assert "nothing was changed" in caught.value.remedy


def test_the_lock_is_released_after_the_body(tmp_path: Path) -> None:
    path = str(tmp_path / "install.lock")
    with lock.hold([path], what="first"):
        pass
    with lock.hold([path], what="second"):
        assert "second" in lock.describe(lock.read_holder(path))


def test_a_lock_taken_later_is_released_too(tmp_path: Path) -> None:
    first, later = str(tmp_path / "a.lock"), str(tmp_path / "b.lock")
    with lock.hold([first], what="x") as held:
        held.add(later)
        with pytest.raises(Refused), lock.hold([later], what="y"):
            pass
    with lock.hold([first, later], what="z"):
        pass


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_holder_killed_with_sigkill_leaves_no_stale_lock(tmp_path: Path) -> None:
    path = str(tmp_path / "install.lock")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            f"sys.path.insert(0, {str(REPO)!r})\n"
            "from installer.edges import lock\n"
            f"with lock.hold([{path!r}], what='doomed'):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(Refused, match="doomed"), lock.hold([path], what="me"):
            pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        with lock.hold([path], what="me"):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_child_started_under_the_lock_does_not_inherit_it_but_is_recorded(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "install.lock")
    sleeper = Tool("sleeper", sys.executable)
    with lock.hold([path], what="engine") as held:
        [fd] = held.fds.values()
        # No descriptor of the lock reaches the child (a daemon it starts would keep it);
        # the lock file names the child while it runs instead.
        script = (
            f"import json, os, sys\n"
            f"try:\n    os.fstat({fd}); print('inherited')\n"
            f"except OSError:\n    print('not inherited')\n"
            f"doc = json.loads(open({path!r}).readline())\n"
            f"print(any(c['pid'] == os.getpid() for c in doc['children']))\n"
        )
        result = proc.run(sleeper, ["-c", script], timeout=30)
        assert result.stdout.split() == ["not", "inherited", "True"], result.stderr
        assert lock.read_holder(path)["children"] == []  # the child ended: struck off


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl: Linux only")
def test_a_tool_that_outlives_its_killed_holder_keeps_the_next_one_out(tmp_path: Path) -> None:
    path = str(tmp_path / "install.lock")
    ready = tmp_path / "outlives"  # the tool has cleared its parent-death signal
    script = (
        f"import sys, time\nsys.path.insert(0, {str(REPO)!r})\n"
        "from installer.edges import lock, proc\n"
        f"with lock.hold([{path!r}], what='doomed'):\n"
        "    proc.run(proc.Tool('helm', sys.executable),\n"
        "             ['-c', 'import ctypes, sys, time; ctypes.CDLL(None).prctl(1, 0, 0, 0, 0); '\n"
        f'              \'open("{ready}", "w").close(); time.sleep(600)\'], timeout=600)\n'
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not (lock.read_holder(path).get("children") and ready.exists()):
            assert time.monotonic() < deadline, "the tool never started"
            time.sleep(0.05)
        [child] = lock.read_holder(path)["children"]
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        with pytest.raises(Refused) as caught, lock.hold([path], what="me"):
            pass
        message = caught.value.message
        assert f"pid {holder.pid}" in message and "that process has ended" in message
        assert f"still running: pid {child['pid']}" in message
        os.kill(int(child["pid"]), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while running(int(child["pid"])) and time.monotonic() < deadline:
            time.sleep(0.05)
        with lock.hold([path], what="me"):  # the tool ended: the lock is free again
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_recorded_pid_now_used_by_another_process_does_not_hold_the_lock(
    tmp_path: Path,
) -> None:
    path = tmp_path / "install.lock"
    # A previous holder's record naming a child whose pid now belongs to another process
    # (this one, started at another time): not the child, so not a reason to refuse.
    record = {
        "pid": 999999999,
        "what": "old",
        "children": [{"pid": os.getpid(), "command": "helm upgrade", "started": 1.0}],
    }
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with lock.hold([str(path)], what="me"):
        assert lock.read_holder(str(path))["what"] == "me"


def test_release_locks_of_different_data_dirs_are_one_file(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "USERPROFILE": str(tmp_path)}
    a = lock.release_lock(env, str(tmp_path / "a"), "tracebloc", "tracebloc")
    b = lock.release_lock(env, str(tmp_path / "b"), "tracebloc", "tracebloc")
    other = lock.release_lock(env, str(tmp_path / "a"), "team-b", "team-b")
    assert a == b != other
    assert a.startswith(str(tmp_path / ".tracebloc" / "locks"))


@pytest.mark.parametrize(
    ("holder", "said"),
    [
        pytest.param({}, "did not say who it is", id="unreadable"),
        pytest.param({"pid": "x"}, "did not say who it is", id="pid-not-a-number"),
        pytest.param(
            {"pid": 1, "what": "install of x", "host": "elsewhere", "since": "t"},
            "install of x (pid 1 on elsewhere, since t)",
            id="another-host",
        ),
    ],
)
def test_describe_says_only_what_the_lock_file_says(holder: dict[str, object], said: str) -> None:
    assert said in lock.describe(holder)
