"""Is a process still alive? For the tests that prove a killed tree leaves nothing behind."""

from __future__ import annotations

import os
import time
from pathlib import Path


def running(pid: int) -> bool:
    """True while `pid` is a live process; a zombie awaiting its reaper counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    # The state letter follows the parenthesised command name, which may itself hold spaces.
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def gone_soon(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
