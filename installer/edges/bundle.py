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
from collections.abc import Mapping, Sequence

from installer.edges.valuesfile import write_private


def write(directory: str, files: Sequence[tuple[str, bytes]], os_: str,
          env: Mapping[str, str], now: float | None = None) -> str:  # fmt: skip
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
