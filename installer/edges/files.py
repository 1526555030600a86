"""Every file the engine reads, read one way: bounded, without blocking, regular files only.

lstat, a non-blocking open, the same check on the descriptor, then at most `limit` bytes,
so a FIFO, a device or a huge file is an error naming the file, never a hang.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys

from installer.decide.errors import BadInput, InstallerError

KIB, MIB = 2**10, 2**20


class NotRegular(InstallerError):
    """The path exists but is not a regular file (a FIFO, a device, a directory)."""


class Unreadable(InstallerError):
    """The file is there but the operating system would not let us read it."""


class TooLarge(BadInput):
    """The file is larger than anything of its kind could be."""


def _size(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit // KIB} KiB"


def read_bounded(
    path: str, *, limit: int, what: str, remedy: str = "move it aside"
) -> bytes | None:
    """The bytes of the regular file at `path` (at most `limit` of them), or None when
    nothing is there. `what` names the kind of file in errors ("a values file")."""
    try:
        found = os.lstat(path)
        if stat.S_ISLNK(found.st_mode):
            found = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(found.st_mode):
        raise NotRegular(
            f"{path} is not a regular file", f"{remedy}, or point the setting at {what}"
        )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(
                f"{path} is not a regular file", f"{remedy}, or point the setting at {what}"
            )
        chunks, size = [], 0
        while chunk := os.read(fd, min(65536, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"{path} is larger than {_size(limit)}: not {what}", remedy)
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def refuse_special_target(path: str, *, said: str = "nothing was written") -> None:
    """A file the engine is about to replace must be a regular file or nothing: never a link, a
    device, FIFO or directory. `said` is what the refusal says of the run so far."""
    try:
        found = os.lstat(path)
    except OSError:
        return  # nothing there, or nothing that can be looked at: the write itself says why
    if stat.S_ISLNK(found.st_mode):
        raise BadInput(
            f"will not write {path}: it is a symbolic link (to {_link(path)}); {said}",
            "name the file itself, or remove the link",
        )
    if not stat.S_ISREG(found.st_mode):
        raise BadInput(
            f"will not write {path}: it is not a regular file (a device, FIFO or "
            f"directory); {said}",
            "name a regular file",
        )


def open_append(path: str) -> int:
    """A descriptor appending to the regular file `path` (created 0600, a readable one narrowed on
    POSIX), never through a link (O_NOFOLLOW, or lstat-and-compare on Windows), FIFO or device."""
    refuse = f"cannot open the log file {path}"
    remedy = "remove or rename it; the log is written only to a regular file of its own"
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise InstallerError(f"{refuse}: {exc.strerror or exc}", remedy) from None
    if before is not None and stat.S_ISLNK(before.st_mode):
        raise InstallerError(f"{refuse}: it is a symbolic link (to {_link(path)})", remedy)
    flags = (
        os.O_WRONLY
        | os.O_APPEND
        | os.O_CREAT
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_NOCTTY", 0)
        | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        why = "it is a symbolic link" if os.path.islink(path) else exc.strerror or str(exc)
        raise InstallerError(f"{refuse}: {why}", remedy) from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise InstallerError(f"{refuse}: it is not a regular file", remedy)
        if (
            before is not None
            and before.st_ino
            and (found.st_dev, found.st_ino) != (before.st_dev, before.st_ino)
        ):
            raise InstallerError(f"{refuse}: it was replaced while being opened", remedy)
        if sys.platform != "win32":
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            if found.st_mode & 0o077:
                with contextlib.suppress(OSError):  # not ours to change: keep logging anyway
                    os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"
