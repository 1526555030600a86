"""What a PyInstaller binary changes about its own process, undone before it starts others.

A one-file binary unpacks its libraries into a temporary directory and points the loader
there: on Linux through LD_LIBRARY_PATH (which proc.child_env restores for each child) and on
Windows through SetDllDirectoryW, which every child process inherits. A system kubectl or
helm must load its own DLLs, not our bundled copies, so the DLL directory is reset once,
before the first child starts.
"""

from __future__ import annotations

import sys


def is_frozen() -> bool:
    """True inside a PyInstaller binary."""
    return bool(getattr(sys, "frozen", False))


def prepare_children() -> bool:
    """Reset the Windows DLL search path a frozen binary changed; True when reset. Never raises."""
    if sys.platform != "win32" or not is_frozen():
        return False
    try:
        import ctypes

        kernel32 = getattr(ctypes, "windll").kernel32  # noqa: B009 - absent off Windows
        return bool(kernel32.SetDllDirectoryW(None))
    except (AttributeError, OSError, ValueError):
        return False
