"""Windows host preparation: what a machine needs before a local cluster can run, as a plan.

Pure. From one bounded probe (edges/winhost.py): steps, each with its exact argv and whether
it needs administrator rights, plus the blockers that stop the install before any change.
Docker Desktop answering as this user means no privileged step, but another daily user's
docker-users membership; every privileged step is confirmed once and run in one elevated
child of the engine (decide/elevation.py), the rest as the daily user.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from installer.decide import winget
from installer.decide.settings import env_number
from installer.decide.wslconfig import OS_RESERVE_GIB, wslconfig_gib
from installer.decide.yesno import flag

API_PORT = 6550  # the local cluster's API server (decide/localcluster.py binds 127.0.0.1:6550)
WSL_MIN_VERSION = "2.1.5"  # Docker Desktop's documented WSL minimum; TB_WSL_MIN_VERSION overrides
DOCKER_WAIT_MIN = 10.0  # a first Docker Desktop start on an AV-heavy laptop needs minutes
REBOOT_EXIT = 2  # a declared hand-off: "reboot, then the install continues"
# DISM's exit code for "done, a restart is required to finish".
DISM_REBOOT_RC = 3010

WSL_FEATURE = "Microsoft-Windows-Subsystem-Linux"
VM_PLATFORM = "VirtualMachinePlatform"
HYPER_V = "Microsoft-Hyper-V-All"
FEATURE_LABELS = {WSL_FEATURE: "WSL2", VM_PLATFORM: "Virtual Machine Platform", HYPER_V: "Hyper-V"}

DOCKER_DESKTOP_ARGS = "install --quiet --accept-license --backend=wsl-2 --always-run-service"
DOCKER_MANUAL = (
    "install Docker Desktop from https://www.docker.com/products/docker-desktop/ and re-run"
)


@dataclass(frozen=True)
class Listener:
    pid: int | None
    process: str = ""  # the owning process's name, when Windows says


@dataclass(frozen=True)
class WinFacts:
    """One read of the machine. `None` in a field: could not be told (never "no")."""

    readable: bool
    reason: str = ""
    admin: bool = False
    edition: str = ""  # the OS caption, "Microsoft Windows 11 Home"
    features: Mapping[str, str | None] = field(default_factory=dict)  # None: not on this edition
    virtualization: bool | None = None
    wsl_version: str = ""  # `wsl --version`'s output; "" when absent, legacy or timed out
    winget: bool = False
    docker_desktop: bool = False  # Docker Desktop.exe is installed
    docker_usable: bool = False  # `docker info` answers as this user
    docker_desktop_exe: str = r"C:\Program Files\Docker\Docker\Docker Desktop.exe"
    port_busy: bool | None = None
    port_owner: Listener | None = None
    our_cluster_running: bool | None = None  # the engine's k3d cluster owns the port
    host_memory_gib: int | None = None
    user: str = ""
    arch: str = "amd64"  # Docker's download path segment: amd64 or arm64
    in_docker_users: bool | None = None  # the daily user, when known
    temp_dir: str = ""  # this account's TEMP: where a missing winget is downloaded


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    argv: tuple[str, ...]  # what runs, exactly; () for a file the engine writes itself
    privileged: bool
    reboot: bool = False  # may leave a reboot pending
    fallback: tuple[str, ...] = ()  # run when argv exits non-zero


@dataclass(frozen=True)
class HostPlan:
    tier: int  # 0: nothing to do as administrator; 1: the privileged flow
    steps: tuple[Step, ...] = ()
    blockers: tuple[tuple[str, str], ...] = ()  # (what, what to do): stop before any change
    notes: tuple[str, ...] = ()
    wslconfig_gib: int = 0  # 0: leave .wslconfig's memory alone
    user: str = ""  # the daily user: whose profile, group and sign-in the plan prepares
    unread: bool = False  # the machine could not be read: nothing about it is known

    @property
    def privileged(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.privileged)

    @property
    def as_user(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if not s.privileged)

    @property
    def reboot_expected(self) -> bool:
        return any(s.reboot for s in self.steps)


@dataclass(frozen=True)
class Options:
    daily_user: str = ""  # -DailyUser / --daily-user; "" = the user running the engine
    no_reboot: bool = False
    skip_daily_user: bool = False  # TRACEBLOC_SKIP_DAILY_USER
    no_autostart: bool = False  # TRACEBLOC_NO_AUTOSTART
    wsl_min: str = WSL_MIN_VERSION
    docker_wait_s: float = DOCKER_WAIT_MIN * 60
    min_mem_gib: float = 5
    rec_mem_gib: float = 16


def options(
    env: Mapping[str, str],
    *,
    daily_user: str = "",
    no_reboot: bool = False,
    min_mem_gib: float = 5,
    wsl_min: str = WSL_MIN_VERSION,
) -> Options:
    """`wsl_min`: TB_WSL_MIN_VERSION, parsed by decide/settings.env_version."""
    minutes = env_number(env, "TB_DOCKER_WAIT_MIN", DOCKER_WAIT_MIN, zero_ok=False, most=24 * 60)
    return Options(
        daily_user=bare_user(daily_user),
        no_reboot=no_reboot,
        skip_daily_user=flag(env, "TRACEBLOC_SKIP_DAILY_USER"),
        no_autostart=flag(env, "TRACEBLOC_NO_AUTOSTART"),
        wsl_min=wsl_min,
        docker_wait_s=minutes * 60,
        min_mem_gib=min_mem_gib,
    )


def bare_user(name: str) -> str:
    """`CONTOSO\\jdoe` or `jdoe@contoso.com` → `jdoe` (an account name holds no `@`);
    control characters (a pasted escape sequence) removed."""
    cleaned = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x1f\x7f]", "", name)
    return cleaned.rsplit("\\", 1)[-1].split("@", 1)[0].strip()


def _version(text: str) -> tuple[int, ...] | None:
    match = re.search(r"\d+\.\d+\.\d+(?:\.\d+)?", text)
    return tuple(int(p) for p in match.group(0).split(".")) if match else None


def wsl_current(version_output: str, minimum: str) -> bool:
    """The first dotted version `wsl --version` prints (its labels are localised) is WSL's;
    current only when it is at least `minimum`. Absent, legacy or unreadable: not current."""
    seen, floor = _version(version_output), _version(minimum)
    if seen is None or floor is None:
        return False
    width = max(len(seen), len(floor))
    return seen + (0,) * (width - len(seen)) >= floor + (0,) * (width - len(floor))


def feature_argv(name: str) -> tuple[str, ...]:
    return ("dism.exe", "/online", "/enable-feature", f"/featurename:{name}", "/all", "/norestart")


def winget_steps(temp_dir: str) -> tuple[Step, ...]:
    """winget where it is missing: the pinned bundle, refused unless its SHA-256 is the published
    one, its signature checked, then Add-AppxPackage (decide/winget.py)."""
    path = winget.bundle_path(temp_dir)
    return (
        Step(
            "winget-download",
            f"download winget {winget.RELEASE} ({winget.URL}) to {path}; "
            f"refused unless its SHA-256 is {winget.SHA256}",
            (),
            True,
        ),
        Step(
            "winget-signature",
            f"check the bundle's signature: valid, and signed by {winget.SIGNER}",
            winget.signature_argv(path),
            True,
        ),
        Step(
            "winget-install",
            "install winget (App Installer) from the verified bundle",
            winget.install_argv(path),
            True,
        ),
    )


def docker_desktop_steps(facts: WinFacts) -> tuple[Step, ...]:
    """Docker Desktop through winget, installed first where it is missing."""
    if facts.docker_desktop or (not facts.winget and not facts.temp_dir):
        return ()
    argv = (
        "winget.exe",
        "install",
        "-e",
        "--id",
        "Docker.DockerDesktop",
        "--accept-package-agreements",
        "--accept-source-agreements",
        "--silent",
        "--override",
        DOCKER_DESKTOP_ARGS,
    )
    first = () if facts.winget else winget_steps(facts.temp_dir)
    return (*first, Step("docker-desktop", "install Docker Desktop (winget)", argv, True))


def _blockers(facts: WinFacts) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if (
        not facts.docker_usable
        and not facts.docker_desktop
        and not facts.winget
        and not facts.temp_dir
    ):
        found.append(
            (
                "Docker Desktop and winget are not installed, and this account's TEMP "
                "directory (where winget is downloaded) could not be read",
                DOCKER_MANUAL,
            )
        )
    if facts.virtualization is False:
        found.append(
            (
                "virtualization is disabled in firmware: Docker Desktop cannot run",
                "enable Intel VT-x / AMD SVM in the BIOS/UEFI setup (usually under Advanced -> CPU), "
                "then re-run; check in Task Manager -> Performance -> CPU: 'Virtualization: Enabled'. "
                "On a company device IT policy may lock this setting",
            )
        )
    if facts.port_busy and facts.our_cluster_running is False:
        owner = facts.port_owner
        who = (
            f"{owner.process or 'a process'} (pid {owner.pid})"
            if owner and owner.pid
            else "another process"
        )
        found.append(
            (
                f"port {API_PORT} is already in use by {who}: the local cluster's API server needs it",
                f"stop it (Get-Process -Id {owner.pid if owner and owner.pid else '<pid>'}; "
                f"Get-NetTCPConnection -LocalPort {API_PORT} -State Listen shows the owner), or "
                "'k3d cluster delete <name>' if it is a leftover k3d cluster, then re-run",
            )
        )
    return found


def plan_host(facts: WinFacts, opts: Options) -> HostPlan:
    if not facts.readable:
        return HostPlan(
            1,
            unread=True,
            blockers=(
                (
                    f"could not read this Windows machine: {facts.reason}",
                    "run the installer again; if it persists, run it with "
                    "--verbose and send the log",
                ),
            ),
        )
    blockers = tuple(_blockers(facts))
    notes: list[str] = []
    if facts.port_busy and facts.our_cluster_running is None:
        notes.append(
            f"port {API_PORT} is in use and the local cluster's state could not be "
            "read; the cluster step will start or repair it, or report the conflict"
        )
    user = opts.daily_user or facts.user
    # Another account's profile (-DailyUser) is written in the elevated window.
    other = bool(user) and user.lower() != facts.user.lower()
    if facts.docker_usable:
        # Docker works for this account; another daily user still needs docker-users, and
        # with it (once: the membership read back ends it) their VM size and sign-in start.
        joins = other and not opts.skip_daily_user and facts.in_docker_users is False
        if other and not opts.skip_daily_user and facts.in_docker_users is None:
            notes.append(
                f"whether '{user}' is in docker-users could not be read, so nothing is done as "
                f"administrator; if they are not: net localgroup docker-users {user} /add"
            )
        if not joins:
            return HostPlan(0, blockers=blockers, notes=tuple(notes), user=user)
        joined = tuple(_daily_user_steps(facts, opts, user, notes, other=True))
        return HostPlan(1, joined, blockers, tuple(notes), _gib(facts, opts), user)
    steps: list[Step] = []
    home = "Home" in facts.edition
    wanted = [WSL_FEATURE, VM_PLATFORM] + ([] if home else [HYPER_V])
    for name in wanted:
        state = facts.features.get(name, "")
        if state == "Enabled":
            continue
        if state is None:
            notes.append(
                f"{FEATURE_LABELS[name]} is not available on this Windows edition "
                f"({facts.edition}): skipped"
            )
            continue
        steps.append(
            Step(
                f"feature:{name}",
                f"enable {FEATURE_LABELS[name]}",
                feature_argv(name),
                True,
                reboot=True,
            )
        )
    if not wsl_current(facts.wsl_version, opts.wsl_min):
        steps.append(
            Step(
                "wsl-update",
                f"update WSL (to at least {opts.wsl_min})",
                ("wsl.exe", "--update", "--web-download"),
                True,
                fallback=("wsl.exe", "--update"),
            )
        )
    steps.append(
        Step(
            "wsl-default", "make WSL 2 the default", ("wsl.exe", "--set-default-version", "2"), True
        )
    )
    steps += docker_desktop_steps(facts)
    steps += _daily_user_steps(facts, opts, user, notes, other=other)
    if not facts.docker_usable:
        steps.append(
            Step(
                "docker-start",
                "start Docker Desktop and wait for its engine "
                f"(at most {opts.docker_wait_s / 60:g} min)",
                start_docker_argv(facts.docker_desktop_exe),
                False,
            )
        )
    return HostPlan(1, tuple(steps), blockers, tuple(notes), _gib(facts, opts), user)


def _gib(facts: WinFacts, opts: Options) -> int:
    return wslconfig_gib(facts.host_memory_gib, opts.min_mem_gib, opts.rec_mem_gib)


def _daily_user_steps(
    facts: WinFacts, opts: Options, user: str, notes: list[str], *, other: bool
) -> list[Step]:
    """The daily user's docker-users membership, Docker VM size and sign-in start."""
    steps: list[Step] = []
    if not opts.skip_daily_user and user and facts.in_docker_users is not True:
        steps.append(
            Step(
                "docker-users",
                f"add '{user}' to docker-users",
                ("net.exe", "localgroup", "docker-users", user, "/add"),
                True,
            )
        )
    gib = _gib(facts, opts)
    if gib == 0 and facts.host_memory_gib is not None:
        notes.append(
            f"this machine has {facts.host_memory_gib} GiB of memory, too little for a "
            f"{opts.min_mem_gib:g} GiB Docker VM plus ~{OS_RESERVE_GIB} GiB for Windows: "
            ".wslconfig is left as it is"
        )
    if gib:
        steps.append(
            Step(
                "wslconfig",
                f"size the Docker VM: memory={gib}GB in {user}'s .wslconfig "
                "(unless a memory is already set)",
                (),
                other,
            )
        )
    if not opts.no_autostart:
        # Another account's Startup shortcut is made where its profile is found, when it runs.
        run_key = () if other else autostart_argv(facts.docker_desktop_exe)
        steps.append(
            Step("autostart", f"start Docker Desktop when {user} signs in", run_key, other)
        )
    return steps


def autostart_argv(exe: str) -> tuple[str, ...]:
    """This user's Run key: Docker Desktop starts at their sign-in."""
    run = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run"
    return ("reg.exe", "add", run, "/v", "Docker Desktop", "/t", "REG_SZ", "/d", f'"{exe}"', "/f")


def start_docker_argv(exe: str) -> tuple[str, ...]:
    # `start` returns at once: Docker Desktop keeps running after the engine's call ends.
    return ("cmd.exe", "/d", "/c", "start", '""', exe)
