"""The local machine: OS, architecture, CPUs, memory, WSL, free disk. The only psutil importer.

psutil is imported on first use, not at import time: `tracebloc-installer --version` (and
every start of the frozen binary) should not pay for loading a native extension it never
calls.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from installer.decide.arch import engine_arch
from installer.decide.model import MachineFacts, os_name
from installer.decide.printable import shown


def _psutil() -> ModuleType:
    # Looked up in the module globals first, so `mocker.patch.object(machine, "psutil")`
    # replaces what every function here uses.
    cached: ModuleType | None = globals().get("psutil")
    if cached is not None:
        return cached
    import psutil

    globals()["psutil"] = psutil
    return psutil


def __getattr__(name: str) -> Any:
    """`machine.psutil` loads psutil on first access (PEP 562)."""
    if name == "psutil":
        return _psutil()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def arch_name(machine: str) -> str:
    """Normalise `platform.machine()`: the values differ across OSes for the same CPU."""
    return engine_arch(machine)


def is_wsl(os_: str, env: Mapping[str, str], osrelease: str | None) -> bool:
    if os_ != "linux":
        return False
    if env.get("WSL_DISTRO_NAME") or env.get("WSL_INTEROP"):
        return True
    return osrelease is not None and "microsoft" in osrelease.lower()


def _read_osrelease(path: str = "/proc/sys/kernel/osrelease") -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def read_machine(env: Mapping[str, str]) -> MachineFacts:
    psutil = _psutil()
    os_ = os_name(sys.platform)
    memory = psutil.virtual_memory()
    return MachineFacts(
        os=os_,
        arch=arch_name(platform.machine()),
        cpu_count=psutil.cpu_count(logical=True) or os.cpu_count() or 1,
        memory_total_bytes=int(memory.total),
        memory_available_bytes=int(memory.available),
        wsl=is_wsl(os_, env, _read_osrelease() if os_ == "linux" else None),
    )


def disk_free(path: str) -> int | None:
    """Free bytes (unprivileged) on the filesystem of `path`, or None when unreadable; a path
    not made yet is measured at its nearest existing ancestor."""
    directory = _nearest_existing_dir(path)
    if directory is None:
        return None
    try:
        return int(_psutil().disk_usage(directory).free)
    except (OSError, ValueError):
        return None


def same_filesystem(a: str, b: str) -> bool | None:
    """Whether `a` and `b` (or their nearest existing ancestors) are on one filesystem;
    None when either cannot be read."""
    first, second = _nearest_existing_dir(a), _nearest_existing_dir(b)
    if first is None or second is None:
        return None
    try:
        return os.stat(first).st_dev == os.stat(second).st_dev
    except OSError:
        return None


def _nearest_existing_dir(path: str) -> str | None:
    if not path.strip() or "\0" in path:  # no path, or one no filesystem can hold
        return None
    current = os.path.abspath(path)
    while not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:  # the root (or drive) itself is not there
            return None
        current = parent
    return current


def filesystem_type(path: str) -> str | None:
    """The type of the filesystem holding `path` (its nearest existing directory), from the
    mount table; "network" for a Windows network drive or UNC path; None when unknown."""
    if path.startswith(("\\\\", "//")) and os_name(sys.platform) == "windows":
        return "network"
    directory = _nearest_existing_dir(path)
    if directory is None:
        return None
    try:
        partitions = _psutil().disk_partitions(all=True)
    except (OSError, RuntimeError):
        return None
    real = os.path.normcase(os.path.realpath(directory))
    best: Any = None
    for part in partitions:
        mount = os.path.normcase(part.mountpoint)
        inside = (
            real == mount or real.startswith(mount.rstrip("\\/") + os.sep) or mount in ("/", "\\")
        )
        if inside and (best is None or len(mount) > len(os.path.normcase(best.mountpoint))):
            best = part
    if best is None:
        return None
    if "remote" in str(getattr(best, "opts", "")).split(","):
        return "network"
    return str(best.fstype) or None


def process_exists(pid: int) -> bool:
    """True while a process with this pid exists on this machine (any user's)."""
    try:
        return bool(_psutil().pid_exists(pid))
    except (OSError, ValueError, OverflowError):
        return True  # unknown: never claim a lock's holder has gone


def process_identity(pid: int) -> tuple[float, str] | None:
    """When the process started (seconds since the epoch) and its command line (cut to 300
    characters), or None when it is gone or cannot be looked at."""
    psutil = _psutil()
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            if process.status() == psutil.STATUS_ZOMBIE:
                return None  # ended, only not yet reaped
            started = float(process.create_time())
            try:
                command = " ".join(process.cmdline()) or process.name()
            except (psutil.AccessDenied, psutil.ZombieProcess):
                command = process.name()
    except (psutil.Error, OSError, ValueError, OverflowError):
        return None
    return started, shown(command, lines=False)[:300]


def processes_holding(path: str) -> list[tuple[int, str]]:
    """The processes (of those we may look at) that have `path` open: who holds a lock whose
    holder did not say, or has ended. Slow on a busy machine: for refusals only."""
    psutil = _psutil()
    wanted = os.path.realpath(path)
    found: list[tuple[int, str]] = []
    for process in psutil.process_iter():
        try:
            if any(os.path.realpath(f.path) == wanted for f in process.open_files()):
                command = " ".join(process.cmdline()) or process.name()
                found.append((process.pid, shown(command, lines=False)[:300]))
        except (psutil.Error, OSError, ValueError):
            continue
    return found
