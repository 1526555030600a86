"""The host data directory of a local cluster: leftovers of an earlier client, their wipe,
and the directories the chart's hostPath volumes bind. The wipe deletes only what was shown,
through directory descriptors identified at the choice, renaming each leftover to a trash
name first, so a kill leaves it whole under one of the two names (`remove_trash`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from installer.decide.deletion import Entry

_DATA = ("mysql", "data")
TRASH_PREFIX = ".tracebloc-trash-"
# The engine's own trash names, exactly: nothing else in the directory is ever taken for one.
_TRASH = re.compile(re.escape(TRASH_PREFIX) + r"[0-9a-f]{12}-.+")
# POSIX: every step through directory descriptors (Linux and macOS have them all).
BY_FD = (
    os.name != "nt"
    and {os.open, os.stat, os.rename, os.unlink, os.rmdir} <= os.supports_dir_fd
    and os.scandir in os.supports_fd
)
_DIR_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class Changed(Exception):
    """The data directory is no longer the one shown at the question."""


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
        if (
            entry.name in _DATA
            or _TRASH.fullmatch(entry.name)
            or _is_link(entry.path)
            or not entry.is_dir(follow_symlinks=False)
        ):
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


@dataclass(frozen=True)
class Shown:
    """The data directory and its leftovers as they were when the wipe was chosen: each
    leftover by its path below the directory and its (device, inode)."""

    data_dir: str
    identity: tuple[int, int]
    leftovers: tuple[tuple[str, tuple[int, int]], ...]


def _identity(found: os.stat_result) -> tuple[int, int]:
    return found.st_dev, found.st_ino


def shown(data_dir: str, paths: Iterable[str]) -> Shown:
    """What the person is shown, pinned (`Changed` when the directory is not a directory)."""
    try:
        found = os.lstat(data_dir)
    except OSError as exc:
        raise Changed(f"{data_dir} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(found.st_mode) or _is_link(data_dir):
        raise Changed(f"{data_dir} is not a directory")
    pinned = []
    for path in paths:
        relative = os.path.relpath(path, data_dir)
        if relative.startswith(os.pardir) or os.path.isabs(relative):
            continue  # not below it: never deleted
        try:
            pinned.append((relative, _identity(os.lstat(path))))
        except OSError:
            pinned.append((relative, (-1, -1)))  # cannot be pinned: it survives the wipe
    return Shown(data_dir, _identity(found), tuple(pinned))


def wipe(pinned: Shown) -> list[str]:
    """Delete each entry shown (a directory with all below it, or a file); returns those
    that survived. `Changed` (nothing deleted) when the data directory is not the one
    shown. Used for the leftovers of an earlier client and by `uninstall --delete-data`."""
    if not BY_FD:
        return _wipe_by_path(pinned)
    try:
        top = os.open(pinned.data_dir, _DIR_FLAGS)
    except OSError as exc:
        raise Changed(
            f"{pinned.data_dir} was replaced after the question (it cannot be "
            f"opened as a directory: {exc.strerror or exc})"
        ) from None
    try:
        if _identity(os.fstat(top)) != pinned.identity:
            raise Changed(f"{pinned.data_dir} was replaced after the question")
        moved, survivors = [], []
        for relative, identity in pinned.leftovers:  # all renamed first, then deleted
            trashed = _to_trash(top, relative, identity)
            if trashed is None:
                survivors.append(relative)
            else:
                moved.append(trashed)
        for parent, name, relative in moved:
            if not name:
                continue  # a file, deleted already
            with _opened(top, parent) as where:
                if where is None or not _remove_tree(where, name):
                    survivors.append(f"{relative} (now {os.path.join(parent, name)})")
        return [os.path.join(pinned.data_dir, path) for path in survivors]
    finally:
        os.close(top)


def _to_trash(top: int, relative: str, identity: tuple[int, int]) -> tuple[str, str, str] | None:
    """Rename the directory, in its own directory, to a trash name (a file is deleted at
    once: that is whole already); None (untouched) when it is not the one shown. Its
    (parent, trash name, path) when renamed, ("", "", path) when a file was deleted."""
    parent, name = os.path.split(relative)
    trash = f"{TRASH_PREFIX}{secrets.token_hex(6)}-{name}"
    with _opened(top, parent) as where:
        if where is None:
            return None
        try:
            found = os.stat(name, dir_fd=where, follow_symlinks=False)
            if _identity(found) != identity:
                return None
            if stat.S_ISREG(found.st_mode):
                os.unlink(name, dir_fd=where)
                return "", "", relative
            if not stat.S_ISDIR(found.st_mode):
                return None
            os.rename(name, trash, src_dir_fd=where, dst_dir_fd=where)
            after = os.stat(trash, dir_fd=where, follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISDIR(after.st_mode) or _identity(after) != identity:
            # Swapped between the look and the rename: what was renamed was never shown.
            with contextlib.suppress(OSError):
                os.rename(trash, name, src_dir_fd=where, dst_dir_fd=where)
            return None
    return parent, trash, relative


@contextlib.contextmanager
def _opened(top: int, relative: str) -> Iterator[int | None]:
    """The directory `relative` below `top`, each part opened without following a link;
    None when a part is missing, a link or not a directory."""
    fd = os.dup(top)
    try:
        for part in [p for p in relative.split(os.sep) if p and p != os.curdir]:
            if part == os.pardir:
                raise OSError("not below the data directory")
            inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError:
        os.close(fd)
        yield None
        return
    try:
        yield fd
    finally:
        os.close(fd)


def _mount(fd: int) -> tuple[int, str]:
    """Which mount the directory `fd` is on: its device, and on Linux the mount id
    (/proc/self/fdinfo), since a bind mount of the same file system has the same device."""
    mnt_id = ""
    with contextlib.suppress(OSError), open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
        mnt_id = next((line.split()[1] for line in info if line.startswith("mnt_id:")), "")
    return os.fstat(fd).st_dev, mnt_id


def _remove_tree(parent: int, name: str) -> bool:
    """Delete `name` in `parent` and all below it through directory descriptors, never following a
    link or crossing a file system. True when gone; the first failure stops it."""
    stack: list[tuple[int, str]] = []
    try:
        stack.append((os.open(name, _DIR_FLAGS, dir_fd=parent), name))
        mount = _mount(stack[0][0])
        while stack:
            fd = stack[-1][0]
            deeper = None
            with os.scandir(fd) as listing:
                for entry in listing:
                    if entry.is_dir(follow_symlinks=False):
                        deeper = (os.open(entry.name, _DIR_FLAGS, dir_fd=fd), entry.name)
                        if _mount(deeper[0]) != mount:
                            os.close(deeper[0])
                            return False
                        break
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.name, dir_fd=fd)
            if deeper is not None:
                stack.append(deeper)
                continue
            fd, done = stack.pop()
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(done, dir_fd=stack[-1][0] if stack else parent)
    except FileNotFoundError:
        return not stack
    except OSError:
        return False
    finally:
        for fd, _ in stack:
            os.close(fd)
    return True


def _wipe_by_path(pinned: Shown) -> list[str]:
    """Windows (no directory descriptors): the same order by path, each step checked."""
    base = pinned.data_dir
    try:
        if _identity(os.lstat(base)) != pinned.identity or _is_link(base):
            raise Changed(f"{base} was replaced after the question")
    except OSError as exc:
        raise Changed(f"{base} cannot be read: {exc.strerror or exc}") from None
    moved, survivors = [], []
    for relative, identity in pinned.leftovers:
        parent, name = os.path.split(relative)
        path = os.path.join(base, relative)
        trash = os.path.join(base, parent, f"{TRASH_PREFIX}{secrets.token_hex(6)}-{name}")
        parts = [
            os.path.join(base, *relative.split(os.sep)[: i + 1])
            for i in range(len(relative.split(os.sep)))
        ]
        try:
            if any(_is_link(p) for p in parts) or _identity(os.lstat(path)) != identity:
                survivors.append(path)
                continue
            if not os.path.isdir(path):
                os.unlink(path)
                continue
            os.rename(path, trash)
            moved.append((path, trash))
        except OSError:
            survivors.append(path)
    for path, trash in moved:
        shutil.rmtree(trash, ignore_errors=True)
        if os.path.lexists(trash):
            survivors.append(f"{path} (now {trash})")
    return survivors


def remove_trash(data_dir: str) -> list[str]:
    """Delete what an earlier wipe renamed to a trash name and was killed before deleting
    (in the directory and one level below, where leftovers lie); returns what remains."""
    remains = []
    for where in [data_dir, *_subdirs(data_dir)]:
        try:
            names = [n for n in os.listdir(where) if _TRASH.fullmatch(n)]
        except OSError:
            continue
        for name in names:
            if not _remove_trash_entry(where, name):
                remains.append(os.path.join(where, name))
    return remains


def _subdirs(data_dir: str) -> list[str]:
    try:
        with os.scandir(data_dir) as listing:
            return [
                e.path
                for e in listing
                if e.is_dir(follow_symlinks=False)
                and not _is_link(e.path)
                and not _TRASH.fullmatch(e.name)
            ]
    except OSError:
        return []


def _remove_trash_entry(where: str, name: str) -> bool:
    if not BY_FD:
        path = os.path.join(where, name)
        if _is_link(path) or _is_link(where):
            return False
        shutil.rmtree(path, ignore_errors=True)
        return not os.path.lexists(path)
    try:
        fd = os.open(where, _DIR_FLAGS)
    except OSError:
        return False
    try:
        return _remove_tree(fd, name)
    finally:
        os.close(fd)


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
        if _is_link(os.path.dirname(path)):  # makedirs would make it behind the link
            raise OSError(f"{os.path.dirname(path)} is a symbolic link")
        os.makedirs(path, exist_ok=True)
        if _is_link(path) or not stat.S_ISDIR(os.lstat(path).st_mode):
            # The mode would be set on what a link points at, outside the data directory.
            raise OSError(f"{path} is a symbolic link or not a directory")
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
