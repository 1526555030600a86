"""Docker Desktop on a Mac (decide/docker_desktop_mac.py, edges/runtime_macos.py): one built for
the other chip is moved to the Trash and this chip's installed, behind the question; one whose
process runs while Docker does not answer is quit before it is started again. The headers are
real Mach-O layouts (mach-o/loader.h, mach-o/fat.h); no Mac runs here, so the Mac's programs
(sysctl, pgrep) are fakes that answer as the real ones do."""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

from installer.decide import runtime as rt
from installer.decide.docker_desktop_mac import macho_archs
from installer.decide.runtime_route import decide
from installer.edges import runtime_macos as edge
from tests.fakes.executables import make_executable

X86_64, ARM64 = 0x01000007, 0x0100000C


def thin(cputype: int) -> bytes:
    """A 64-bit Mach-O header as the linker writes it (little-endian on both chips)."""
    return struct.pack("<IiiIIII", 0xFEEDFACF, cputype, 3, 2, 10, 1000, 0) + bytes(64)


def universal(*cputypes: int) -> bytes:
    arches = b"".join(
        struct.pack(">iiIII", t, 3, 4096 * (i + 1), 1000, 12) for i, t in enumerate(cputypes)
    )
    return struct.pack(">II", 0xCAFEBABE, len(cputypes)) + arches


@pytest.mark.parametrize(
    ("head", "archs"),
    [
        pytest.param(thin(X86_64), {"x86_64"}, id="intel"),
        pytest.param(thin(ARM64), {"arm64"}, id="apple-silicon"),
        pytest.param(universal(X86_64, ARM64), {"x86_64", "arm64"}, id="universal"),
        pytest.param(b"#!/bin/sh\n", set(), id="a-script"),
        pytest.param(b"\xca\xfe\xba\xbe\x00\x00\x00\x09", set(), id="truncated-universal"),
        pytest.param(b"", set(), id="nothing-read"),
    ],
)
def test_the_chips_an_executable_is_built_for(head: bytes, archs: set[str]) -> None:
    assert macho_archs(head) == archs


def mac(**over: Any) -> rt.Facts:
    base: dict[str, Any] = dict(
        os="darwin",
        docker="stopped",
        docker_cli=True,
        docker_app=True,
        docker_app_path="/Applications/Docker.app",
        uid=501,
        user="ana",
        sudo="pw",
        admin=True,
        gui=True,
        arch="arm64",
        macos_version="14.5",
        tools=frozenset({"brew"}),
        memory_gib=16.0,
        docker_desktop_alive=False,
    )
    base.update(over)
    return rt.Facts(**base)


TRASH = "/Users/ana/.Trash/Docker (Intel).app"


def test_an_intel_docker_desktop_on_apple_silicon_goes_to_the_trash_and_the_native_one_comes() -> (
    None
):
    plan = decide(mac(docker_app_archs=frozenset({"x86_64"}), trash_target=TRASH))
    argv = [s.argv for s in plan.steps]
    moved = argv.index(("mv", "/Applications/Docker.app", TRASH))
    fetched = next(
        i for i, s in enumerate(plan.steps) if s.kind == "fetch" and "Docker.dmg" in s.url
    )
    assert moved < fetched and "/arm64/" in plan.steps[fetched].url
    assert plan.steps[moved].root  # Docker.app's protected parts need the administrator
    assert "built for Intel, not this Apple Silicon Mac" in plan.steps[moved].why
    assert plan.reason == "docker-wrong-chip"
    assert ("open", "-a", "Docker") == argv[-2][:3]  # then started, as a fresh install is


def test_an_apple_silicon_docker_desktop_on_an_intel_mac_is_replaced_too() -> None:
    plan = decide(mac(arch="x86_64", docker_app_archs=frozenset({"arm64"}), trash_target=TRASH))
    fetch = next(s for s in plan.steps if s.kind == "fetch" and "Docker.dmg" in s.url)
    assert "/amd64/" in fetch.url
    assert ("mv", "/Applications/Docker.app", TRASH) in [s.argv for s in plan.steps]


@pytest.mark.parametrize(
    "archs",
    [
        pytest.param(frozenset({"arm64"}), id="this-chip"),
        pytest.param(frozenset({"arm64", "x86_64"}), id="universal"),
        pytest.param(frozenset(), id="not-read"),  # no evidence: nothing is moved
    ],
)
def test_a_docker_desktop_for_this_chip_or_unread_is_only_started(archs: frozenset[str]) -> None:
    plan = decide(mac(docker_app_archs=archs, trash_target=TRASH if archs else ""))
    assert [s.argv[:3] for s in plan.steps] == [
        ("open", "-a", "Docker"),
        ("docker", "info", "--format"),
    ]
    assert not plan.privileged


def test_a_wrong_chip_with_no_free_trash_name_is_refused_not_overwritten() -> None:
    plan = decide(mac(docker_app_archs=frozenset({"x86_64"}), trash_target=""))
    assert plan.refusal is not None and "built for another chip" in plan.refusal[0]
    assert plan.steps == ()


def test_a_wrong_chip_without_an_administrator_is_refused_before_anything() -> None:
    plan = decide(mac(docker_app_archs=frozenset({"x86_64"}), trash_target=TRASH, admin=False))
    assert plan.refusal is not None and plan.steps == ()


def test_a_wedged_docker_desktop_is_quit_before_it_is_started_again() -> None:
    plan = decide(mac(docker_desktop_alive=True))
    assert [s.argv for s in plan.steps][:3] == [
        ("osascript", "-e", 'quit app "Docker"'),
        ("pkill", "-x", "Docker Desktop"),
        ("open", "-a", "Docker"),
    ]
    assert all(not s.root and s.optional for s in plan.steps[:2])  # as this user; best effort
    assert not plan.privileged


@pytest.mark.parametrize("alive", [False, None])  # not running, or could not tell: no quit
def test_no_quit_without_a_process_seen(alive: bool | None) -> None:
    plan = decide(mac(docker_desktop_alive=alive))
    assert plan.steps[0].argv == ("open", "-a", "Docker")


# --- what the edge reads ------------------------------------------------------------------


def app_with(tmp_path: Path, content: bytes, name: str = "com.docker.backend") -> Path:
    app = tmp_path / "Docker.app"
    exe = app / "Contents" / "MacOS" / name
    exe.parent.mkdir(parents=True)
    exe.write_bytes(content)
    return app


def test_the_edge_reads_the_backend_executables_header(tmp_path: Path) -> None:
    app = app_with(tmp_path, thin(X86_64) + bytes(10_000))
    head = edge.app_executable_head(str(app))
    assert len(head) == 4096 and macho_archs(head) == {"x86_64"}


def test_the_edge_falls_back_to_the_docker_executable(tmp_path: Path) -> None:
    app = app_with(tmp_path, universal(X86_64, ARM64), name="Docker")
    assert macho_archs(edge.app_executable_head(str(app))) == {"x86_64", "arm64"}


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and links are POSIX here")
def test_a_fifo_or_a_link_in_the_executables_place_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    exe = tmp_path / "Docker.app" / "Contents" / "MacOS"
    exe.mkdir(parents=True)
    (exe / "com.docker.backend").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_bytes(thin(X86_64))
    os.mkfifo(exe / "Docker")
    assert edge.app_executable_head(str(tmp_path / "Docker.app")) == b""  # and it did not hang


def test_a_trash_name_already_taken_is_never_the_target(tmp_path: Path) -> None:
    trash = tmp_path / ".Trash"
    (trash / "Docker (Intel).app").mkdir(parents=True)
    assert edge.trash_name(str(tmp_path), frozenset({"x86_64"})) == str(
        trash / "Docker (Intel) 2.app"
    )
    assert edge.trash_name("", frozenset({"x86_64"})) == ""


@pytest.mark.skipif(sys.platform == "win32", reason="the fakes are POSIX scripts")
@pytest.mark.parametrize(
    ("rc", "stdout", "stderr", "chip"),
    [
        pytest.param(0, "1\n", "", "arm64", id="apple-silicon-under-rosetta"),
        pytest.param(0, "0\n", "", "x86_64", id="says-0"),
        pytest.param(1, "", "sysctl: unknown oid 'hw.optional.arm64'\n", "x86_64", id="intel"),
        pytest.param(1, "", "sysctl: permission denied\n", "fallback", id="unreadable"),
    ],
)
def test_the_macs_chip_is_read_from_sysctl_not_from_the_engines_own_arch(
    tmp_path: Path, rc: int, stdout: str, stderr: str, chip: str
) -> None:
    make_executable(
        tmp_path / "sysctl",
        f"import sys\nsys.stdout.write({stdout!r})\nsys.stderr.write({stderr!r})\nsys.exit({rc})\n",
    )
    assert edge.hardware_arch({"PATH": str(tmp_path)}, "fallback", 10.0) == chip


@pytest.mark.skipif(sys.platform == "win32", reason="the fakes are POSIX scripts")
@pytest.mark.parametrize(("rc", "alive"), [(0, True), (1, False), (2, None)])
def test_the_docker_desktop_process_is_seen_only_on_pgreps_own_answer(
    tmp_path: Path, rc: int, alive: bool | None
) -> None:
    make_executable(
        tmp_path / "pgrep",
        f"import sys\nassert sys.argv[1:] == ['-x', 'Docker Desktop'], sys.argv\nsys.exit({rc})\n",
    )
    assert edge.desktop_alive({"PATH": str(tmp_path)}, 10.0) is alive
