"""Tiny executables written by tests: a Python program the OS can start by path.

On POSIX that is a `#!{sys.executable}` script with the execute bit. Windows cannot start a
script (CreateProcess runs only PE files, and `find_tool` looks for `<name>.exe` anyway), so
there the program is wrapped the way pip wraps console scripts: distlib's console launcher
(`t64.exe`), then a `#!<python>` line, then a zip archive holding the program as
`__main__.py`. The launcher finds the line just before the archive and runs
`<python> <the .exe itself> <args…>`; Python runs the archive's `__main__.py`. These are the
bytes `distlib.scripts.ScriptMaker._write_script` writes on Windows, built here directly so
the same code runs, and is tested, on every OS (ScriptMaker only adds launchers when
`os.name == "nt"`).
"""

from __future__ import annotations

import io
import os
import sys
import sysconfig
import zipfile
from importlib import resources
from pathlib import Path

import pytest

# distlib's stubs by Python platform, as distlib's ScriptMaker picks them.
_LAUNCHERS = {"win32": "t32.exe", "win-arm64": "t64-arm.exe"}
_DEFAULT_LAUNCHER = "t64.exe"

# For tests that start a program with a deliberately minimal environment: CPython before
# 3.11 seeds its hashes at start-up with CryptGenRandom, which fails on Windows without
# SYSTEMROOT, so the program would die before running a line.
CHILD_WITHOUT_SYSTEMROOT = pytest.mark.skipif(
    sys.platform == "win32" and sys.version_info < (3, 11),
    reason="Python < 3.11 on Windows cannot start without SYSTEMROOT in its environment",
)


def on_windows() -> bool:
    return os.name == "nt"


def executable_path(path: Path, *, windows: bool | None = None) -> Path:
    """Where `make_executable(path, …)` puts the program: `<path>.exe` on Windows."""
    windows = on_windows() if windows is None else windows
    if windows and path.suffix.lower() != ".exe":
        return path.with_name(path.name + ".exe")
    return path


def make_executable(
    path: Path,
    python_source: str,
    *,
    windows: bool | None = None,
    mode: int = 0o755,
    stdlib_only: bool = False,
) -> Path:
    """Write `python_source` as a program at `path` (plus `.exe` on Windows); return its path.

    `windows` picks the format (default: this host's); `mode` applies to the POSIX script.
    `stdlib_only`: a program that needs nothing but the standard library starts as
    `python -IS` on POSIX (no site-packages, no PYTHON* variables): a fake called hundreds
    of times per test file starts in about half the time.
    The Windows format puts a few lines before the source, so it cannot start with a
    `from __future__` import.
    """
    windows = on_windows() if windows is None else windows
    target = executable_path(path, windows=windows)
    target.parent.mkdir(parents=True, exist_ok=True)
    if windows:
        target.write_bytes(windows_launcher(python_source))
    else:
        flags = " -IS" if stdlib_only else ""
        target.write_text(f"#!{sys.executable}{flags}\n{python_source}", encoding="utf-8")
        target.chmod(mode)
    return target


def launcher_stub(platform: str | None = None) -> bytes:
    """distlib's console launcher for `platform` (a sysconfig platform such as win-amd64)."""
    platform = sysconfig.get_platform() if platform is None else platform
    name = _LAUNCHERS.get(platform, _DEFAULT_LAUNCHER)
    return (resources.files("distlib") / name).read_bytes()


def launcher_shebang() -> bytes:
    """The interpreter line the launcher reads: this Python, quoted if its path has spaces."""
    from distlib.scripts import enquote_executable  # the quoting pip's scripts get

    return b"#!" + enquote_executable(sys.executable).encode("utf-8") + b"\n"


# Text written by the program ends lines with "\n" on Windows too, as the Go tools the fakes
# stand in for (kubectl, helm) do, and as the same program does on POSIX.
_LF_OUTPUT = (
    "import sys as _sys\n"
    "for _stream in (_sys.stdout, _sys.stderr):\n"
    "    if _stream is not None:\n"
    "        _stream.reconfigure(newline='\\n')\n"
)


def windows_launcher(python_source: str, platform: str | None = None) -> bytes:
    """distlib's launcher + `#!<python>` + a zip archive whose `__main__.py` is the program."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("__main__.py", (_LF_OUTPUT + python_source).encode("utf-8"))
    return launcher_stub(platform) + launcher_shebang() + archive.getvalue()
