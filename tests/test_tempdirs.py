"""installer.edges.tempdirs: a scratch directory a killed run left (it may hold a kubeconfig
with the cluster's client key, or values with a password) is removed by the next run; only
the engine's, this user's, real directories whose maker is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from installer.edges import tempdirs
from tests.fakes.cluster import FakeCluster

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and links")


def dead_pid() -> int:
    """A pid that ran and is gone (reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def left(where: Path, kind: str, pid: int, secret: str = "client-key-data: c2VjcmV0") -> Path:
    path = where / f"tracebloc-{kind}-{pid}-ab12_cd"
    path.mkdir(mode=0o700)
    (path / "config").write_text(secret, encoding="utf-8")
    return path


def test_a_dead_runs_scratch_is_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    gone = [left(tmp_path, kind, dead_pid()) for kind in tempdirs.KINDS]
    mine = left(tmp_path, "peek", os.getpid())
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        running = left(tmp_path, "plan", live.pid)
        assert sorted(tempdirs.sweep(str(tmp_path))) == sorted(str(p) for p in gone)
        assert mine.is_dir() and running.is_dir()
        assert not any(p.exists() for p in gone)
    finally:
        live.kill()
        live.wait()


def test_only_the_engines_names_are_touched(tmp_path: Path) -> None:
    pid = dead_pid()
    others = [
        left(tmp_path, "peek", pid).rename(tmp_path / f"tracebloc-other-{pid}-x"),
        (tmp_path / f"tracebloc-peek-{pid}"),  # no random part: not mkdtemp's
        (tmp_path / f"tracebloc-peek-{pid}-x.y"),
    ]
    for path in others[1:]:
        path.mkdir()
    file = tmp_path / f"tracebloc-plan-{pid}-file"
    file.write_text("a file, not a directory", encoding="utf-8")
    assert tempdirs.sweep(str(tmp_path)) == []
    assert all(p.exists() for p in [*others, file])


@POSIX
def test_a_link_or_another_users_directory_is_left_alone(tmp_path: Path) -> None:
    pid = dead_pid()
    data = tmp_path / "someone" / "data"
    data.mkdir(parents=True)
    (data / "work").write_text("keep", encoding="utf-8")
    (tmp_path / f"tracebloc-plan-{pid}-link").symlink_to(data, target_is_directory=True)
    theirs = left(tmp_path, "runtime", pid)
    if os.geteuid() == 0:
        os.chown(theirs, 65534, 65534)
    else:
        theirs.rename(tmp_path / "moved")  # not root: no other owner can be made here
    assert tempdirs.sweep(str(tmp_path)) == []
    assert (data / "work").read_text(encoding="utf-8") == "keep"
    assert os.geteuid() != 0 or theirs.is_dir()


def test_an_unreadable_place_sweeps_nothing(tmp_path: Path) -> None:
    assert tempdirs.sweep(str(tmp_path / "missing")) == []


def test_a_new_scratch_directory_is_private_and_named_for_this_process() -> None:
    path = Path(tempdirs.make("peek"))
    try:
        assert path.name.startswith(f"tracebloc-peek-{os.getpid()}-")
        if sys.platform != "win32":
            assert path.stat().st_mode & 0o777 == 0o700
    finally:
        path.rmdir()


@POSIX
@pytest.mark.subprocess
def test_plan_removes_what_a_killed_run_left_in_tmpdir(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    from tests.test_cli_install import fresh

    fresh(cluster)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    stale = left(scratch, "peek", dead_pid())
    result = cluster.run("plan", TMPDIR=str(scratch))
    assert result.returncode == 0, result.stderr
    assert not stale.exists()
    assert not [p for p in scratch.iterdir() if p.name.startswith("tracebloc-")]  # its own too
