"""Write a support bundle: one archive, owner-only, complete or absent.

`.tar.gz` on Linux and macOS, `.zip` on Windows: what each opens with a double-click. The
archive is written to a temporary file beside its final name and renamed into place, so a
kill at any moment leaves either no bundle or a whole one.
"""

from __future__ import annotations

import io
import os
import tarfile
import time
import zipfile
from collections.abc import Sequence

from installer.decide.errors import InstallerError


def write(directory: str, files: Sequence[tuple[str, bytes]], os_: str,
          now: float | None = None) -> str:  # fmt: skip
    """Archive `files` (name, bytes) under one top folder; returns the archive's path."""
    moment = time.localtime(now)
    stem = "tracebloc-diagnose-" + time.strftime("%Y%m%d-%H%M%S", moment)
    suffix = ".zip" if os_ == "windows" else ".tar.gz"
    path = os.path.join(directory, stem + suffix)
    temporary = f"{path}.{os.getpid()}.partial"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0),
                     0o600)  # fmt: skip
        with open(fd, "wb") as handle:
            handle.write(archive(stem, files, zip_format=os_ == "windows", mtime=time.mktime(moment)))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise InstallerError(f"cannot write the support bundle in {directory}: "
                             f"{exc.strerror or exc}",
                             "set HOST_DATA_DIR to a directory you can write to") from None  # fmt: skip
    return path


def archive(top: str, files: Sequence[tuple[str, bytes]], *, zip_format: bool,
            mtime: float) -> bytes:  # fmt: skip
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
