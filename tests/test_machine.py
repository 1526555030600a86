"""The local machine facts, with the platform and psutil mocked for each OS."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pytest_mock import MockerFixture

from installer.decide.model import MachineFacts
from installer.edges import machine
from installer.edges.machine import arch_name, is_wsl, read_machine

GiB = 2**30
WSL2_KERNEL = "5.15.153.1-microsoft-standard-WSL2\n"
WSL1_KERNEL = "4.4.0-19041-Microsoft\n"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("x86_64", "x86_64", id="linux-x86_64"),
        pytest.param("AMD64", "x86_64", id="windows-AMD64"),
        pytest.param("amd64", "x86_64", id="bsd-amd64"),
        pytest.param("aarch64", "arm64", id="linux-aarch64"),
        pytest.param("arm64", "arm64", id="darwin-arm64"),
        pytest.param("ARM64", "arm64", id="windows-ARM64"),
        pytest.param(" x86_64\n", "x86_64", id="stray-whitespace"),
        pytest.param("riscv64", "riscv64", id="other-arch-passed-through"),
        pytest.param("", "unknown", id="empty"),
    ],
)
def test_arch_name(raw: str, expected: str) -> None:
    assert arch_name(raw) == expected


@pytest.mark.parametrize(
    ("os_", "env", "osrelease", "expected"),
    [
        pytest.param("linux", {"WSL_DISTRO_NAME": "Ubuntu"}, None, True, id="wsl-distro-env"),
        pytest.param(
            "linux", {"WSL_INTEROP": "/run/WSL/1_interop"}, None, True, id="wsl-interop-env"
        ),
        pytest.param("linux", {}, WSL2_KERNEL, True, id="wsl2-kernel"),
        pytest.param("linux", {}, WSL1_KERNEL, True, id="wsl1-kernel-capitalised"),
        pytest.param("linux", {}, "6.8.0-45-generic\n", False, id="plain-linux"),
        pytest.param("linux", {}, None, False, id="osrelease-unreadable"),
        pytest.param(
            "linux", {"WSL_DISTRO_NAME": ""}, "6.8.0-45-generic", False, id="empty-wsl-env"
        ),
        pytest.param(
            "windows", {"WSL_DISTRO_NAME": "Ubuntu"}, WSL2_KERNEL, False, id="windows-is-never-wsl"
        ),
        pytest.param(
            "darwin", {"WSL_DISTRO_NAME": "Ubuntu"}, WSL2_KERNEL, False, id="darwin-is-never-wsl"
        ),
    ],
)
def test_is_wsl(os_: str, env: dict[str, str], osrelease: str | None, expected: bool) -> None:
    assert is_wsl(os_, env, osrelease) is expected


def test_read_osrelease(tmp_path: Path) -> None:
    path = tmp_path / "osrelease"
    path.write_bytes(b"5.15.0-microsoft-standard-WSL2\xff\n")
    assert machine._read_osrelease(str(path)) == "5.15.0-microsoft-standard-WSL2\ufffd\n"
    assert machine._read_osrelease(str(tmp_path / "missing")) is None


def fake_platform(
    mocker: MockerFixture,
    sys_platform: str,
    arch: str,
    *,
    cpus: int | None,
    total: int,
    available: int,
) -> Any:
    mocker.patch.object(machine, "sys", SimpleNamespace(platform=sys_platform))
    mocker.patch.object(machine, "platform", SimpleNamespace(machine=lambda: arch))
    psutil = mocker.patch.object(machine, "psutil")
    psutil.virtual_memory.return_value = SimpleNamespace(total=total, available=available)
    psutil.cpu_count.return_value = cpus
    return psutil


def test_read_machine_windows_amd64(mocker: MockerFixture) -> None:
    psutil = fake_platform(mocker, "win32", "AMD64", cpus=16, total=32 * GiB, available=20 * GiB)
    # A Windows host is never WSL, and /proc is not read there.
    opened = mocker.patch("installer.edges.machine.open", side_effect=AssertionError, create=True)
    facts = read_machine({"WSL_DISTRO_NAME": "Ubuntu"})
    assert facts == MachineFacts(
        os="windows",
        arch="x86_64",
        cpu_count=16,
        memory_total_bytes=32 * GiB,
        memory_available_bytes=20 * GiB,
        wsl=False,
    )
    psutil.cpu_count.assert_called_once_with(logical=True)
    opened.assert_not_called()


def test_read_machine_darwin_arm64(mocker: MockerFixture) -> None:
    fake_platform(mocker, "darwin", "arm64", cpus=10, total=16 * GiB, available=3 * GiB)
    opened = mocker.patch("installer.edges.machine.open", side_effect=AssertionError, create=True)
    facts = read_machine({})
    assert facts == MachineFacts(
        os="darwin",
        arch="arm64",
        cpu_count=10,
        memory_total_bytes=16 * GiB,
        memory_available_bytes=3 * GiB,
        wsl=False,
    )
    opened.assert_not_called()


@pytest.mark.parametrize(
    ("osrelease", "wsl"),
    [
        pytest.param(WSL2_KERNEL, True, id="wsl2"),
        pytest.param("6.8.0-45-generic\n", False, id="plain-linux"),
    ],
)
def test_read_machine_linux_reads_osrelease(
    mocker: MockerFixture, osrelease: str, wsl: bool
) -> None:
    fake_platform(mocker, "linux", "aarch64", cpus=4, total=8 * GiB, available=6 * GiB)
    opened = mocker.patch(
        "installer.edges.machine.open", mocker.mock_open(read_data=osrelease), create=True
    )
    facts = read_machine({})
    assert facts == MachineFacts(
        os="linux",
        arch="arm64",
        cpu_count=4,
        memory_total_bytes=8 * GiB,
        memory_available_bytes=6 * GiB,
        wsl=wsl,
    )
    assert opened.call_args.args[0] == "/proc/sys/kernel/osrelease"


def test_read_machine_linux_without_proc(mocker: MockerFixture) -> None:
    fake_platform(mocker, "linux", "x86_64", cpus=2, total=4 * GiB, available=GiB)
    mocker.patch("installer.edges.machine.open", side_effect=PermissionError, create=True)
    assert read_machine({}).wsl is False
    assert read_machine({"WSL_DISTRO_NAME": "Ubuntu"}).wsl is True


def test_read_machine_cpu_count_unknown_falls_back_to_os(mocker: MockerFixture) -> None:
    fake_platform(mocker, "darwin", "x86_64", cpus=None, total=8 * GiB, available=GiB)
    mocker.patch.object(machine, "os", SimpleNamespace(cpu_count=lambda: 6))
    assert read_machine({}).cpu_count == 6
    mocker.patch.object(machine, "os", SimpleNamespace(cpu_count=lambda: None))
    assert read_machine({}).cpu_count == 1


def test_read_machine_on_this_host_is_consistent() -> None:
    facts = read_machine({})
    assert facts.os in ("linux", "darwin", "windows")
    assert facts.cpu_count >= 1
    assert 0 < facts.memory_available_bytes <= facts.memory_total_bytes


# --- free disk ------------------------------------------------------------------------------


def test_disk_free_measures_nearest_existing_ancestor(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    psutil = mocker.patch.object(machine, "psutil")
    psutil.disk_usage.return_value = SimpleNamespace(free=42 * GiB, total=100 * GiB)
    assert machine.disk_free(str(tmp_path / "not" / "yet" / "there")) == 42 * GiB
    psutil.disk_usage.assert_called_once_with(str(tmp_path))


def test_disk_free_of_a_file_measures_its_directory(tmp_path: Path, mocker: MockerFixture) -> None:
    (tmp_path / "values.yaml").write_text("{}\n", encoding="utf-8")
    psutil = mocker.patch.object(machine, "psutil")
    psutil.disk_usage.return_value = SimpleNamespace(free=7)
    assert machine.disk_free(str(tmp_path / "values.yaml")) == 7
    psutil.disk_usage.assert_called_once_with(str(tmp_path))


def test_disk_free_on_this_host_matches_the_tmp_filesystem(tmp_path: Path) -> None:
    import shutil

    measured = machine.disk_free(str(tmp_path / "data" / "dir"))
    expected = shutil.disk_usage(tmp_path).free
    assert measured is not None
    # Other processes write meanwhile: the same filesystem, not the same byte.
    assert abs(measured - expected) < GiB


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(PermissionError(13, "Permission denied"), id="permission-denied"),
        pytest.param(OSError(5, "Input/output error"), id="io-error"),
    ],
)
def test_disk_free_unreadable_is_none(
    tmp_path: Path, mocker: MockerFixture, error: OSError
) -> None:
    psutil = mocker.patch.object(machine, "psutil")
    psutil.disk_usage.side_effect = error
    assert machine.disk_free(str(tmp_path / "data")) is None


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("/data\0dir", id="embedded-nul"),
    ],
)
def test_disk_free_of_no_path_is_none(path: str, mocker: MockerFixture) -> None:
    psutil = mocker.patch.object(machine, "psutil")
    assert machine.disk_free(path) is None
    psutil.disk_usage.assert_not_called()


def test_disk_free_when_not_even_the_root_exists(mocker: MockerFixture) -> None:
    # A Windows path on a drive letter that is not mounted: no ancestor exists.
    mocker.patch.object(machine.os.path, "isdir", return_value=False)
    psutil = mocker.patch.object(machine, "psutil")
    assert machine.disk_free("/no/such/drive") is None
    psutil.disk_usage.assert_not_called()


def test_version_does_not_load_psutil() -> None:
    # The frozen binary's start-up time: `--version` must not import the native extension.
    import subprocess
    import sys

    code = (
        "import sys\nfrom installer import cli\ntry:\n    cli.main(['--version'])\n"
        "except SystemExit:\n    pass\nprint('psutil' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.splitlines()[-1] == "False"
    assert "tracebloc-installer" in result.stdout


def test_psutil_attribute_loads_on_first_use() -> None:
    import psutil

    assert machine.psutil is psutil
    with pytest.raises(AttributeError):
        machine.no_such_attribute  # noqa: B018
