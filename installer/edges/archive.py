"""Take one binary out of a downloaded (already verified) tar.gz or zip, and nothing else.

The archive must hold exactly what the official one holds; a member outside the folder, a
link, a device, a duplicate, an extra or missing file fails it before a byte is written.
"""

from __future__ import annotations

import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterable
from typing import IO, BinaryIO

from installer.decide.errors import InstallerError


class ArchiveRejected(InstallerError):
    """The archive holds something the official one does not."""


def extract_member(
    archive_path: str, kind: str, member: str, others: Iterable[str], out: BinaryIO
) -> int:
    """Write `member` of the archive at `archive_path` to `out`; returns the bytes written."""
    allowed = {member, *others}
    try:
        if kind == "tar.gz":
            return _from_tar(archive_path, member, allowed, out)
        if kind == "zip":
            return _from_zip(archive_path, member, allowed, out)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ArchiveRejected(f"the archive cannot be read: {exc}") from None
    raise ArchiveRejected(f"unknown archive kind {kind!r}")


def _check_names(names: list[str], member: str, allowed: set[str], folders: set[str]) -> None:
    """Every name is a safe relative path that the official archive holds, once."""
    seen: set[str] = set()
    for name in names:
        clean = name.rstrip("/")
        if not _safe(name):
            raise ArchiveRejected(f"the archive holds {name!r}, a path outside its folder")
        if clean in seen:
            raise ArchiveRejected(f"the archive holds {clean!r} twice")
        seen.add(clean)
        if clean not in allowed and clean not in folders:
            raise ArchiveRejected(f"the archive holds {name!r}, which the official one does not")
    if member not in seen:
        raise ArchiveRejected(f"the archive does not hold {member!r}")


def _safe(name: str) -> bool:
    if not name or name.startswith(("/", "\\")) or "\\" in name or "\x00" in name:
        return False
    parts = name.rstrip("/").split("/")
    return ":" not in parts[0] and all(p not in ("", ".", "..") for p in parts)


def _folders(allowed: set[str]) -> set[str]:
    """The folders the allowed files live in (an archive may list them as entries)."""
    out = set()
    for name in allowed:
        parts = name.split("/")[:-1]
        out |= {"/".join(parts[: i + 1]) for i in range(len(parts))}
    return out


def _from_tar(path: str, member: str, allowed: set[str], out: BinaryIO) -> int:
    folders = _folders(allowed)
    with tarfile.open(path, "r:gz") as tar:
        members = tar.getmembers()
        _check_names([m.name for m in members], member, allowed, folders)
        target = None
        for item in members:
            name = item.name.rstrip("/")
            # Links, devices and fifos are refused outright; a folder only where one belongs.
            if item.isdir() and name in folders:
                continue
            if not item.isreg() or name in folders:
                raise ArchiveRejected(f"the archive holds {item.name!r}, which is not a plain file")
            _data_filter(item)
            if name == member:
                target = item
        source = tar.extractfile(target) if target is not None else None
        if source is None:
            raise ArchiveRejected(f"the archive does not hold {member!r} as a file")
        return _copy(source, out)


def _data_filter(item: tarfile.TarInfo) -> None:
    """Python's own `data` rule where it exists (3.12, and 3.10.12/3.11.4 backports); on an
    older interpreter the checks above are the rule: relative names without `..`, plain
    files only (no links, devices or fifos), and it is those we apply everywhere."""
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is None:
        return
    try:
        data_filter(item, "/nonexistent-destination")
    except tarfile.TarError as exc:  # FilterError is a TarError
        raise ArchiveRejected(f"the archive holds {item.name!r}: {exc}") from None


def _from_zip(path: str, member: str, allowed: set[str], out: BinaryIO) -> int:
    folders = _folders(allowed)
    with zipfile.ZipFile(path) as bundle:
        infos = bundle.infolist()
        _check_names([i.filename for i in infos], member, allowed, folders)
        target = None
        for info in infos:
            name = info.filename.rstrip("/")
            mode = info.external_attr >> 16
            if info.is_dir() and name in folders:
                continue
            # A zip made on Unix records the file type: a symlink is S_IFLNK.
            if info.is_dir() or name in folders or (mode and not stat.S_ISREG(mode)):
                raise ArchiveRejected(
                    f"the archive holds {info.filename!r}, which is not a plain file"
                )
            if info.flag_bits & 0x1:
                raise ArchiveRejected(f"the archive holds {info.filename!r} encrypted")
            if name == member:
                target = info
        if target is None:
            raise ArchiveRejected(f"the archive does not hold {member!r} as a file")
        with bundle.open(target) as source:
            return _copy(source, out)


def _copy(source: IO[bytes], out: BinaryIO) -> int:
    before = out.tell()
    shutil.copyfileobj(source, out, 1 << 20)
    return out.tell() - before
