"""tests/fakes/executables.py: the programs the other tests start, in both formats, on any OS.

The Windows format is built and checked here too (on Linux and macOS), the way the launcher
reads it: distlib's stub, then the `#!<python>` line that ends where the zip archive
starts, then an archive whose `__main__.py` Python runs when given the .exe as a script.
"""

from __future__ import annotations

import json
import stat
import struct
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from tests.fakes.executables import (
    executable_path,
    launcher_shebang,
    launcher_stub,
    make_executable,
)

ECHO = "import json, sys\nprint(json.dumps(sys.argv[1:]))\nsys.exit(len(sys.argv) - 1)\n"
ARGS = ["get", "nodes", "two words", 'say "hi"', ""]


def archive_start(data: bytes) -> int:
    """Where the zip archive starts, found as the launcher finds it: from the end record."""
    end = data.rindex(b"PK\x05\x06")
    directory_size, directory_offset = struct.unpack("<II", data[end + 12 : end + 20])
    return end - directory_size - directory_offset


def test_windows_format_is_stub_then_interpreter_line_then_the_program(tmp_path: Path) -> None:
    made = make_executable(tmp_path / "kubectl", ECHO, windows=True)

    assert made == tmp_path / "kubectl.exe"
    assert not (tmp_path / "kubectl").exists()
    data = made.read_bytes()
    assert data.startswith(b"MZ")  # a PE file: what CreateProcess can start
    start = archive_start(data)
    assert data[:start] == launcher_stub() + launcher_shebang()
    quoted = f'"{sys.executable}"' if " " in sys.executable else sys.executable
    assert launcher_shebang() == f"#!{quoted}\n".encode()
    with zipfile.ZipFile(made) as bundle:
        assert bundle.namelist() == ["__main__.py"]
        assert bundle.read("__main__.py").decode("utf-8").endswith(ECHO)


def test_windows_format_runs_as_the_launcher_runs_it(tmp_path: Path) -> None:
    # The launcher's command line is `<python> <the .exe> <args…>`: the same, minus the stub.
    made = make_executable(tmp_path / "helm", ECHO, windows=True)

    result = subprocess.run(
        [sys.executable, str(made), *ARGS], capture_output=True, check=False, timeout=60
    )

    assert result.returncode == len(ARGS), result.stderr
    assert result.stdout == (json.dumps(ARGS) + "\n").encode()  # "\n", not "\r\n", everywhere


def test_windows_name_already_ending_in_exe_is_kept(tmp_path: Path) -> None:
    made = make_executable(tmp_path / "icacls.exe", "pass\n", windows=True)

    assert made == tmp_path / "icacls.exe"
    assert executable_path(tmp_path / "ICACLS.EXE", windows=True) == tmp_path / "ICACLS.EXE"
    assert executable_path(tmp_path / "kubectl-1.30", windows=True) == tmp_path / "kubectl-1.30.exe"


@pytest.mark.parametrize(
    ("platform", "stub"),
    [
        pytest.param("win-amd64", "t64.exe", id="x64"),
        pytest.param("win-arm64", "t64-arm.exe", id="arm64"),
        pytest.param("win32", "t32.exe", id="x86"),
    ],
)
def test_launcher_matches_the_python_platform(platform: str, stub: str) -> None:
    expected = (resources.files("distlib") / stub).read_bytes()

    assert launcher_stub(platform) == expected
    assert expected.startswith(b"MZ")


@pytest.mark.skipif(sys.platform == "win32", reason="Windows cannot start a #! script")
def test_posix_format_is_an_executable_script_started_by_path(tmp_path: Path) -> None:
    made = make_executable(tmp_path / "nvidia-smi", ECHO, windows=False)

    assert made == tmp_path / "nvidia-smi"
    assert made.read_text(encoding="utf-8") == f"#!{sys.executable}\n{ECHO}"
    assert stat.S_IMODE(made.stat().st_mode) == 0o755
    result = subprocess.run([str(made), *ARGS], capture_output=True, check=False, timeout=60)
    assert result.returncode == len(ARGS), result.stderr
    assert json.loads(result.stdout) == ARGS


def test_host_format_is_the_one_find_tool_looks_for(tmp_path: Path) -> None:
    made = make_executable(tmp_path / "bin" / "helm", "pass\n")

    expected = "helm.exe" if sys.platform == "win32" else "helm"
    assert made == tmp_path / "bin" / expected
    assert made == executable_path(tmp_path / "bin" / "helm")
