"""One install at a time: an exclusive lock on the data directory and on the target release.

Two installs that share a data directory would write one values file; two installs of one
release would both change it, and the second would take the first's `pending-*` state for a
crash and "recover" it under a helm that is still running. So `install` holds:

- `<data dir>/install.lock`, and
- `<home>/.tracebloc/locks/release-<namespace>-<release>.lock`, whatever the data directory
  (keyed by namespace and release only: two kubeconfigs may name one cluster, so locking
  per connection could let two installs of one release through).

The lock is the operating system's (`flock` on POSIX, a byte-range lock on Windows): it is
released when the process holding it dies, however it dies, so a stale lock file needs no
clean-up; the file itself stays and only says who held it last. On POSIX the lock is also
passed to every child, so a helm that outlives a killed engine (macOS has no parent-death
signal) still holds it, and the next run refuses instead of acting under it.
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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from installer.decide.errors import InstallerError, Refused
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
    home = (env.get("USERPROFILE") if _WINDOWS else env.get("HOME")) or ""
    home = home.strip()
    directory = os.path.join(home, ".tracebloc", "locks") if home else data_dir
    readable = re.sub(r"[^a-z0-9.-]", "_", f"{namespace}-{release}".lower())[:100]
    digest = hashlib.sha256(f"{namespace}/{release}".encode()).hexdigest()[:12]
    return os.path.join(directory, f"release-{readable}-{digest}.lock")


def scope(env: Mapping[str, str], data_dir: str, namespace: str, release: str) -> list[str]:
    return [data_dir_lock(data_dir), release_lock(env, data_dir, namespace, release)]


@dataclass
class Held:
    """The locks this process holds; `add` takes one more (or refuses)."""

    what: str
    fds: dict[str, int] = field(default_factory=dict)

    def add(self, path: str) -> None:
        if path not in self.fds:
            self.fds[path] = _acquire(path, self.what)

    def release(self) -> None:
        for path, fd in reversed(list(self.fds.items())):
            proc.stop_passing(fd)
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the last descriptor releases the lock
            del self.fds[path]


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
        raise InstallerError(f"cannot take the install lock {path}: {exc.strerror or exc}",
                             "check the file system holding it") from None  # fmt: skip
    if not locked:
        os.close(fd)
        raise Refused(f"another install is running: {describe(read_holder(path))}",
                      "nothing was changed; wait for it to finish, then run "
                      f"tracebloc-installer again (lock: {path})")  # fmt: skip
    _write_holder(fd, what)
    proc.pass_to_children(fd)
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


def _write_holder(fd: int, what: str) -> None:
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "what": what,
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


def describe(holder: Mapping[str, object]) -> str:
    pid, host = holder.get("pid"), holder.get("host")
    if not isinstance(pid, int):
        return "the install holding the lock did not say who it is"
    what = str(holder.get("what") or "install")[:200]
    since = str(holder.get("since") or "?")[:40]
    where = f" on {str(host)[:100]}" if host and host != socket.gethostname() else ""
    text = f"{what} (pid {pid}{where}, since {since})"
    if not where and not _running(pid):
        text += ("; that process has ended, but a tool it started (helm) is still running "
                 "and holds the lock")  # fmt: skip
    return text


def _running(pid: int) -> bool:
    from installer.edges.machine import process_exists

    return process_exists(pid)
