"""Write a support bundle: one archive, owner-only, complete or absent.

`.tar.gz` on Linux and macOS, `.zip` on Windows, written beside its final name and renamed
into place. `read_file` reads a regular file only, bounded, never following a link (a link
is noted, never read: it could point at credentials).
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from installer.edges.valuesfile import write_private


@dataclass(frozen=True)
class Read:
    data: bytes | None  # None: nothing was read, `note` says why
    note: str = ""  # what the bundle says of the file (left out, or cut)


_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def _is_link(found: os.stat_result) -> bool:
    return stat.S_ISLNK(found.st_mode) or bool(
        getattr(found, "st_file_attributes", 0) & 0x400
    )  # a Windows junction


def read_file(path: str, limit: int, *, tail: bool = False) -> Read:
    """At most `limit` bytes of the regular file at `path` (its last ones with `tail`; a
    larger file without `tail` is left out whole), never through a link."""
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        return Read(None, "not found")
    except OSError as exc:
        return Read(None, f"not read: {exc.strerror or exc}")
    if _is_link(before):
        return Read(None, "a symbolic link: not read (the bundle follows no links)")
    if not stat.S_ISREG(before.st_mode):
        return Read(None, "not a regular file: not read")
    try:
        fd = os.open(path, _FLAGS)  # O_NOFOLLOW: a link swapped in since the lstat fails here
    except OSError as exc:
        return Read(None, f"not read: {exc.strerror or exc}")
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or (found.st_dev, found.st_ino) != (
            before.st_dev,
            before.st_ino,
        ):
            return Read(None, "replaced while being read: not read")
        note = ""
        if found.st_size > limit:
            if not tail:
                return Read(None, f"left out, larger than {limit // 1024} KiB")
            os.lseek(fd, found.st_size - limit, os.SEEK_SET)
            note = f"only its last {limit // 1024} KiB"
        chunks, size = [], 0
        while size < limit and (chunk := os.read(fd, min(65536, limit - size))):
            chunks.append(chunk)
            size += len(chunk)
        return Read(b"".join(chunks), note)
    except OSError as exc:
        return Read(None, f"not read: {exc.strerror or exc}")
    finally:
        os.close(fd)


def write(
    directory: str,
    files: Sequence[tuple[str, bytes]],
    os_: str,
    env: Mapping[str, str],
    now: float | None = None,
) -> str:
    """Archive `files` (name, bytes) under one top folder; returns the archive's path.
    Written as the values file is (valuesfile.write_private): atomic, owner-only (ACL on
    Windows), fsynced."""
    moment = time.localtime(now)
    stem = "tracebloc-diagnose-" + time.strftime("%Y%m%d-%H%M%S", moment)
    suffix = ".zip" if os_ == "windows" else ".tar.gz"
    path = os.path.join(directory, stem + suffix)
    data = archive(stem, files, zip_format=os_ == "windows", mtime=time.mktime(moment))
    write_private(path, data, env=env, os_=os_)
    return path


def archive(
    top: str, files: Sequence[tuple[str, bytes]], *, zip_format: bool, mtime: float
) -> bytes:
    buffer = io.BytesIO()
    if zip_format:
        stamp = time.localtime(mtime)[:6]
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
            for name, data in files:
                entry = zipfile.ZipInfo(f"{top}/{name}", date_time=stamp)
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry.external_attr = 0o600 << 16
                bundle.writestr(entry, data)
        return buffer.getvalue()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files:
            member = tarfile.TarInfo(f"{top}/{name}")
            member.size, member.mode, member.mtime = len(data), 0o600, int(mtime)
            tar.addfile(member, io.BytesIO(data))
    return buffer.getvalue()
