"""What the Linux runtime decision needs, read from this machine (reads only): who runs
the engine, whether sudo works without a password, the distribution, which package
manager and service manager exist, and whether this user is in the docker group."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping

from installer.decide.drift import DockerRead
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import MachineFacts
from installer.decide.runtime import (
    APT_KEY,
    APT_SOURCE,
    APT_SOURCE_DEB822,
    CA_DROPIN,
    PROXY_DROPIN,
    RPM_KEY,
    RPM_REPO,
    Facts,
    is_ours,
    parse_os_release,
)
from installer.decide.settings import RuntimeGiven
from installer.decide.yesno import flag
from installer.edges import call, toolpath

OS_RELEASE = "/etc/os-release"
OS_RELEASE_SEAM = "TB_OS_RELEASE_FILE"  # test seam: read this file instead
TOOLS = ("apt-get", "dnf", "yum", "zypper", "pacman", "systemctl", "fuser", "sg", "sudo")
# Tests only: run the decision as this user instead of the real one (the suite runs as
# root). Honoured only together with the TB_OS_RELEASE_FILE seam, and announced.
TEST_USER = "TB_TEST_RUNTIME_USER"  # NAME:UID
# Tests only, with the test user: the files below are read under this directory (the fake
# root tools' scratch root) instead of /.
TEST_SYSROOT = "TB_TEST_SYSROOT"
OWNED = (APT_SOURCE, APT_SOURCE_DEB822, APT_KEY, RPM_REPO, RPM_KEY, PROXY_DROPIN, CA_DROPIN)


def os_release_path(env: Mapping[str, str]) -> str:
    return env.get(OS_RELEASE_SEAM, "").strip() or OS_RELEASE


def read_os_release(env: Mapping[str, str]) -> dict[str, str]:
    try:
        with open(os_release_path(env), encoding="utf-8", errors="replace") as handle:
            return parse_os_release(handle.read(65536))
    except OSError:
        return {}


def present_tools(env: Mapping[str, str], names: tuple[str, ...] = TOOLS) -> frozenset[str]:
    return frozenset(n for n in names if toolpath.find_on_path(n, env, "linux") is not None)


def test_user(env: Mapping[str, str]) -> tuple[str, int] | None:
    raw = env.get(TEST_USER, "").strip()
    if not raw or not env.get(OS_RELEASE_SEAM, "").strip():
        return None
    name, _, uid = raw.partition(":")
    return (name, int(uid)) if name and uid.isdigit() else None


def user_name(env: Mapping[str, str], uid: int) -> str:
    if sys.platform == "win32":
        return ""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return ""


def in_group(user: str, group: str) -> bool | None:
    """In /etc/group (or primary group); None when it cannot be told."""
    if sys.platform == "win32":
        return None
    try:
        import grp
        import pwd

        try:
            entry = grp.getgrnam(group)
        except KeyError:
            return False  # no such group: certainly not a member
        if user in entry.gr_mem:
            return True
        try:
            return pwd.getpwnam(user).pw_gid == entry.gr_gid
        except KeyError:
            return None
    except ImportError:
        return None


def file_state(path: str) -> str:
    """absent | ours | foreign | link | dangling | unreadable, as this user sees `path`
    (lstat: a link is reported as one, never followed into "absent")."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "absent"
    except OSError:
        return "unreadable"
    if stat.S_ISLNK(info.st_mode):
        return "link" if os.path.exists(path) else "dangling"
    if not stat.S_ISREG(info.st_mode):
        return "foreign"
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return "ours" if is_ours(handle.read(65536)) else "foreign"
    except OSError:
        return "unreadable"  # a root-only file: the guard reads it through sudo as it runs


def owned_files(env: Mapping[str, str]) -> dict[str, str]:
    root = env.get(TEST_SYSROOT, "").strip() if test_user(env) is not None else ""
    return {path: file_state(root + path) for path in OWNED}


def dpkg_arch(env: Mapping[str, str], tools: frozenset[str], timeout: float) -> str:
    """`dpkg --print-architecture` on an apt machine ("" when it cannot be asked)."""
    dpkg = toolpath.find_on_path("dpkg", env, "linux") if "apt-get" in tools else None
    if dpkg is None:
        return ""
    result = call.answer(dpkg, ["--print-architecture"], timeout=timeout, env=env)
    return "" if isinstance(result, call.NoAnswer) or result.rc != 0 else result.stdout.strip()


def sudo_posture(env: Mapping[str, str], uid: int, timeout: float) -> str:
    """root | nopw | pw | none (`sudo -n true` changes nothing)."""
    if uid == 0:
        return "root"
    sudo = toolpath.find_on_path("sudo", env, "linux")
    if sudo is None:
        return "none"
    result = call.answer(sudo, ["-n", "true"], timeout=timeout, env=env, keep_terminal=True)
    if isinstance(result, call.NoAnswer):
        return "pw"
    return "nopw" if result.rc == 0 else "pw"


def boot_enabled(env: Mapping[str, str], timeout: float) -> str:
    """`systemctl is-enabled docker`, as this user (a read: no sudo, no prompt): "enabled",
    "disabled", ... as systemctl says; "" when it cannot tell. Only "enabled" survives a
    reboot ("enabled-runtime" does not)."""
    tool = toolpath.find_on_path("systemctl", env, "linux")
    if tool is None:
        return ""
    result = call.answer(tool, ["is-enabled", "docker"], timeout=timeout, env=env)
    if isinstance(result, call.NoAnswer):
        return ""
    words = result.stdout.split()
    return words[0] if words else ""


def read_facts(
    env: Mapping[str, str],
    info: DockerRead,
    machine: MachineFacts,
    *,
    timeout: float,
    given: RuntimeGiven,
    uid: int | None = None,
) -> Facts:
    uid = os.getuid() if uid is None and hasattr(os, "getuid") else (uid or 0)
    user = user_name(env, uid)
    pretend = test_user(env)
    if pretend is not None:
        user, uid = pretend
    tools = present_tools(env)
    return Facts(
        os="linux",
        docker=info.state,
        docker_reason=info.reason,
        docker_cli=toolpath.find_on_path("docker", env, "linux") is not None
        or bool(env.get("TRACEBLOC_DOCKER", "").strip()),
        uid=uid,
        user=user,
        sudo_user=env.get("SUDO_USER", "").strip(),
        sudo=sudo_posture(env, uid, timeout),
        in_docker_group=in_group(user, "docker") if user else None,
        os_release=read_os_release(env),
        tools=tools,
        arch=machine.arch,
        dpkg_arch=dpkg_arch(env, tools, timeout),
        files=owned_files(env),
        proxy=dict(given.proxy),
        ca_pem=read_ca_bundle(given.ca_bundle) if given.ca_bundle else "",
        boot_enabled=boot_enabled(env, timeout),
        no_autostart=flag(env, "TRACEBLOC_NO_AUTOSTART"),
    )


# A CA bundle is a few hundred kilobytes (the whole Mozilla store is ~250 KB).
MAX_CA_BUNDLE_BYTES = 4 * 2**20


def read_ca_bundle(raw: str) -> str:
    """TRACEBLOC_CA_BUNDLE's certificates, read as the person: root gets the bytes, never the
    path. BadInput for anything but a regular file of PEM certificates."""
    import ssl

    from installer.decide import pem
    from installer.edges import files

    name = "TRACEBLOC_CA_BUNDLE"
    path = os.path.abspath(os.path.expanduser(raw))
    remedy = f"point {name} at a PEM file holding your organisation's root CA"
    try:
        link = os.lstat(path)
        target = os.stat(path)
    except OSError as exc:
        raise BadInput(f"{name}={raw!r}: cannot read it ({exc.strerror or exc})", remedy) from None
    if stat.S_ISLNK(link.st_mode) and target.st_uid != link.st_uid:
        raise BadInput(
            f"{name}={raw!r} is a link to a file another user owns",
            f"point {name} at the file itself, or copy it: {remedy}",
        )
    try:
        data = files.read_bounded(path, limit=MAX_CA_BUNDLE_BYTES, what="a PEM file", remedy=remedy)
    except InstallerError as exc:
        raise BadInput(f"{name}={raw!r}: {exc.message}", remedy) from None
    if data is None:
        raise BadInput(f"{name}={raw!r} is not a file", remedy)
    try:
        text = pem.certificates(data)
        ssl.create_default_context().load_verify_locations(cadata=text)
    except pem.NotCertificates as exc:
        raise BadInput(f"{name}={raw!r} is not PEM certificates only: {exc}", remedy) from None
    except (OSError, ValueError):  # ssl.SSLError is an OSError too
        raise BadInput(f"{name}={raw!r} holds a certificate that cannot be read", remedy) from None
    return text


def account_exists(name: str) -> bool | None:
    """Is `name` an account on this machine (the passwd database, NSS included)? None where
    there is none to ask."""
    if sys.platform == "win32":
        return None
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
