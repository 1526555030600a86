"""What a PyInstaller binary changes about its own process, undone before it starts others.

On Windows every child inherits SetDllDirectoryW, so it is reset once before the first child
(LD_LIBRARY_PATH on Linux is restored per child by childio.child_env).
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
