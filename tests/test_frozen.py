"""The frozen binary: what it contains, what it says, and what its children inherit.

The binary tests run only in the binary-level suite, which names the binary with
TB_INSTALLER_BIN (build/test_binary.py); elsewhere they skip with that reason. The
`prepare_children` tests run everywhere: they fake the platform, not our code.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import pkgutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import installer
from installer.edges import frozen
from tests.fakes.cluster import REPO, FakeCluster, node

BINARY = os.environ.get("TB_INSTALLER_BIN", "").strip()
needs_binary = pytest.mark.skipif(
    not BINARY, reason="TB_INSTALLER_BIN not set: the binary-level suite (build/test_binary.py)"
)


# --- the binary as a user runs it ----------------------------------------------------------


@needs_binary
def test_binary_reports_the_package_version(cluster: FakeCluster) -> None:
    result = cluster.run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"tracebloc-installer {installer.__version__} (commit ")
    # build/freeze.py stamped the commit it was built from, and its date.
    assert "commit unknown" not in result.stdout and "built unknown" not in result.stdout


@needs_binary
@pytest.mark.parametrize(
    ("caller", "expected"),
    [
        pytest.param(
            {"LD_LIBRARY_PATH": "/caller/value"},
            {"LD_LIBRARY_PATH": "/caller/value"},
            id="caller-sets-ld-library-path",
        ),
        pytest.param({}, {}, id="caller-has-no-ld-library-path"),
    ],
)
def test_children_see_the_callers_library_path(
    cluster: FakeCluster, caller: dict[str, str], expected: dict[str, str]
) -> None:
    # The one-file bootloader points LD_LIBRARY_PATH at its unpacked libraries; kubectl and
    # helm must get the caller's value (or none), never the bundle's.
    cluster.nodes(node("laptop", "8", "16Gi")).release_absent()
    result = cluster.run("probe", "--json", **caller)
    assert result.returncode == 0, result.stderr
    log = cluster.call_log()
    # The version queries that choose the tools, then the two reads: every child checked.
    assert sorted(e["tool"] for e in log if e["argv"][:1] != ["version"]) == ["helm", "kubectl"]
    assert {e["tool"] for e in log if e["argv"][:1] == ["version"]} >= {"helm", "kubectl"}
    for entry in log:
        seen = {k: v for k, v in entry["env"].items() if k == "LD_LIBRARY_PATH"}
        assert seen == expected, f"{entry['tool']} saw {seen}"


@needs_binary
def test_binary_bundles_what_the_engine_imports_and_nothing_it_never_does() -> None:
    readers = pytest.importorskip("PyInstaller.archive.readers", reason="PyInstaller not installed")
    contents = set(readers.pkg_archive_contents(str(Path(BINARY).resolve())))
    ours = {
        f"installer.{module.name}"
        for module in pkgutil.iter_modules([str(Path(installer.__file__).parent)])
    }
    # Every module of ours (some are imported only inside functions), requests with
    # certifi's CA file, and the OS trust store.
    wanted = ours | {
        "requests",
        "urllib3",
        "certifi",
        "certifi/cacert.pem",
        "truststore",
        "psutil",
        "yaml",
    }
    assert wanted - contents == set()
    assert {"tkinter", "unittest", "pydoc", "doctest", "pytest"} & contents == set()
    # requests' encoding detection (the backend check reads a status, never a body) and
    # stdlib modules imported only on paths the engine never takes are left out ...
    left_out = {"charset_normalizer", "chardet", "pickle", "email.policy", "netrc"}
    assert left_out & contents == set()
    # ... and the bundled interpreter gets no start-up options: a `W ...` one imports
    # `warnings` before the engine runs, where a Ctrl-C was printed and swallowed.
    options = readers.CArchiveReader(str(Path(BINARY).resolve())).options
    assert [o for o in options if o[:2] in ("W ", "X ")] == [], options


@needs_binary
@pytest.mark.skipif(sys.platform != "win32", reason="a version resource exists only on Windows")
def test_windows_binary_carries_a_version_resource() -> None:
    versioninfo = pytest.importorskip(
        "PyInstaller.utils.win32.versioninfo", reason="PyInstaller not installed"
    )
    text = str(versioninfo.read_version_info_from_executable(str(Path(BINARY).resolve())))
    for key, value in (
        ("ProductName", "tracebloc-installer"),
        ("FileDescription", "tracebloc client installer"),
        ("ProductVersion", installer.__version__),
    ):
        assert f"StringStruct('{key}', '{value}')" in text


# --- prepare_children: the Windows DLL directory --------------------------------------------


class _Kernel32:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[Any] = []
        self.error = error

    def SetDllDirectoryW(self, path: Any) -> int:  # noqa: N802 - the Win32 name
        self.calls.append(path)
        if self.error is not None:
            raise self.error
        return 1


@pytest.fixture
def kernel32(monkeypatch: pytest.MonkeyPatch) -> _Kernel32:
    """A stand-in for `ctypes.windll.kernel32` that records its calls, on any OS."""
    fake = _Kernel32()
    monkeypatch.setattr(ctypes, "windll", type("WinDLL", (), {"kernel32": fake})(), raising=False)
    return fake


@pytest.mark.parametrize(
    ("platform", "is_frozen", "reset"),
    [
        pytest.param("win32", True, True, id="frozen-on-windows"),
        pytest.param("win32", False, False, id="from-source-on-windows"),
        pytest.param("linux", True, False, id="frozen-on-linux"),
        pytest.param("darwin", True, False, id="frozen-on-macos"),
    ],
)
def test_prepare_children_resets_the_dll_directory_only_in_a_frozen_windows_binary(
    mocker: Any, kernel32: _Kernel32, platform: str, is_frozen: bool, reset: bool
) -> None:
    mocker.patch.object(sys, "platform", platform)
    mocker.patch.object(sys, "frozen", is_frozen, create=True)
    assert frozen.prepare_children() is reset
    assert kernel32.calls == ([None] if reset else [])


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(OSError("access denied"), id="os-error"),
        pytest.param(AttributeError("no SetDllDirectoryW"), id="old-windows"),
    ],
)
def test_prepare_children_never_raises(mocker: Any, kernel32: _Kernel32, error: Exception) -> None:
    mocker.patch.object(sys, "platform", "win32")
    mocker.patch.object(sys, "frozen", True, create=True)
    kernel32.error = error
    assert frozen.prepare_children() is False
    assert kernel32.calls == [None]


# --- build tooling: the platform's release name, SHA256SUMS, the version resource --------------------------


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"tb_build_{name}", REPO / "build" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def freeze() -> ModuleType:
    return _load("freeze")


@pytest.fixture(scope="module")
def sums() -> ModuleType:
    return _load("sums")


@pytest.mark.parametrize(
    ("machine", "arch"),
    [
        pytest.param("x86_64", "x86_64", id="linux-intel"),
        pytest.param("AMD64", "x86_64", id="windows-intel"),
        pytest.param("aarch64", "arm64", id="linux-arm"),
        pytest.param("arm64", "arm64", id="apple-silicon"),
    ],
)
def test_this_platform_names_the_arch_as_the_release_does(
    mocker: Any, freeze: ModuleType, machine: str, arch: str
) -> None:
    mocker.patch("platform.machine", return_value=machine)
    assert freeze.this_platform()[1] == arch


def test_sha256sums_record_adds_and_replaces_one_entry_keeping_the_others(
    sums: ModuleType, tmp_path: Path
) -> None:
    other = "ab" * 32
    (tmp_path / "SHA256SUMS").write_text(f"{other}  tracebloc-installer-windows-x86_64.exe\n")
    binary = tmp_path / "tracebloc-installer-linux-x86_64"
    for content in (b"old build", b"new build"):
        binary.write_bytes(content)
        sums.record(binary)
    new = hashlib.sha256(b"new build").hexdigest()
    assert (tmp_path / "SHA256SUMS").read_bytes() == (
        f"{new}  tracebloc-installer-linux-x86_64\n"
        f"{other}  tracebloc-installer-windows-x86_64.exe\n"
    ).encode()
    assert sums.check(tmp_path / "SHA256SUMS") == [
        "tracebloc-installer-windows-x86_64.exe: missing"
    ]


def test_sha256sums_merge_of_per_os_files_is_sorted_and_idempotent(
    sums: ModuleType, tmp_path: Path
) -> None:
    linux, mac = "1" * 64, "2" * 64
    first = tmp_path / "linux.sums"
    first.write_text(f"{linux}  tracebloc-installer-linux-x86_64\n")
    second = tmp_path / "mac.sums"
    second.write_text(f"{mac} *tracebloc-installer-darwin-arm64\r\n\n")  # binary-mode marker, CRLF
    out = tmp_path / "SHA256SUMS"
    assert sums.main(["merge", "-o", str(out), str(first), str(second), str(first)]) == 0
    assert out.read_text() == (
        f"{mac}  tracebloc-installer-darwin-arm64\n{linux}  tracebloc-installer-linux-x86_64\n"
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("{a}  same-name\n{b}  same-name\n", id="two-digests-for-one-name"),
        pytest.param("{a} same-name-one-space\n", id="one-space"),
        pytest.param("not a checksum line\n", id="garbage"),
    ],
)
def test_sha256sums_refuses_ambiguous_or_malformed_input(
    sums: ModuleType, tmp_path: Path, text: str
) -> None:
    bad = tmp_path / "bad.sums"
    bad.write_text(text.format(a="a" * 64, b="b" * 64))
    assert sums.main(["merge", "-o", str(tmp_path / "out"), str(bad)]) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("version", "numbers"),
    [
        pytest.param("0.1.0", (0, 1, 0, 0), id="release"),
        pytest.param("1.2.3rc1", (1, 2, 3, 0), id="release-candidate"),
        pytest.param("2.0", (2, 0, 0, 0), id="two-part"),
        pytest.param("1.2.3.4.5+local.7", (1, 2, 3, 4), id="long-with-local-part"),
    ],
)
def test_windows_version_resource_from_the_package_version(
    freeze: ModuleType, version: str, numbers: tuple[int, ...]
) -> None:
    # PyInstaller eval()s this text with its version-info classes; record what they get.
    seen: dict[str, Any] = {}

    def record(kind: str) -> Any:
        def make(*args: Any, **kwargs: Any) -> str:
            if kind == "StringStruct":
                seen[args[0]] = args[1]
            if kind == "FixedFileInfo":
                seen["filevers"], seen["prodvers"] = kwargs["filevers"], kwargs["prodvers"]
            return kind

        return make

    names = (
        "VSVersionInfo",
        "FixedFileInfo",
        "StringFileInfo",
        "StringTable",
        "StringStruct",
        "VarFileInfo",
        "VarStruct",
    )
    text = freeze.version_info_text(version, "x.exe")
    assert eval(text, {n: record(n) for n in names}) == "VSVersionInfo"  # noqa: S307
    assert seen["filevers"] == seen["prodvers"] == numbers
    assert seen["ProductName"] == "tracebloc-installer"
    assert seen["FileDescription"] == "tracebloc client installer"
    assert seen["ProductVersion"] == seen["FileVersion"] == version
    assert seen["OriginalFilename"] == "x.exe"


def test_the_build_stamp_is_the_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("freeze", REPO / "build" / "freeze.py")
    assert spec is not None and spec.loader is not None
    freeze = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(freeze)
    given = {"TRACEBLOC_BUILD_COMMIT": "abc123", "SOURCE_DATE_EPOCH": "1764374400"}
    assert freeze.build_stamp(given) == ("abc123", "2025-11-29")
    assert freeze.build_stamp({**given, "TRACEBLOC_BUILD_DATE": "2026-01-02"})[1] == "2026-01-02"
