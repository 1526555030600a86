"""What the macOS runtime decision needs, read from this Mac (reads only): administrator
or not, a desktop session or headless, Docker Desktop and colima present, macOS version."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping

from installer.decide.drift import DockerRead
from installer.decide.errors import ToolTimeout
from installer.decide.model import MachineFacts
from installer.decide.redact import Redactor
from installer.decide.runtime import Facts
from installer.decide.runtime_macos import AMD64_SMOKE
from installer.decide.settings import RuntimeGiven
from installer.edges import call, proc
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
    tool = proc.find_on_path("colima", env, "darwin")
    if tool is None:
        return False
    result = call.answer(tool, ["list", "--json"], timeout=timeout, env=env)
    if isinstance(result, call.NoAnswer):
        return False
    return result.rc == 0 and bool(result.stdout.strip())


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
    has_sudo = proc.find_on_path("sudo", env, "darwin") is not None
    sudo = "root" if uid == 0 else ("pw" if has_sudo else "none")
    return Facts(
        os="darwin",
        docker=info.state,
        docker_reason=info.reason,
        docker_cli=proc.find_on_path("docker", env, "darwin") is not None,
        uid=uid,
        user=user,
        sudo=sudo,
        tools=tools,
        arch=machine.arch,
        admin=is_admin(user, uid),
        gui=has_gui_session(),
        docker_app=any(os.path.isdir(p) for p in (*APPS, f"{home}/Applications/Docker.app")),
        colima_instance=colima_instance(env, timeout),
        macos_version=platform.mac_ver()[0],
        memory_gib=(machine.host_memory_bytes or machine.memory_total_bytes) / 2**30,
        colima=dict(given.colima),
        colima_path=_colima_path(env),
    )


def _colima_path(env: Mapping[str, str]) -> str:
    tool = proc.find_on_path("colima", env, "darwin")
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
