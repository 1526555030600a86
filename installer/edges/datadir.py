"""The host data directory of a local cluster: leftovers of an earlier client, their wipe,
and the directories the chart's hostPath volumes bind.

Leftover data is a MySQL or dataset directory holding at least one file, in the flat layout
(`<dir>/mysql`, `<dir>/data`) or per release (`<dir>/<release>/mysql`, …). Symlinks are never
followed, so a wipe cannot reach outside the data directory; a directory that cannot be
listed cannot be proven empty and counts as a leftover.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable

from installer.decide.deletion import Entry

_DATA = ("mysql", "data")


def _is_link(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode) or bool(
            getattr(os.lstat(path), "st_file_attributes", 0) & 0x400  # a Windows junction
        )
    except OSError:
        return False


def _holds_a_file(path: str) -> bool:
    """True when any file lies below `path`, or when part of it cannot be listed."""
    for _root, _dirs, files in os.walk(path, onerror=_raise):
        if files:
            return True
    return False


def _raise(exc: OSError) -> None:
    raise exc


def leftovers(data_dir: str) -> list[str]:
    if not os.path.isdir(data_dir) or _is_link(data_dir):
        return []
    candidates = [os.path.join(data_dir, name) for name in _DATA]
    try:
        entries = sorted(os.scandir(data_dir), key=lambda e: e.name)
    except OSError:
        return [data_dir]
    for entry in entries:
        if entry.name in _DATA or _is_link(entry.path) or not entry.is_dir(follow_symlinks=False):
            continue
        candidates += [os.path.join(entry.path, name) for name in _DATA]
    found = []
    for path in candidates:
        if not os.path.isdir(path) or _is_link(path):
            continue
        try:
            if _holds_a_file(path):
                found.append(path)
        except OSError:
            found.append(path)
    return found


def wipe(data_dir: str, paths: Iterable[str]) -> list[str]:
    """Remove each path (which must lie inside `data_dir`); returns those that survived."""
    base = os.path.realpath(data_dir)
    survivors = []
    for path in paths:
        real = os.path.realpath(path)
        inside = os.path.commonpath([base, real]) == base and real != base
        if not inside or _is_link(path):
            survivors.append(path)
            continue
        shutil.rmtree(path, ignore_errors=True)
        if os.path.lexists(path):
            survivors.append(path)
    return survivors


def ensure_traversable(directory: str) -> None:
    """Create `directory` (owner-only) and let others pass through it, without listing it:
    the pods reach their volumes below it as other users through the bind mount."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    if os.name != "nt":
        mode = os.stat(directory).st_mode & 0o7777
        if mode & 0o011 != 0o011:
            os.chmod(directory, mode | 0o011)


def make_dirs(dirs: Iterable[tuple[str, int]]) -> list[str]:
    """Create each directory and give it its mode (not recursively: files keep theirs).
    Returns the ones whose mode could not be set; a mount that cannot hold POSIX modes is
    not a failure of the install."""
    unset = []
    for path, mode in dirs:
        os.makedirs(path, exist_ok=True)
        if os.name == "nt":
            continue
        try:
            os.chmod(path, mode)
        except OSError:
            unset.append(path)
    return unset


def entries(directory: str) -> list[Entry]:
    """What is directly inside `directory`, links seen as links (never followed). OSError
    when it cannot be listed: what cannot be seen is never taken for empty."""
    out = []
    with os.scandir(directory) as listing:
        for entry in listing:
            if _is_link(entry.path):
                kind = "link"
            elif entry.is_dir(follow_symlinks=False):
                kind = "dir"
            elif entry.is_file(follow_symlinks=False):
                kind = "file"
            else:
                kind = "other"
            out.append(Entry(entry.name, kind))
    return out


def size_of(path: str) -> int | None:
    """Bytes below `path` (links counted as themselves, never followed); None when part of
    it cannot be read."""
    try:
        total = os.lstat(path).st_size
        if not stat.S_ISDIR(os.lstat(path).st_mode) or _is_link(path):
            return total
        for root, dirs, files in os.walk(path, onerror=_raise):
            for name in dirs + files:
                total += os.lstat(os.path.join(root, name)).st_size
    except OSError:
        return None
    return total
