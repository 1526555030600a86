"""The install lock: exclusive, says who holds it, released by the OS when its holder dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from installer.decide.errors import Refused
from installer.edges import lock, proc
from tests.fakes.cluster import REPO


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
        [sys.executable, "-c",
         "import sys, time\n"
         f"sys.path.insert(0, {str(REPO)!r})\n"
         "from installer.edges import lock\n"
         f"with lock.hold([{path!r}], what='doomed'):\n"
         "    print('held', flush=True)\n"
         "    time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
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


@pytest.mark.skipif(sys.platform == "win32", reason="flock passed to POSIX children")
def test_a_child_started_under_the_lock_holds_it_while_it_lives(tmp_path: Path) -> None:
    path = str(tmp_path / "install.lock")
    sleeper = proc.Tool("sleeper", sys.executable)
    with lock.hold([path], what="engine") as held:
        [fd] = held.fds.values()
        # The child inherits the locked descriptor (pass_fds), as helm does.
        started = time.monotonic()
        result = proc.run(sleeper, ["-c", f"import os; os.fstat({fd}); print('ok')"],
                          timeout=30)  # fmt: skip
        assert result.stdout.strip() == "ok", result.stderr
        assert time.monotonic() - started < 30
    assert fd not in proc._inherited


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
        pytest.param({"pid": 1, "what": "install of x", "host": "elsewhere", "since": "t"},
                     "install of x (pid 1 on elsewhere, since t)", id="another-host"),
    ],
)  # fmt: skip
def test_describe_says_only_what_the_lock_file_says(holder: dict[str, object], said: str) -> None:
    assert said in lock.describe(holder)
