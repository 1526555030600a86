"""What the macOS runtime decision needs, read from this Mac (reads only): administrator
or not, a desktop session or headless, Docker Desktop and colima present, macOS version."""

from __future__ import annotations

import os
import platform
import stat
import sys
from collections.abc import Mapping

from installer.decide.docker_desktop_mac import CHIP, macho_archs
from installer.decide.drift import DockerRead
from installer.decide.errors import ToolTimeout
from installer.decide.model import MachineFacts
from installer.decide.redact import Redactor
from installer.decide.runtime import Facts
from installer.decide.runtime_macos import AMD64_SMOKE
from installer.decide.settings import RuntimeGiven
from installer.edges import call, proc, toolpath
from installer.edges.docker import find_docker
from installer.edges.runtime_linux import present_tools, user_name

APPS = ("/Applications/Docker.app",)
MAC_TOOLS = ("brew", "colima", "sudo")


def is_admin(user: str, uid: int) -> bool | None:
    """In the `admin` group (or root): an admin can sudo on a stock Mac."""
    if uid == 0:
        return True
    if sys.platform == "win32":
        return None
    try:
        import grp
        import pwd

        admin = grp.getgrnam("admin")
        entry = pwd.getpwnam(user)
        return admin.gr_gid in os.getgrouplist(user, entry.pw_gid) or user in admin.gr_mem
    except (ImportError, KeyError, OSError):
        return None


def has_gui_session() -> bool | None:
    """/dev/console belongs to the user logged in at the desktop, to root when nobody is
    (EC2 Macs, CI runners)."""
    try:
        return os.stat("/dev/console").st_uid != 0
    except OSError:
        return None


def colima_instance(env: Mapping[str, str], timeout: float) -> bool:
    tool = toolpath.find_on_path("colima", env, "darwin")
    if tool is None:
        return False
    result = call.answer(tool, ["list", "--json"], timeout=timeout, env=env)
    if isinstance(result, call.NoAnswer):
        return False
    return result.rc == 0 and bool(result.stdout.strip())


def app_executable_head(app: str) -> bytes:
    """The first bytes of Docker.app's executable, read without following a link or
    blocking on a FIFO; b"" when there is no regular file to read."""
    for name in ("com.docker.backend", "Docker"):
        path = os.path.join(app, "Contents", "MacOS", name)
        try:
            flags = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(path, os.O_RDONLY | flags)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return os.read(fd, 4096)
        finally:
            os.close(fd)
    return b""


def hardware_arch(env: Mapping[str, str], fallback: str, timeout: float) -> str:
    """This Mac's chip, also when the engine runs translated by Rosetta (sysctl's
    hw.optional.arm64 is 1 on Apple Silicon; Intel Macs have no such entry)."""
    tool = toolpath.find_on_path("sysctl", env, "darwin")
    if tool is None:
        return fallback
    result = call.answer(tool, ["-n", "hw.optional.arm64"], timeout=timeout, env=env)
    if isinstance(result, call.NoAnswer):
        return fallback
    if result.rc == 0 and result.stdout.strip() in ("0", "1"):
        return "arm64" if result.stdout.strip() == "1" else "x86_64"
    return "x86_64" if "unknown oid" in result.stderr.lower() else fallback


def desktop_alive(env: Mapping[str, str], timeout: float) -> bool | None:
    """A process named exactly "Docker Desktop" runs (pgrep: 0 yes, 1 none)."""
    tool = toolpath.find_on_path("pgrep", env, "darwin")
    if tool is None:
        return None
    result = call.answer(tool, ["-x", "Docker Desktop"], timeout=timeout, env=env)
    if isinstance(result, call.NoAnswer) or result.rc not in (0, 1):
        return None
    return result.rc == 0


def trash_name(home: str, archs: frozenset[str]) -> str:
    """A name nothing holds yet in ~/.Trash (mv into an existing folder would nest)."""
    if not home:
        return ""
    chips = " and ".join(sorted(CHIP.get(a, a) for a in archs)) or "other chip"
    for n in range(1, 100):
        suffix = "" if n == 1 else f" {n}"
        path = os.path.join(home, ".Trash", f"Docker ({chips}){suffix}.app")
        if not os.path.lexists(path):
            return path
    return ""


def read_facts(
    env: Mapping[str, str],
    info: DockerRead,
    machine: MachineFacts,
    *,
    timeout: float,
    given: RuntimeGiven,
) -> Facts:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    user = user_name(env, uid)
    home = env.get("HOME", "")
    tools = present_tools(env, MAC_TOOLS)
    has_sudo = toolpath.find_on_path("sudo", env, "darwin") is not None
    sudo = "root" if uid == 0 else ("pw" if has_sudo else "none")
    app = next((p for p in (*APPS, f"{home}/Applications/Docker.app") if os.path.isdir(p)), "")
    running = info.state == "running"
    archs = macho_archs(app_executable_head(app)) if app and not running else frozenset()
    return Facts(
        os="darwin",
        docker=info.state,
        docker_reason=info.reason,
        docker_cli=toolpath.find_on_path("docker", env, "darwin") is not None,
        uid=uid,
        user=user,
        sudo=sudo,
        tools=tools,
        arch=hardware_arch(env, machine.arch, timeout),
        admin=is_admin(user, uid),
        gui=has_gui_session(),
        docker_app=bool(app),
        docker_app_path=app,
        docker_app_archs=archs,
        docker_desktop_alive=desktop_alive(env, timeout) if app and not running else None,
        trash_target=trash_name(home, archs) if archs else "",
        colima_instance=colima_instance(env, timeout),
        macos_version=platform.mac_ver()[0],
        memory_gib=(machine.host_memory_bytes or machine.memory_total_bytes) / 2**30,
        colima=dict(given.colima),
        colima_path=_colima_path(env),
    )


def _colima_path(env: Mapping[str, str]) -> str:
    tool = toolpath.find_on_path("colima", env, "darwin")
    return os.path.abspath(tool.path) if tool is not None else ""


def tier0_facts(env: Mapping[str, str], uid: int, user: str) -> Facts:
    """The little tier 0 needs for the login autostart: who, and where colima is."""
    return Facts(os="darwin", docker="running", uid=uid, user=user, colima_path=_colima_path(env))


def amd64_smoke(
    env: Mapping[str, str], redactor: Redactor, *, timeout: float
) -> tuple[int | None, str]:
    """`docker run --rm --platform linux/amd64
    busybox:1.36 true`, bounded (the child tree is killed at the deadline). (rc, what it
    said); rc None when it did not finish in time. Raises ToolNotFound without docker."""
    try:
        result = proc.run(
            find_docker(env, "darwin"),
            list(AMD64_SMOKE[1:]),
            timeout=timeout,
            env=env,
            redactor=redactor,
        )
    except ToolTimeout:
        return None, ""
    return result.rc, redactor(f"{result.stderr}\n{result.stdout}".strip())
