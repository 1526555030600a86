"""The local machine: OS, architecture, CPUs, memory, WSL. The only psutil importer."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping

import psutil

from installer.model import MachineFacts, os_name

_ARCH = {
    "x86_64": "x86_64", "amd64": "x86_64", "x64": "x86_64",
    "aarch64": "arm64", "arm64": "arm64", "armv8": "arm64", "armv8l": "arm64",
}  # fmt: skip


def arch_name(machine: str) -> str:
    """Normalise `platform.machine()`: the values differ across OSes for the same CPU."""
    return _ARCH.get(machine.strip().lower(), machine.strip().lower() or "unknown")


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
