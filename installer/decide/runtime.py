"""The container runtime step as pure decisions: which tier a machine is on, and for the
privileged tier every command the engine will run as root, argv exactly.

When `docker info` answers as this user nothing privileged happens at all; otherwise the
privileged flow runs. `Facts` are gathered by edges/runtime_linux.py and runtime_macos.py.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from installer.decide.settings import one_line

TIER0, PRIVILEGED = 0, 2
INSTALL, PREPARE_HOST = "install", "prepare-host"

DOCKER_GROUP = "docker"
DROPIN_DIR = "/etc/systemd/system/docker.service.d"
PROXY_DROPIN = f"{DROPIN_DIR}/http-proxy.conf"
CA_DROPIN = f"{DROPIN_DIR}/tracebloc-ca.conf"
CA_DIR = "/etc/docker/tracebloc-ca"
MODULES_FILE = "/etc/modules-load.d/tracebloc.conf"
MARKER = "# Managed by tracebloc installer"
# The first line of a drop-in the engine (or the bash scripts, `(#244)`) wrote: a file is the
# engine's to rewrite or remove only when a line is exactly this (grep -xE, Python re alike).
MARKER_LINE = r"# Managed by tracebloc installer( \(#244\))?"
APT_SOURCE = "/etc/apt/sources.list.d/docker.list"
# Docker's documented deb822 source: apt refuses two sources of one repository whose
# signed-by differ, so either one kept means the engine writes neither.
APT_SOURCE_DEB822 = "/etc/apt/sources.list.d/docker.sources"
APT_KEY = "/etc/apt/keyrings/docker.asc"
RPM_REPO = "/etc/yum.repos.d/docker-ce.repo"
# The engine's copy of Docker's rpm signing key, the one key the engine's repository file
# names (gpgkey=file://…), so dnf trusts no key fetched at install time.
RPM_KEY_DIR = "/etc/pki/rpm-gpg"
RPM_KEY = f"{RPM_KEY_DIR}/docker-ce.asc"
NEW_SUFFIX = ".tracebloc-new"  # not *.conf: systemd never reads a half-written one
KERNEL_MODULES = ("overlay", "br_netfilter", "xt_addrtype", "iptable_nat", "ip_tables")
APT_LOCKS = ("/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock", "/var/lib/apt/lists/lock")
LOCK_WAIT_S = 600
PACKAGE_TIMEOUT_S = 600  # bound on the Docker install
START_WAIT_S = 60
APT_ENV = ("env", "DEBIAN_FRONTEND=noninteractive", "NEEDRESTART_MODE=a")
APT_OPTS = ("-o", "DPkg::Lock::Timeout=600")

# Docker's apt signing key: the download is installed only when it has this fingerprint.
DOCKER_APT_KEY_FPR = "9DC858229FC7DD38854AE2D88D81803C0EBFCD88"
# Docker's rpm signing key ("Docker Release (CE rpm)", https://docs.docker.com/engine/install/fedora/):
# another key than apt's, checked the same way before dnf is pointed at it.
DOCKER_RPM_KEY_FPR = "060A61C51B558A7F742B77AAC52FEB6B621E9F35"
DOCKER_DOWNLOAD = "https://download.docker.com/linux"
# Docker's dnf repository definitions; dnf checks each package against the repository's
# gpgkey (gpgcheck=1 in the file).
DOCKER_RPM_REPOS = {"fedora": "fedora", "rhel": "rhel", "centos": "centos"}
RHEL_REBUILDS = ("almalinux", "rocky", "ol", "oracle", "centos")


@dataclass(frozen=True)
class Facts:
    """What the edges measured. `None` means "could not tell", never "no"."""

    os: str  # "linux" | "darwin"
    docker: str  # DockerRead.state: running | stopped | missing | unreadable
    docker_reason: str = ""
    docker_cli: bool = False  # a docker executable is on PATH
    uid: int = 1000
    user: str = ""
    sudo_user: str = ""  # SUDO_USER of this process
    sudo: str = "pw"  # root | nopw | pw | none
    in_docker_group: bool | None = None  # in /etc/group (not necessarily this process)
    os_release: Mapping[str, str] = field(default_factory=dict)
    tools: frozenset[str] = (
        frozenset()
    )  # which of apt-get, dnf, yum, zypper, pacman, systemctl, fuser, … exist
    arch: str = "x86_64"  # the engine's name (decide/arch.py): x86_64 | arm64
    dpkg_arch: str = ""  # what `dpkg --print-architecture` answered, when it could be asked
    # The files the engine may write, as this user saw them (edges/runtime_linux.file_state):
    # path -> absent | ours | foreign | link | dangling | unreadable; a path not read is unknown.
    files: Mapping[str, str] = field(default_factory=dict)
    proxy: Mapping[str, str] = field(default_factory=dict)  # HTTP(S)_PROXY/NO_PROXY as set
    ca_pem: str = ""  # the certificates of TRACEBLOC_CA_BUNDLE, read as the person (decide/pem)
    boot_enabled: str = (
        ""  # `systemctl is-enabled docker` as this user: "enabled", "disabled", "" unknown
    )
    no_autostart: bool = False  # TRACEBLOC_NO_AUTOSTART
    # macOS
    admin: bool | None = None
    gui: bool | None = None
    docker_app: bool = False  # /Applications/Docker.app (or ~/Applications)
    docker_app_path: str = ""  # which of the two
    docker_app_archs: frozenset[str] = frozenset()  # its executable's chips; empty: not read
    docker_desktop_alive: bool | None = None  # a "Docker Desktop" process runs
    trash_target: str = ""  # a name free in ~/.Trash for a Docker.app moved aside
    colima_instance: bool = False
    macos_version: str = ""
    memory_gib: float = 0.0
    colima: Mapping[str, str] = field(default_factory=dict)  # COLIMA_MEMORY/_CPU/_DISK
    colima_path: str = ""  # colima's absolute path, when it is on PATH


@dataclass(frozen=True)
class Step:
    """One command. `root`: through `sudo -n` (directly when root). `kind`: "run", "stage"
    (`content` on stdin, or in an owner-only temp file replacing STAGED), "fetch" (`url` into
    the staged file, checked as `check` says), "wait-lock", "wait-docker", "modules", "member"
    (the group read back). `optional`: a failure is a warning."""

    argv: tuple[str, ...]
    why: str
    root: bool = True
    timeout: float = 120.0
    kind: str = "run"
    optional: bool = False
    content: str = ""
    url: str = ""
    check: str = ""  # for "fetch": "openpgp:<fpr>" | "sha256-from:<url>" | ""
    secret: bool = False  # `content` may hold a password: never shown, never logged
    when: str = ""  # "changed": only when a staged file before it changed what was there;
    # "changed:<path>": only when a guarded step before it changed <path>. "ours": argv[-1] is
    # changed only when absent or holding MARKER_LINE (else a warning), via NEW_SUFFIX and `mv -f`.
    guard: str = ""


STAGED = "<staged file>"
# Where root reads a "stage" step's content: its standard input, fed by the engine, so a
# file for /etc (a proxy password in it) is never staged on disk, not even for a moment.
STDIN = "/dev/stdin"


def streamed(step: Step) -> Step:
    """A root "stage" step reads its content from STDIN instead of a staged file."""
    if not (step.root and step.kind == "stage" and STAGED in step.argv):
        return step
    return replace(step, argv=tuple(STDIN if part == STAGED else part for part in step.argv))


def compare_source(step: Step) -> str:
    """What `cmp -s SOURCE DEST` compares with the file in place: stdin (`-`) for a streamed
    step, else the staged file."""
    return "-" if STDIN in step.argv else STAGED


@dataclass(frozen=True)
class RuntimePlan:
    tier: int
    reason: str  # short: runtime-usable, docker-missing, docker-stopped, no-socket-access
    steps: tuple[Step, ...] = ()
    refusal: tuple[str, str] | None = None  # (message, remedy): stop before any change
    grant_user: str = ""  # who is added to the docker group (group access without re-login)
    notes: tuple[str, ...] = ()
    as_root: bool = False  # the engine runs as root: no sudo in front
    kept: tuple[str, ...] = ()  # an administrator's files used as they are, one line each

    @property
    def privileged(self) -> bool:
        return any(step.root for step in self.steps)


def parse_os_release(text: str) -> dict[str, str]:
    """`KEY=value` lines (os-release(5)); quotes removed, comments and junk ignored."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        try:
            words = shlex.split(value)
        except ValueError:
            continue
        if re.fullmatch(r"[A-Z0-9_]+", key):
            out[key] = words[0] if words else ""
    return out


def is_ours(text: str) -> bool:
    """A file's text holds the engine's marker line (the guard's grep -qxE, in Python)."""
    return any(re.fullmatch(MARKER_LINE, line) for line in text.splitlines())


def distro(os_release: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    ident = os_release.get("ID", "").lower()
    like = tuple(os_release.get("ID_LIKE", "").lower().split())
    return ident, like


def shown(step: Step, as_root: bool) -> str:
    """How `plan` and the log show a step: the exact argv, `sudo -n` in front when it
    runs through sudo."""
    prefix = ("sudo", "-n") if step.root and not as_root else ()
    return shlex.join((*prefix, *step.argv))


def sudo_wrapped(sudo_user: str) -> tuple[str, str]:
    return (
        f"don't run the installer with sudo: it would grant Docker to root instead of "
        f"{sudo_user} and leave root-owned files in {sudo_user}'s home",
        f"run it again as {sudo_user} without sudo (it asks for the password itself when "
        f"it needs it); an administrator preparing this machine for someone else runs "
        f"`sudo TB_PREPARE_USER=<their user> tracebloc-installer prepare-host`",
    )


def no_sudo(facts: Facts) -> tuple[str, str] | None:
    if facts.uid == 0 or facts.sudo in ("root", "nopw", "pw"):
        return None
    return (
        "this machine needs administrator rights to set up Docker, but you are not root "
        "and cannot use sudo",
        "ask an administrator to run `sudo TB_PREPARE_USER=<your user> tracebloc-installer "
        "prepare-host` once (or to install Docker and add you to the docker group), then "
        "run the installer again as yourself",
    )


def sudo_prime(facts: Facts) -> tuple[Step, ...]:
    """One password prompt, before the first privileged command (none when root or when
    sudo needs no password)."""
    if facts.uid == 0 or facts.sudo != "pw":
        return ()
    return (
        Step(
            ("sudo", "-v"),
            "ask for your password once (sudo)",
            root=False,
            timeout=300,
            kind="prime",
        ),
    )


def proxy_dropin(proxy: Mapping[str, str], no_proxy_extra: tuple[str, ...] = ()) -> str | None:
    """The Docker daemon's systemd drop-in for the host's proxy (k3d needs it to pull behind
    one), or None without a proxy. It holds the proxy's password, if any."""
    http = next(
        (
            proxy[n]
            for n in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
            if proxy.get(n, "").strip()
        ),
        "",
    )
    if not http:
        return None
    https = proxy.get("HTTPS_PROXY") or proxy.get("https_proxy") or http
    hosts = [
        h for h in (proxy.get("NO_PROXY") or proxy.get("no_proxy") or "").split(",") if h.strip()
    ]
    hosts += [h for h in no_proxy_extra if h not in hosts]
    return (
        f"{MARKER}\n[Service]\n"
        f"Environment={_unit_quote('HTTP_PROXY=' + http)}\n"
        f"Environment={_unit_quote('HTTPS_PROXY=' + https)}\n"
        f"Environment={_unit_quote('NO_PROXY=' + ','.join(hosts))}\n"
    )


def _unit_quote(assignment: str) -> str:
    """A systemd `Environment=` value: double-quoted, `\\` and `"` escaped, `%` doubled, so any
    password reaches dockerd unchanged. A control character is refused."""
    one_line(assignment.partition("=")[0], assignment)
    escaped = assignment.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{escaped}"'


def ca_dropin() -> str:
    """dockerd reads its roots from SSL_CERT_DIR (the system directories plus the engine's own),
    so the corporate CA is trusted by the daemon only."""
    dirs = ":".join(
        ("/etc/ssl/certs", "/etc/pki/tls/certs", "/var/lib/ca-certificates/pem", CA_DIR)
    )
    return f'{MARKER}\n[Service]\nEnvironment="SSL_CERT_DIR={dirs}"\n'


def plan_lines(plan: RuntimePlan) -> list[str]:
    """Every command the runtime step runs, as `plan` shows and the install confirms it: with
    `sudo -n`, compares before writes, and the checks downloads get."""
    lines: list[str] = [f"# kept: {line}" for line in plan.kept]
    for step in plan.steps:
        if step.kind == "prime":
            lines.append(f"{shlex.join(step.argv)}    # {step.why}")
            continue
        if step.kind == "fetch":
            check = f", checked: {step.check}" if step.check else ""
            lines.append(f"download {step.url} -> {STAGED}    # as you{check}")
        if step.guard == "ours":
            lines += guard_lines(step, plan.as_root)
            continue
        if step.root and step.kind in ("stage", "fetch") and step.argv[0] == "install":
            probe = Step(("cmp", "-s", compare_source(step), step.argv[-1]), "", root=True)
            lines.append(f"{shown(probe, plan.as_root)}    # unchanged: not rewritten")
        suffix = {
            "wait-lock": f" (while held, up to {step.timeout:g}s)",
            "wait-docker": f" (until it answers, up to {step.timeout:g}s)",
            "modules": f" (then {step.content} and again, when one does not load)"
            if step.content
            else "",
        }.get(step.kind, "")
        when = (
            " (only when a file changed)"
            if step.when == "changed"
            else (f" (only when {step.when[8:]} was removed or changed)" if step.when else "")
        )
        optional = " [a failure is a warning]" if step.optional else ""
        lines.append(f"{shown(step, plan.as_root)}    # {step.why}{suffix}{when}{optional}")
    return lines


def guard_probe(path: str) -> tuple[str, ...]:
    """Is `path` the engine's own file? grep's answer: 0 yes, 1 no, 2 absent or unreadable."""
    return ("grep", "-qxE", MARKER_LINE, path)


def discard(new: str, root: bool) -> Step:
    """What a failed write or rename of a guarded file leaves beside it (`new`, the file's
    path + NEW_SUFFIX) is removed: no owner-only copy of ours stays under /etc."""
    return Step(
        ("rm", "-f", "--", new), "remove the copy that was not put in place", root=root, timeout=30
    )


def guard_lines(step: Step, as_root: bool) -> list[str]:
    """How `plan` shows a guarded step: the check, then what runs when it passes."""
    dest = step.argv[-1]
    link = Step(("test", "-L", dest), "", root=step.root)
    check = Step(guard_probe(dest), "", root=step.root)
    optional = " [a failure is a warning]" if step.optional else ""
    out = [
        f"{shown(link, as_root)}    # a symbolic link is left as it is",
        f"{shown(check, as_root)}    # only tracebloc's own file"
        + (" (or none yet)" if step.kind in ("stage", "fetch") else "")
        + ": anything else is left as it is",
    ]
    if step.kind not in ("stage", "fetch"):
        return out + [f"{shown(step, as_root)}    # {step.why}{optional}"]
    new = dest + NEW_SUFFIX
    probe = Step(("cmp", "-s", compare_source(step), dest), "", root=step.root)
    written = Step((*step.argv[:-1], new), "", root=step.root)
    moved = Step(("mv", "-f", new, dest), "", root=step.root)
    return out + [
        f"{shown(probe, as_root)}    # unchanged: not rewritten",
        f"{shown(written, as_root)}    # {step.why}{optional}",
        f"{shown(moved, as_root)}    # put in place in one rename",
        f"{shown(discard(new, step.root), as_root)}    # only when the write or the "
        "rename failed: no copy is left beside the file",
    ]


def granted_line(user: str) -> str:
    """What the run records once the docker group membership of `user` was read back."""
    return f"{user} is in the {DOCKER_GROUP} group (read back with id)"
