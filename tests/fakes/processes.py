"""Is a process still alive? For the tests that prove a killed tree leaves nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# Windows: OpenProcess access rights, the result of a zero-timeout wait on a live process,
# and the error OpenProcess gives for a pid that names no process.
_SYNCHRONIZE = 0x00100000
_QUERY_LIMITED_INFORMATION = 0x1000
_WAIT_TIMEOUT = 0x102
_ERROR_INVALID_PARAMETER = 87


def running(pid: int) -> bool:
    """True while `pid` is a live process; a zombie awaiting its reaper counts as gone."""
    if sys.platform == "win32":
        return _running_windows(pid)
    # Signal 0 checks existence only. (On Windows os.kill would terminate the process.)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _state(pid) not in ("Z", "X", "")


def _state(pid: int) -> str:
    """The one-letter process state (R, S, Z, …); "" once the process has gone; "?" unknown."""
    if Path("/proc/self/stat").exists():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "?"
        # The state letter follows the parenthesised command name, which may itself hold spaces.
        return stat.rpartition(")")[2].split()[0]
    # No procfs (macOS, the BSDs): ps prints the state, or nothing for a pid that has gone.
    try:
        listed = subprocess.run(
            ["ps", "-o", "stat=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return listed.stdout.strip()[:1]


def _running_windows(pid: int) -> bool:
    # A handle's wait is satisfied once the process has exited, even while some other handle
    # keeps its record alive (Windows has no zombies, but exited-yet-referenced is the same).
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.OpenProcess.argtypes = [ctypes.c_uint32, ctypes.c_int, ctypes.c_uint32]
    kernel32.OpenProcess.restype = ctypes.c_void_p
    kernel32.WaitForSingleObject.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    kernel32.CloseHandle.argtypes = [ctypes.c_void_p]
    handle = kernel32.OpenProcess(_SYNCHRONIZE | _QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        # No such process; any other refusal (access denied) means it exists.
        return ctypes.get_last_error() != _ERROR_INVALID_PARAMETER  # type: ignore[attr-defined]
    try:
        return bool(kernel32.WaitForSingleObject(handle, 0) == _WAIT_TIMEOUT)
    finally:
        kernel32.CloseHandle(handle)


def gone_soon(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def kill_if_running(pid: int) -> None:
    """Clean-up after a failed test: stop a process the code under test failed to stop."""
    if running(pid):
        try:
            # SIGKILL does not exist on Windows, where os.kill is TerminateProcess anyway.
            os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        except OSError:
            pass
