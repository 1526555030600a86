"""The console around us: a Windows double-click gets a console of its own, which Windows
closes the moment the process ends. Such a run waits for Enter so its answer can be read."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def owns_console(os_: str, frozen: bool, process_list: Callable[[], int] | None = None) -> bool:
    """True when no shell shares our console (Explorer's fresh window): at most two processes
    on it, the one-file binary's bootloader and Python."""
    if os_ != "windows":
        return False
    try:
        count = (process_list or _console_process_count)()
    except (OSError, AttributeError, ValueError):
        return False
    return 0 < count <= (2 if frozen else 1)


def _console_process_count() -> int:
    import ctypes

    buffer = (ctypes.c_uint32 * 4)()
    kernel32 = getattr(ctypes, "windll").kernel32  # noqa: B009 - absent off Windows
    return int(kernel32.GetConsoleProcessList(buffer, 4))


def pause(prompt: str = "Press Enter to close this window...") -> None:
    try:
        sys.stderr.write("\n" + prompt)
        sys.stderr.flush()
        input()
    except (EOFError, OSError, KeyboardInterrupt):
        pass


def is_terminal(stream: Any) -> bool:
    """Is `stream` an interactive terminal? False for None, a pipe, or a closed stream."""
    try:
        return stream is not None and bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False
