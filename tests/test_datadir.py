"""The wipe of an earlier client's data deletes what the person was shown and nothing else:
not after the data directory (or a directory in it) is swapped for a link at any moment
between the question and the end of the deletion, and not half of it when the engine is
killed (`kill -9`) at any moment: the next run finds the database whole or not at all."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from installer.edges import datadir
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.localcluster import creatable, docker_running, machine_without_cluster
from tests.test_cli_install import env_for, fresh

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="links and kill -9 as on POSIX")


def tree(root: Path, files: int, dirs: int = 3) -> dict[str, bytes]:
    """A small database-like tree under `root`; its files and their contents."""
    made = {}
    for n in range(files):
        sub = root / f"schema{n % dirs}" if dirs else root
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"t{n}.ibd"
        path.write_bytes(b"row %d\n" % n)
        made[str(path.relative_to(root))] = path.read_bytes()
    return made


def contents(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


# --- a swap at every step ---------------------------------------------------------------

_CALLS = ("open", "fstat", "stat", "lstat", "rename", "scandir", "unlink", "rmdir", "dup", "close")


class _HookedOs:
    """`os` for datadir, calling `before()` ahead of each file-system call it makes."""

    def __init__(self, before: Callable[[], None]) -> None:
        self._before = before

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name not in _CALLS:
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            self._before()
            return real(*args, **kwargs)

        return call


def _swap(kind: str, home: Path) -> None:
    """Replace the data directory, the release directory or the database itself with a
    link to the project database, the real one moved aside (as `mv` and `ln -s` would)."""
    target = {
        "data-dir": (home / ".tracebloc", home / "projects" / "shop-db"),
        "release-dir": (
            home / ".tracebloc" / "tracebloc",
            home / "projects" / "shop-db" / "tracebloc",
        ),
        "database": (
            home / ".tracebloc" / "tracebloc" / "mysql",
            home / "projects" / "shop-db" / "tracebloc" / "mysql",
        ),
    }[kind]
    place, link_to = target
    aside = place.with_name(place.name + ".moved")
    if place.is_symlink() or aside.exists() or not place.exists():
        return
    os.rename(place, aside)
    os.symlink(link_to, place)


def _wipe_with(home: Path, before: Callable[[], None]) -> list[str] | str:
    data = str(home / ".tracebloc")
    pinned = datadir.shown(data, datadir.leftovers(data))
    real = datadir.os
    datadir.os = _HookedOs(before)  # type: ignore[assignment]
    try:
        return datadir.wipe(pinned)
    except datadir.Changed as exc:
        return str(exc)
    finally:
        datadir.os = real


@POSIX_ONLY
@pytest.mark.parametrize("kind", ["data-dir", "release-dir", "database"])
def test_a_link_swapped_in_at_any_step_of_the_wipe_leads_nowhere(tmp_path: Path, kind: str) -> None:
    """Every file-system call of the wipe is a moment the swap can happen at: the project
    database, never shown, survives each one, and so does everything beside the leftover."""
    calls = 0

    def count() -> None:
        nonlocal calls
        calls += 1

    first = tmp_path / "count"
    shutil.copytree(_home_of(first), first, symlinks=True, dirs_exist_ok=True)
    assert _wipe_with(first, count) == []
    assert calls > 20, calls  # the wipe's steps, each a moment below
    for moment in range(calls + 1):
        home = tmp_path / f"at-{moment}"
        shutil.copytree(_home_of(home), home, symlinks=True)
        project = contents(home / "projects" / "shop-db")
        seen = 0

        def swap_at(at: int = moment, where: Path = home) -> None:
            nonlocal seen
            if seen == at:
                _swap(kind, where)
            seen += 1

        _wipe_with(home, swap_at)
        assert contents(home / "projects" / "shop-db") == project, (kind, moment)
        data = home / ".tracebloc"
        real = (
            data.with_name(".tracebloc.moved") if kind == "data-dir" and data.is_symlink() else data
        )
        assert (real / "notes.txt").read_text() == "kept", (kind, moment)
        logs = real / "tracebloc" / "logs" / "keep.log"
        if not logs.exists():
            logs = real / "tracebloc.moved" / "logs" / "keep.log"
        assert logs.read_text() == "kept", (kind, moment)


_TEMPLATE: dict[str, Path] = {}


def _home_of(dest: Path) -> Path:
    """One home built once per test session and copied: each moment starts alike."""
    if "home" not in _TEMPLATE:
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="wipe-home-"))
        data = root / ".tracebloc"
        tree(data / "tracebloc" / "mysql", 12)
        (data / "tracebloc" / "logs").mkdir()
        (data / "tracebloc" / "logs" / "keep.log").write_text("kept")
        (data / "notes.txt").write_text("kept")
        tree(root / "projects" / "shop-db" / "tracebloc" / "mysql", 12)
        _TEMPLATE["home"] = root
    return _TEMPLATE["home"]


# --- kill -9 at random moments ------------------------------------------------------------


class _Wiping:
    """A forked process doing the wipe (a fork, not a new interpreter: 50 starts stay fast);
    it says `go` as the wipe begins and `done` when it is over."""

    def __init__(self, data: Path) -> None:
        pinned = datadir.shown(str(data), datadir.leftovers(str(data)))
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: the wipe and nothing else
            try:
                os.close(read)
                os.write(write, b"g")
                datadir.wipe(pinned)
                os.write(write, b"d")
            finally:
                os._exit(0)
        os.close(write)
        self.pipe = read

    def said(self) -> bytes:
        return os.read(self.pipe, 1)

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.pipe)


def _made(home: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    data = home / ".tracebloc"
    mysql = tree(data / "tracebloc" / "mysql", 90, dirs=4)
    datasets = tree(data / "tracebloc" / "data", 24, dirs=2)
    (data / "tracebloc" / "logs").mkdir()
    (data / "tracebloc" / "logs" / "keep.log").write_text("kept")
    tree(home / "projects" / "shop-db" / "mysql", 8)
    return mysql, datasets


@POSIX_ONLY
def test_kill_9_at_any_moment_of_the_wipe_leaves_each_database_whole_or_gone(
    tmp_path: Path,
) -> None:
    """50 kills, spread over the wipe's whole length. After each, the next run (which clears
    the trash first, as install does) finds each database whole or not at all, never offers
    a trash directory, and every directory it was not shown is as it was."""
    timing = tmp_path / "timing"
    _made(timing)
    child = _Wiping(timing / ".tracebloc")
    assert child.said() == b"g"
    started = time.monotonic()
    assert child.said() == b"d"
    length = time.monotonic() - started
    child.kill()
    assert datadir.leftovers(str(timing / ".tracebloc")) == []

    rng = random.Random(32)
    outcomes: dict[str, int] = {}
    begun = time.monotonic()
    for kill in range(50):
        home = tmp_path / f"kill-{kill}"
        mysql, datasets = _made(home)
        project = contents(home / "projects")
        data = home / ".tracebloc"
        child = _Wiping(data)
        assert child.said() == b"g"
        time.sleep(0 if kill % 10 == 0 else rng.uniform(0, length * 1.3))
        child.kill()

        datadir.remove_trash(str(data))  # the next run, as install starts
        found = datadir.leftovers(str(data))
        assert not any(datadir.TRASH_PREFIX in path for path in found), found
        assert not [p for p in data.rglob("*") if datadir.TRASH_PREFIX in p.name], kill
        for name, whole in (("mysql", mysql), ("data", datasets)):
            there = data / "tracebloc" / name
            if str(there) in found:
                assert contents(there) == whole, (kill, name)  # offered: then all of it
            else:
                assert not there.exists(), (kill, name)
            outcomes[f"{name}-{'whole' if there.exists() else 'gone'}"] = (
                outcomes.get(f"{name}-{'whole' if there.exists() else 'gone'}", 0) + 1
            )
        assert contents(home / "projects") == project, kill
        assert (data / "tracebloc" / "logs" / "keep.log").read_text() == "kept", kill
        shutil.rmtree(home)
    # The kills landed at different moments: some before, some after the deletion.
    assert outcomes.get("mysql-whole", 0) and outcomes.get("mysql-gone", 0), outcomes
    assert time.monotonic() - begun < 120  # small trees: seconds, even on a loaded machine


# --- the question, then the swap, through the real CLI ------------------------------------


@POSIX_ONLY
def test_the_data_directory_swapped_for_a_link_after_the_choice_is_not_wiped(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """`w` at the choice; before the go-ahead, ~/.tracebloc becomes a link to the person's
    project. After `y` nothing of the project is deleted and no cluster is created."""
    from tests.fakes.terminal import Pty
    from tests.test_cli_first_run import changed_machine

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    data = cluster.home / ".tracebloc"
    earlier = tree(data / "tracebloc" / "mysql", 5)
    shop = cluster.home / "projects" / "shop-db"
    project = tree(shop / "tracebloc" / "mysql", 5)

    with Pty.spawn(["install"], env=cluster.env(**env_for(backend)), cwd=cluster.root) as term:
        term.expect("Choice [r/w/n/a]: ")
        term.send("w")
        term.expect("Install? [y/N]")
        os.rename(data, cluster.home / "tracebloc-moved")
        os.symlink(shop, data)
        term.send("y")
        code = term.wait(timeout=90)
        screen = term.screen()

    assert code == 1, screen
    assert "replaced after the question" in screen and "nothing was" in screen, screen
    assert contents(shop / "tracebloc" / "mysql") == project
    assert contents(cluster.home / "tracebloc-moved" / "tracebloc" / "mysql") == earlier
    assert not any(c[1:3] == ["cluster", "create"] for c in changed_machine(cluster))


@POSIX_ONLY
@pytest.mark.parametrize("layout", ["per-release", "flat"])
def test_the_next_install_removes_a_killed_wipes_trash_and_never_offers_it(
    cluster: FakeCluster, backend: BackendServer, layout: str
) -> None:
    """What a killed wipe left under its trash name (MySQL's own schema directory is named
    `mysql` too) is never taken for earlier data: `plan` does not list it and changes
    nothing, `install` without a choice goes on and removes it."""
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    release = cluster.home / ".tracebloc" / "tracebloc"
    trash = (release if layout == "per-release" else release.parent) / (
        f"{datadir.TRASH_PREFIX}0123456789ab-mysql"
    )
    tree(trash / "mysql", 5)
    (release / "logs").mkdir(parents=True)
    (release / "logs" / "keep.log").write_text("kept")

    plan = cluster.run("plan", **env_for(backend))
    assert plan.returncode == 0, plan.stderr
    assert datadir.TRASH_PREFIX not in plan.stdout + plan.stderr and trash.exists()

    installed = cluster.run("install", "--yes", **env_for(backend))
    assert installed.returncode == 0, installed.stderr
    assert not trash.exists()
    assert (release / "logs" / "keep.log").read_text() == "kept"


_BIND_MOUNTED = r"""
import os, subprocess, sys
from pathlib import Path
from installer.edges import datadir
home = Path(sys.argv[1])
data, db, projects = home / ".tracebloc", home / ".tracebloc" / "tracebloc" / "mysql", home / "projects"
(db / "schema0").mkdir(parents=True)
(db / "schema0" / "t0.ibd").write_bytes(b"row\n")
(db / "mnt").mkdir()
projects.mkdir()
(projects / "thesis.tex").write_bytes(b"mine\n")
subprocess.run(["mount", "--bind", str(projects), str(db / "mnt")], check=True)
survivors = datadir.wipe(datadir.shown(str(data), datadir.leftovers(str(data))))
print("kept" if (projects / "thesis.tex").exists() else "lost", survivors)
"""


@POSIX_ONLY
def test_a_mount_inside_the_database_is_not_crossed_by_the_wipe(tmp_path: Path) -> None:
    """A directory mounted inside the data (a bind mount of the person's projects) is
    another file system: the wipe deletes the database's own files and keeps it, like
    `rm -rf --one-file-system`, reporting the database as not wholly removed."""
    import subprocess

    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) for a private mount namespace")
    argv = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        argv[1:1] = ["--map-root-user"]
    probe = subprocess.run([*argv, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode().strip()}")
    done = subprocess.run(
        [*argv, sys.executable, "-c", _BIND_MOUNTED, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("kept"), done.stdout
    assert "mysql" in done.stdout  # not wholly removed: said so
