"""Writing the values file: atomic, owner-only, the previous version kept as `.bak`.

The file holds the client, registry and proxy passwords, so it is never readable by anyone
but its owner, not even for an instant: the temporary file is created owner-only (mkstemp's
0600 on POSIX; an explicit single-user ACL on Windows) before any byte is written to it.
"""

from __future__ import annotations

import getpass
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from installer.decide.errors import BadInput, InstallerError
from installer.edges import childio, proc, toolpath
from installer.edges.files import read_bounded, refuse_special_target


@dataclass(frozen=True)
class Written:
    path: str
    changed: bool
    backup: str | None


# A values file is a few kilobytes; anything near this is not one.
MAX_VALUES_BYTES = 4 * 2**20
_TEMP_PREFIX = ".values-"
_TEMP = re.compile(r"\.values-(?:(?P<pid>\d+)-)?[A-Za-z0-9_]+\.tmp")
# A temporary file of a writer that left no pid in its name is stale after this long.
STALE_TEMP_S = 60.0


def read_regular(path: str, *, limit: int = MAX_VALUES_BYTES) -> bytes | None:
    """The bytes of the regular values file at `path`, or None when nothing is there: the
    engine's one bounded read (edges/files.py), so a FIFO, `/dev/zero` or a huge file is an
    error, never a hang or an exhausted memory."""
    return read_bounded(path, limit=limit, what="a values file")


def remove_stale_temps(directory: str) -> list[str]:
    """Delete temporary files an interrupted write left behind (they hold the passwords):
    those of a process that no longer runs, or older than STALE_TEMP_S. Returns their names."""
    from installer.edges.machine import process_exists

    removed: list[str] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        match = _TEMP.fullmatch(name)
        if match is None:
            continue
        path = os.path.join(directory, name)
        try:
            found = os.lstat(path)
            if not stat.S_ISREG(found.st_mode):
                continue
            pid = int(match["pid"]) if match["pid"] else None
            if pid == os.getpid():
                continue
            alive = (
                process_exists(pid)
                if pid is not None
                else (time.time() - found.st_mtime < STALE_TEMP_S)
            )
            if not alive:
                os.unlink(path)
                removed.append(name)
        except (OSError, ValueError, OverflowError):
            continue
    return removed


def write_values(path: str, data: bytes, *, env: Mapping[str, str], os_: str) -> Written:
    """Replace `path` with `data` atomically. On any failure the old file is untouched."""
    refuse_special_target(path)  # before anything is written, a `.bak` included
    directory = os.path.dirname(os.path.abspath(path))
    remove_stale_temps(directory)
    previous = _read_existing(path)
    if previous == data:
        restrict(path, env=env, os_=os_)
        return Written(path, changed=False, backup=None)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise _failure(path, f"cannot create {directory}: {exc.strerror or exc}") from None
    backup = None
    if previous is not None:
        backup = path + ".bak"
        _atomic_write(backup, previous, env=env, os_=os_)
    _atomic_write(path, data, env=env, os_=os_)
    return Written(path, changed=True, backup=backup)


def write_private(path: str, data: bytes, *, env: Mapping[str, str], os_: str) -> None:
    """Write `path` atomically and owner-only, without a backup (a file nobody keeps)."""
    refuse_special_target(path)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    except OSError as exc:
        raise _failure(path, f"cannot create its directory: {exc.strerror or exc}") from None
    _atomic_write(path, data, env=env, os_=os_)


def _read_existing(path: str) -> bytes | None:
    try:
        return read_regular(path)
    except InstallerError as exc:
        raise _failure(path, f"the existing file cannot be kept: {exc.message}") from None


def _atomic_write(path: str, data: bytes, *, env: Mapping[str, str], os_: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        # The pid in the name lets the next run tell an abandoned file from a live write.
        fd, temp = tempfile.mkstemp(
            prefix=f"{_TEMP_PREFIX}{os.getpid()}-", suffix=".tmp", dir=directory
        )
    except OSError as exc:
        raise _failure(
            path, f"cannot create a file in {directory}: {exc.strerror or exc}"
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            restrict(temp, env=env, os_=os_)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _failure(path, exc.strerror or str(exc)) from None
        raise
    _fsync_directory(directory, os_)


def restrict(path: str, *, env: Mapping[str, str], os_: str) -> None:
    """Owner-only access: mode 0600 on POSIX, an ACL granting only the current user on
    Windows (inheritance removed, so the folder's grants to others do not apply)."""
    if os_ != "windows":
        _chmod_itself(path)
        return
    user = env.get("USERNAME") or getpass.getuser()
    domain = env.get("USERDOMAIN")
    principal = f"{domain}\\{user}" if domain else user
    tool = toolpath.find_tool("icacls", env, os_)
    result = proc.run(
        tool, [path, "/inheritance:r", "/grant:r", f"{principal}:F"], timeout=30, env=env
    )
    if result.rc != 0:
        raise InstallerError(
            f"could not make {path} private to {principal}: "
            f"{childio.last_line(result.stderr or result.stdout, result.rc)}",
            "nothing was written; check the folder's permissions",
        )


def _chmod_itself(path: str) -> None:
    """Mode 0600 on `path` itself, never on what a link put there meanwhile points at (the
    link check ran before the file was read; O_NOFOLLOW holds at the chmod)."""
    if sys.platform == "win32":  # a POSIX mode asked for on Windows (tests): no fchmod there
        os.chmod(path, 0o600)
        return
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        why = "it is a symbolic link" if os.path.islink(path) else exc.strerror or str(exc)
        raise _failure(path, f"cannot make it owner-only: {why}") from None
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _fsync_directory(directory: str, os_: str) -> None:
    # Makes the rename itself durable on POSIX; Windows cannot open a directory this way.
    if os_ == "windows":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _failure(path: str, why: str) -> InstallerError:
    return InstallerError(
        f"could not write {path}: {why}",
        "the previous values file, if any, was left exactly as it was",
    )


def load_yaml(path: str, *, required: bool) -> Any:
    """The YAML document in the regular file at `path` (None when absent and not required)."""
    data = read_regular(path)  # a regular file or nothing: a FIFO or a device is an error
    if data is None:
        if required:
            raise BadInput(f"{path} does not exist")
        return None
    # Depth and alias expansion bounded (decide/yamldoc.py): a bomb is exit 2, not a hang.
    # Imported here: `probe` reads no YAML and does not load the parser.
    from installer.decide import yamldoc

    return yamldoc.load(
        data,
        path,
        "fix or move it aside; or set TB_MYSQL_ENGINE so the engine need not be read from it",
    )
