"""Writing the values file: atomic, owner-only, the previous version kept as `.bak`.

The file holds the client, registry and proxy passwords, so it is never readable by anyone
but its owner, not even for an instant: the temporary file is created owner-only (mkstemp's
0600 on POSIX; an explicit single-user ACL on Windows) before any byte is written to it.
"""

from __future__ import annotations

import getpass
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

from installer.decide.errors import InstallerError
from installer.edges import proc


@dataclass(frozen=True)
class Written:
    path: str
    changed: bool
    backup: str | None


def write_values(path: str, data: bytes, *, env: Mapping[str, str], os_: str) -> Written:
    """Replace `path` with `data` atomically. On any failure the old file is untouched."""
    directory = os.path.dirname(os.path.abspath(path))
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
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    except OSError as exc:
        raise _failure(path, f"cannot create its directory: {exc.strerror or exc}") from None
    _atomic_write(path, data, env=env, os_=os_)


def _read_existing(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _failure(path, f"cannot read the existing file: {exc.strerror or exc}") from None


def _atomic_write(path: str, data: bytes, *, env: Mapping[str, str], os_: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temp = tempfile.mkstemp(prefix=".values-", suffix=".tmp", dir=directory)
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
        os.chmod(path, 0o600)
        return
    user = env.get("USERNAME") or getpass.getuser()
    domain = env.get("USERDOMAIN")
    principal = f"{domain}\\{user}" if domain else user
    tool = proc.find_tool("icacls", env, os_)
    result = proc.run(tool, [path, "/inheritance:r", "/grant:r", f"{principal}:F"],
                      timeout=30, env=env)  # fmt: skip
    if result.rc != 0:
        raise InstallerError(
            f"could not make {path} private to {principal}: "
            f"{proc.last_line(result.stderr or result.stdout, result.rc)}",
            "nothing was written; check the folder's permissions",
        )


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
