"""installer.edges.toolpath: which file a tool name resolves to, an explicit variable first,
then PATH, on POSIX and (by its rules, on any OS) Windows."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from installer.decide.errors import ToolNotFound
from installer.decide.tooling import Tool
from installer.edges import toolpath
from tests.fakes.executables import make_executable

# The find_tool tests that pass os_name="linux" build a ':'-separated PATH; on Windows every
# directory in it has a drive letter's ':' (and no file has an execute bit to skip over).
POSIX_PATH_ONLY = pytest.mark.skipif(
    sys.platform == "win32", reason="a ':'-separated PATH cannot hold Windows paths"
)


def executable(path: Path, mode: int = 0o755) -> Path:
    """A file find_tool's POSIX branch accepts (never run): exactly `path`, with `mode`.

    Windows-format programs are not wanted here: on a Windows host this is the extension-less
    file that the Windows branch must pass over.
    """
    return make_executable(path, "pass\n", windows=False, mode=mode)


def test_find_tool_explicit_path_wins_over_path(tmp_path: Path) -> None:
    on_path = executable(tmp_path / "bin" / "helm")
    explicit = executable(tmp_path / "opt" / "helm-v4")
    env = {"PATH": str(on_path.parent), "TRACEBLOC_HELM": str(explicit)}

    assert toolpath.find_tool("helm", env, "linux") == Tool("helm", str(explicit))


def test_find_tool_explicit_path_that_is_missing_is_not_found(tmp_path: Path) -> None:
    executable(tmp_path / "bin" / "helm")
    missing = str(tmp_path / "nowhere" / "helm")
    env = {"PATH": str(tmp_path / "bin"), "TRACEBLOC_HELM": missing}

    with pytest.raises(ToolNotFound) as caught:
        toolpath.find_tool("helm", env, "linux")
    assert "TRACEBLOC_HELM" in caught.value.remedy and missing in caught.value.remedy


@POSIX_PATH_ONLY
def test_find_tool_first_on_path_wins(tmp_path: Path) -> None:
    first = executable(tmp_path / "a" / "kubectl")
    executable(tmp_path / "b" / "kubectl")
    env = {
        "PATH": os.pathsep.join([str(tmp_path / "empty"), str(first.parent), str(tmp_path / "b")])
    }

    assert toolpath.find_tool("kubectl", env, "linux").path == str(first)


@POSIX_PATH_ONLY
def test_find_tool_skips_a_non_executable_file(tmp_path: Path) -> None:
    executable(tmp_path / "a" / "kubectl", mode=0o644)
    second = executable(tmp_path / "b" / "kubectl")
    env = {"PATH": f"{tmp_path / 'a'}:{tmp_path / 'b'}"}

    assert toolpath.find_tool("kubectl", env, "linux").path == str(second)


@POSIX_PATH_ONLY
def test_find_tool_skips_a_directory_of_that_name(tmp_path: Path) -> None:
    (tmp_path / "a" / "kubectl").mkdir(parents=True)
    second = executable(tmp_path / "b" / "kubectl")
    env = {"PATH": f"{tmp_path / 'a'}:{tmp_path / 'b'}"}

    assert toolpath.find_tool("kubectl", env, "linux").path == str(second)


def test_find_tool_not_on_path(tmp_path: Path) -> None:
    with pytest.raises(ToolNotFound) as caught:
        toolpath.find_tool("kubectl", {"PATH": str(tmp_path)}, "linux")
    assert caught.value.message == "kubectl was not found on PATH"
    assert "TRACEBLOC_KUBECTL" in caught.value.remedy


def test_find_tool_without_path_at_all() -> None:
    with pytest.raises(ToolNotFound):
        toolpath.find_tool("helm", {}, "linux")


def test_find_tool_windows_finds_exe_on_a_semicolon_path(tmp_path: Path) -> None:
    # A file without the .exe suffix is not what Windows would run; the .exe one is.
    executable(tmp_path / "Program Files" / "first" / "helm")
    exe = tmp_path / "Program Files" / "helm" / "helm.exe"
    exe.parent.mkdir(parents=True)
    exe.write_bytes(b"MZ")  # no execute bit: Windows has none to check
    env = {"PATH": ";".join([str(tmp_path / "Program Files" / "first"), f'"{exe.parent}"'])}

    assert toolpath.find_tool("helm", env, "windows") == Tool("helm", str(exe))


def test_find_tool_windows_ignores_colon_separation(tmp_path: Path) -> None:
    exe = tmp_path / "tools" / "kubectl.exe"
    exe.parent.mkdir()
    exe.write_bytes(b"MZ")
    env = {"PATH": f"{tmp_path / 'nothing'}:{exe.parent}"}  # a POSIX PATH means nothing there

    with pytest.raises(ToolNotFound):
        toolpath.find_tool("kubectl", env, "windows")


def test_find_tool_windows_explicit_path_needs_no_execute_bit(tmp_path: Path) -> None:
    exe = tmp_path / "helm.exe"
    exe.write_bytes(b"MZ")

    found = toolpath.find_tool("helm", {"TRACEBLOC_HELM": str(exe), "PATH": ""}, "windows")

    assert found.path == str(exe)


def test_find_tool_hyphenated_name_uses_underscore_variable(tmp_path: Path) -> None:
    smi = executable(tmp_path / "cuda" / "nvidia-smi")

    found = toolpath.find_tool(
        "nvidia-smi", {"TRACEBLOC_NVIDIA_SMI": str(smi), "PATH": ""}, "linux"
    )

    assert found == Tool("nvidia-smi", str(smi))


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"PATH": ""}, id="not-on-path"),
        pytest.param(
            {"PATH": "", "TRACEBLOC_NVIDIA_SMI": "/nonexistent/nvidia-smi"},
            id="explicit-path-missing",
        ),
    ],
)
def test_find_tool_hyphenated_name_messages_name_the_real_variable(env: dict[str, str]) -> None:
    with pytest.raises(ToolNotFound) as caught:
        toolpath.find_tool("nvidia-smi", env, "linux")
    assert "TRACEBLOC_NVIDIA_SMI" in caught.value.remedy
