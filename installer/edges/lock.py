"""One install at a time: an exclusive OS lock on `<data dir>/install.lock` and on
`~/.tracebloc/locks/release-<ns>-<release>.lock` (two kubeconfigs may name one cluster).
It dies with its process. No child inherits it; the holder records each child it runs, so
a helm that outlived a killed engine is found, named and waited for.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import re
import socket
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from installer.decide import paths
from installer.decide.errors import InstallerError, Refused
from installer.decide.printable import shown
from installer.edges import proc

LOCK_FILE = "install.lock"
HOLDER_MAX = 4096  # bytes of holder description read back; the rest is ignored
_WINDOWS = sys.platform == "win32"
# Windows locks bytes, and a locked byte cannot be read by others: lock one far past the
# holder description, which stays readable.
_WINDOWS_LOCK_OFFSET = 1 << 30


def data_dir_lock(data_dir: str) -> str:
    return os.path.join(data_dir, LOCK_FILE)


def release_lock(env: Mapping[str, str], data_dir: str, namespace: str, release: str) -> str:
    """Where the release's lock lives: the user's home (shared by every data directory),
    or the data directory when no home is set."""
    directory = paths.locks_dir(env, "windows" if _WINDOWS else "posix", data_dir)
    readable = re.sub(r"[^a-z0-9.-]", "_", f"{namespace}-{release}".lower())[:100]
    digest = hashlib.sha256(f"{namespace}/{release}".encode()).hexdigest()[:12]
    return os.path.join(directory, f"release-{readable}-{digest}.lock")


def cluster_lock(env: Mapping[str, str], data_dir: str, name: str) -> str:
    """The engine's own local k3d cluster `name`: one install at a time creates, starts or
    adopts it, whatever the namespace or data directory (two installs with different ones
    share the one cluster of that name)."""
    directory = paths.locks_dir(env, "windows" if _WINDOWS else "posix", data_dir)
    readable = re.sub(r"[^a-z0-9.-]", "_", name.lower())[:100]
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return os.path.join(directory, f"local-cluster-{readable}-{digest}.lock")


def scope(env: Mapping[str, str], data_dir: str, namespace: str, release: str) -> list[str]:
    return [data_dir_lock(data_dir), release_lock(env, data_dir, namespace, release)]


@dataclass
class Held:
    """The locks this process holds; `add` takes one more (or refuses). While any is held,
    each child proc runs is recorded in every lock file (see the module docstring)."""

    what: str
    fds: dict[str, int] = field(default_factory=dict)
    children: dict[int, dict[str, object]] = field(default_factory=dict)
    since: str = field(
        default_factory=lambda: datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    )
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def add(self, path: str) -> None:
        if path not in self.fds:
            fd = _acquire(path, self.what)
            with self._guard:
                self.fds[path] = fd
                _write_holder(fd, self.what, self.since, list(self.children.values()))
            proc.watch_children(self._child)

    def release(self) -> None:
        proc.unwatch_children(self._child)
        with self._guard:
            for path, fd in reversed(list(self.fds.items())):
                with contextlib.suppress(OSError):
                    os.close(fd)  # closing the last descriptor releases the lock
                del self.fds[path]

    def _child(self, pid: int, argv: tuple[str, ...] | None) -> None:
        entry: dict[str, object] | None = None
        if argv is not None:
            from installer.edges.machine import process_identity

            identity = process_identity(pid)
            entry = {
                "pid": pid,
                "command": shown(" ".join(argv), lines=False)[:300],
                "started": identity[0] if identity else None,
            }
        with self._guard:
            if entry is not None:
                self.children[pid] = entry
            elif self.children.pop(pid, None) is None:
                return
            for fd in self.fds.values():
                _write_holder(fd, self.what, self.since, list(self.children.values()))


@contextlib.contextmanager
def hold(paths: list[str], *, what: str) -> Iterator[Held]:
    """Hold every lock in `paths` for the body, or raise Refused naming who holds one."""
    held = Held(what)
    try:
        for path in paths:
            held.add(path)
        yield held
    finally:
        held.release()


def _acquire(path: str, what: str) -> int:
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise InstallerError(
            f"cannot open the install lock {path}: {exc.strerror or exc}",
            "check that you own that directory; an install never runs without its lock",
        ) from None
    try:
        locked = _try_lock(fd)
    except OSError as exc:
        os.close(fd)
        raise InstallerError(
            f"cannot take the install lock {path}: {exc.strerror or exc}",
            "check the file system holding it",
        ) from None
    if not locked:
        os.close(fd)
        raise Refused(
            f"another install is running: {describe(read_holder(path), path)}",
            "nothing was changed; wait for it to finish, then run "
            f"tracebloc-installer again (lock: {path})",
        )
    # Free, but a tool the previous holder started may have outlived it (a killed engine on
    # an OS without a parent-death signal): while it runs, nothing may act on the release.
    previous = read_holder(path)
    left = _still_running(previous)
    if left:
        os.close(fd)
        raise Refused(
            f"another install is running: {describe(previous, path)}",
            "nothing was changed; wait for it to finish (or stop it), then run "
            f"tracebloc-installer again (lock: {path})",
        )
    return fd


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except PermissionError:
            return False
        except OSError as exc:
            if exc.errno in (13, 36):  # EACCES, EDEADLOCK: locked by another process
                return False
            raise
        return True
    else:
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def _write_holder(fd: int, what: str, since: str, children: list[dict[str, object]]) -> None:
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": since,
        "what": what,
        "command": _own_command(),
        "children": children,
    }
    data = (json.dumps(holder) + "\n").encode()
    with contextlib.suppress(OSError):  # who holds it is a courtesy; the lock is the lock
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, data)
        os.ftruncate(fd, len(data))


def read_holder(path: str) -> dict[str, object]:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    try:
        data = os.read(fd, HOLDER_MAX)
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        holder = json.loads(data.decode("utf-8", "replace").splitlines()[0])
    except (ValueError, IndexError, RecursionError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _own_command() -> str:
    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    if program in ("", "__main__.py", "-c"):
        program = "tracebloc-installer"  # `python -m installer`
    words = [program, *sys.argv[1:]]
    return shown(" ".join(words), lines=False)[:300]


def _still_running(holder: Mapping[str, object]) -> list[dict[str, object]]:
    """The recorded children of `holder` that still run on this machine: the same pid, and
    the same start time where it was recorded (a reused pid is another process)."""
    from installer.edges.machine import process_identity

    if holder.get("host") not in (None, socket.gethostname()):
        return []
    children = holder.get("children")
    running = []
    for child in children if isinstance(children, list) else []:
        pid = child.get("pid") if isinstance(child, dict) else None
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            continue
        identity = process_identity(pid)
        started = child.get("started")
        if identity is None:
            continue
        if isinstance(started, (int, float)) and abs(identity[0] - started) > 1.0:
            continue
        running.append(child)
    return running


def describe(holder: Mapping[str, object], path: str | None = None) -> str:
    """Who holds (or last held) the lock, in words: the holder's pid and command, and what
    really keeps the lock when the holder has ended."""
    pid, host = holder.get("pid"), holder.get("host")
    if not isinstance(pid, int):
        return _openers(path) or "the install holding the lock did not say who it is"
    # The file is anyone's to write: what it says is shown, never sent to the terminal.
    what = shown(str(holder.get("what") or "install")[:200], lines=False)
    since = shown(str(holder.get("since") or "?")[:40], lines=False)
    command = shown(str(holder.get("command") or "")[:300], lines=False)
    where = (
        f" on {shown(str(host)[:100], lines=False)}"
        if host and host != socket.gethostname()
        else ""
    )
    text = f"{what} (pid {pid}{where}" + (f": {command}" if command else "") + f", since {since})"
    if where or _running(pid):
        return text
    left = _still_running(holder)
    if left:
        first = left[0]
        tool = os.path.basename(str(first.get("command", "")).split(" ", 1)[0]) or "a tool"
        return (
            text + f"; that process has ended, but a tool it started ({tool}) is still "
            f"running: pid {first.get('pid')}, "
            f"{shown(str(first.get('command'))[:300], lines=False)}"
        )
    openers = _openers(path)
    return text + "; that process has ended" + (f", and {openers}" if openers else "")


def _openers(path: str | None) -> str:
    """The processes that have the lock file open, in words ("" when none can be seen)."""
    if path is None:
        return ""
    from installer.edges.machine import processes_holding

    found = [(p, c) for p, c in processes_holding(path) if p != os.getpid()]
    if not found:
        return ""
    return "the lock file is open in " + "; ".join(f"pid {p} ({c})" for p, c in found[:3])


def _running(pid: int) -> bool:
    from installer.edges.machine import process_exists

    return process_exists(pid)
