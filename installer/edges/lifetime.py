"""Children die with the engine, where the operating system allows it.

Linux: PR_SET_PDEATHSIG between fork and exec. Windows: a job object whose last handle the
engine holds. macOS has neither, so the install lock is passed to every child (edges/lock.py)
and a helm that outlives the engine still holds it. Nothing here raises.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

# ctypes is part of every build (build/tracebloc-installer.spec keeps it on every OS).

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` setting the parent-death signal (Linux), or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()

    def preexec() -> None:
        # Runs in the child between fork and exec: only async-signal-safe work, no imports.
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the engine died before the request took effect
            os._exit(1)

    return preexec


# --- Windows job objects ---------------------------------------------------------------------

_JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9
_JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000


class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", ctypes.c_uint64 * 6),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


def _kernel32() -> object | None:
    if sys.platform != "win32":
        return None
    try:
        return getattr(ctypes, "WinDLL")("kernel32", use_last_error=True)  # noqa: B009
    except (AttributeError, OSError):
        return None


def contain(process_handle: int | None) -> int | None:
    """Put a started Windows child in a new kill-on-close job; the job's handle, or None.

    The child's own children join the job as they start. Off Windows: None."""
    kernel32: object | None = _kernel32()
    if kernel32 is None or process_handle is None:
        return None
    try:
        api = kernel32
        create = getattr(api, "CreateJobObjectW")  # noqa: B009
        create.restype = ctypes.c_void_p
        create.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p]
        job = create(None, None)
        if not job:
            return None
        limits = _ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        setinfo = getattr(api, "SetInformationJobObject")  # noqa: B009
        setinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
        assign = getattr(api, "AssignProcessToJobObject")  # noqa: B009
        assign.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        if not (
            setinfo(
                job,
                _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
                ctypes.byref(limits),
                ctypes.sizeof(limits),
            )
            and assign(job, process_handle)
        ):
            release(job)
            return None
        return int(job)
    except (AttributeError, OSError, ValueError, TypeError):
        return None


def kill_job(job: int | None) -> None:
    """Terminate every process still in the job. Never raises."""
    kernel32 = _kernel32()
    if kernel32 is None or job is None:
        return
    try:
        terminate = getattr(kernel32, "TerminateJobObject")  # noqa: B009
        terminate.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
        terminate(job, 1)
    except (AttributeError, OSError, ValueError, TypeError):
        pass


def release(job: int | None) -> None:
    """Close the job's handle: whatever is still in it is killed. Never raises."""
    kernel32 = _kernel32()
    if kernel32 is None or job is None:
        return
    try:
        close = getattr(kernel32, "CloseHandle")  # noqa: B009
        close.argtypes = [ctypes.c_void_p]
        close(job)
    except (AttributeError, OSError, ValueError, TypeError):
        pass


# --- signals that stop the engine -----------------------------------------------------------


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stopped like Ctrl-C, but the exit code names the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = int(signum)


_stopped_by: list[int] = []  # the signals that asked this run to stop, first first


def stopped_by() -> int | None:
    """The signal that asked this run to stop, if one did (see note_interrupts)."""
    return _stopped_by[0] if _stopped_by else None


def note_interrupts() -> None:
    """Ctrl-C raises KeyboardInterrupt and is remembered, so an error it causes later is
    reported as the interruption. A SIGINT the parent ignores stays ignored."""
    import signal

    _stopped_by.clear()

    def interrupt(signum: int, frame: object) -> None:
        _stopped_by.append(int(signum))
        raise KeyboardInterrupt

    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, interrupt)
    except (ValueError, OSError):  # not the main thread, or not allowed here
        pass


def stop_cleanly_on_termination() -> None:
    """SIGTERM (a service manager, `kill`) and SIGHUP (the terminal closed) stop an install
    the way Ctrl-C does: helm is asked to stop, so no release is left pending. One the
    parent ignores (`nohup` ignores SIGHUP) stays ignored."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        _stopped_by.append(int(signum))
        raise Terminated(signum)

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            try:
                if signal.getsignal(number) != signal.SIG_IGN:
                    signal.signal(number, interrupt)
            except (ValueError, OSError):  # not the main thread, or not allowed here
                pass
