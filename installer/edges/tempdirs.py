"""The engine's private scratch directories (a kubeconfig copy, dry-run values, staged root
files): owner-only, named after the process that made them, so one a kill -9 left behind
(it may hold a cluster's client key or a password) is removed by the next run, and only
when it is the engine's, this user's, a real directory, and its maker is gone."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile

from installer.edges.machine import process_exists

PREFIX = "tracebloc-"
KINDS = ("peek", "plan", "runtime")
_NAME = re.compile(rf"^{PREFIX}({'|'.join(KINDS)})-(\d+)-[A-Za-z0-9_]+$")


def make(kind: str) -> str:
    """A new 0700 directory (mkdtemp's mode) for `kind`, one of KINDS."""
    assert kind in KINDS, kind
    return tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-")


def sweep(where: str | None = None) -> list[str]:
    """Remove the scratch directories of engine processes that no longer run; returns them.
    Anything unreadable, another user's, a link, or of a live process is left alone."""
    base = where or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    uid = getattr(os, "getuid", lambda: None)()
    for name in names:
        match = _NAME.match(name)
        if match is None or int(match.group(2)) == os.getpid():
            continue
        path = os.path.join(base, name)
        try:
            seen = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(seen.st_mode) or (uid is not None and seen.st_uid != uid):
            continue
        if process_exists(int(match.group(2))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            removed.append(path)
    return removed
