"""The macOS runtime flow, as a list of steps. Pure.

A stopped runtime is started with no privileges (`open -a Docker`, `colima start`).
Otherwise: an administrator check, Homebrew when missing, then Docker Desktop (its DMG's
SHA-256 checked) with a desktop session, colima on a headless Mac.
"""

from __future__ import annotations

import plistlib
import shlex
from collections.abc import Mapping

from installer.decide.arch import go_arch
from installer.decide.docker_desktop_mac import CHIP, quit_wedged, replace_steps, wrong_chip
from installer.decide.runtime import PRIVILEGED, STAGED, Facts, RuntimePlan, Step, sudo_prime

DMG_URL = "https://desktop.docker.com/mac/main/{arch}/Docker.dmg"
HOMEBREW_URL = "https://raw.githubusercontent.com/Homebrew/install/HEAD/install.sh"
FIRST_START_WAIT_S = 360  # a first start
START_WAIT_S = 240
BREW_TIMEOUT_S = 900
HOMEBREW_TIMEOUT_S = 1800
AUTOSTART_LABEL = "io.tracebloc.runtime"
AMD64_SMOKE = ("docker", "run", "--rm", "--platform", "linux/amd64", "busybox:1.36", "true")
OS_RESERVE_GIB = 2
REC_MEM_GIB = 16  # the recommended VM memory
MIN_MEM_GIB = 5


def not_admin() -> tuple[str, str]:
    return (
        "this Mac account is not an administrator, and installing Docker on macOS needs "
        "administrator rights",
        "ask your IT/admin to grant this account administrator rights (System Settings > "
        'Users & Groups > this user > "Allow this user to administer this computer") '
        "and run again as yourself, or to run the installer from their own administrator "
        "account on this Mac",
    )


def supports_vz(version: str) -> bool:
    """Apple's Virtualization.framework (colima --vm-type vz, Rosetta): macOS 13 or later."""
    major = version.split(".", 1)[0]
    return major.isdigit() and int(major) >= 13


def colima_memory(facts: Facts) -> str:
    """COLIMA_MEMORY, else half the Mac's memory, at most the
    recommendation, at least 1 GiB above the floor, never more than the Mac minus 2 GiB."""
    given = facts.colima.get("COLIMA_MEMORY", "").strip()
    if given:
        return given
    physical = int(facts.memory_gib)
    if physical <= 0:
        return "6"
    budget = max(min(physical // 2, min(REC_MEM_GIB, physical)), MIN_MEM_GIB + 1)
    return str(max(min(budget, physical - OS_RESERVE_GIB), 1))


def colima_start_args(facts: Facts) -> tuple[str, ...]:
    args = [
        "colima",
        "start",
        "--cpu",
        facts.colima.get("COLIMA_CPU", "").strip() or "4",
        "--memory",
        colima_memory(facts),
        "--disk",
        facts.colima.get("COLIMA_DISK", "").strip() or "60",
    ]
    # colima refuses to change the VM type of an existing instance: only a fresh one.
    if facts.arch == "arm64" and supports_vz(facts.macos_version) and not facts.colima_instance:
        args += ["--vm-type", "vz", "--vz-rosetta"]
    return tuple(args)


def brew_path(arch: str) -> str:
    """Where Homebrew's installer puts `brew` on this processor."""
    return ("/opt/homebrew" if arch == "arm64" else "/usr/local") + "/bin/brew"


def shellenv_line(arch: str) -> str:
    """What puts Homebrew (and what it installed) on a new terminal's PATH: `brew shellenv`,
    as Homebrew's own installer tells its user."""
    return f'eval "$({brew_path(arch)} shellenv)"'


def _brew_notes(facts: Facts) -> tuple[str, ...]:
    if "brew" in facts.tools:
        return ()
    return (
        f"Homebrew was installed in {brew_path(facts.arch).rsplit('/bin/', 1)[0]}; to have "
        f"it (and what it installed) in new terminals run: {shellenv_line(facts.arch)} "
        "(add it to ~/.zprofile to keep it)",
    )


def decide_macos(facts: Facts) -> RuntimePlan:
    wait = Step(
        ("docker", "info", "--format", "{{json .}}"),
        "wait until Docker answers",
        root=False,
        kind="wait-docker",
        timeout=START_WAIT_S,
    )
    # Stopped: started as this user, nothing installed, no administrator.
    wrong = wrong_chip(facts) and facts.gui is not False
    if facts.docker_cli and facts.docker_app and facts.gui is not False and not wrong:
        start = Step(("open", "-a", "Docker"), "start Docker Desktop", root=False, timeout=30)
        return RuntimePlan(PRIVILEGED, "docker-stopped", (*quit_wedged(facts), start, wait))
    if facts.docker_cli and facts.colima_instance and "colima" in facts.tools:
        return RuntimePlan(
            PRIVILEGED,
            "docker-stopped",
            (Step(("colima", "start"), "start colima", root=False, timeout=BREW_TIMEOUT_S), wait),
        )
    if facts.admin is False:
        return RuntimePlan(PRIVILEGED, "not-admin", refusal=not_admin())
    steps: list[Step] = [*sudo_prime(facts)]
    # A Homebrew this plan installs is not on PATH yet (on Apple Silicon it lives in
    # /opt/homebrew, which no default PATH has): it is run by its absolute path.
    brew = "brew" if "brew" in facts.tools else brew_path(facts.arch)
    if "brew" not in facts.tools:
        steps.append(
            Step(
                ("env", "NONINTERACTIVE=1", "/bin/bash", STAGED),
                "install Homebrew",
                root=False,
                kind="fetch",
                url=HOMEBREW_URL,
                timeout=HOMEBREW_TIMEOUT_S,
            )
        )
    if facts.gui is False:
        if not facts.docker_cli:
            steps.append(
                Step(
                    (brew, "install", "docker"),
                    "install the Docker CLI",
                    root=False,
                    timeout=BREW_TIMEOUT_S,
                )
            )
        if "colima" not in facts.tools:
            steps.append(
                Step(
                    (brew, "install", "colima"),
                    "install colima (no desktop session here for Docker Desktop)",
                    root=False,
                    timeout=BREW_TIMEOUT_S,
                )
            )
        steps += [
            Step(colima_start_args(facts), "start colima", root=False, timeout=BREW_TIMEOUT_S),
            wait,
        ]
        return RuntimePlan(PRIVILEGED, "docker-missing", tuple(steps), notes=_brew_notes(facts))
    url = DMG_URL.format(arch=go_arch(facts.arch) or "amd64")
    if wrong and not facts.trash_target:
        return RuntimePlan(
            PRIVILEGED,
            "docker-wrong-chip",
            refusal=(
                f"{facts.docker_app_path} is built for another chip than this "
                f"{CHIP.get(facts.arch, facts.arch)} Mac",
                f"move it to the Trash, install Docker Desktop for this Mac ({url}), then run "
                "the installer again",
            ),
        )
    steps += [*replace_steps(facts)]
    steps += [
        Step(
            ("hdiutil", "attach", STAGED, "-nobrowse", "-quiet", "-mountpoint", "/Volumes/Docker"),
            "open Docker Desktop's disk image (SHA-256 checked)",
            root=False,
            kind="fetch",
            url=url,
            check=f"sha256-from:{url.rsplit('/', 1)[0]}/checksums.txt",
            timeout=900,
        ),
        Step(
            ("cp", "-R", "/Volumes/Docker/Docker.app", "/Applications/"),
            "copy Docker Desktop to /Applications",
            root=False,
            timeout=600,
        ),
        Step(
            ("xattr", "-cr", "/Applications/Docker.app"),
            "clear the download quarantine",
            root=False,
            optional=True,
        ),
        Step(
            ("hdiutil", "detach", "/Volumes/Docker", "-quiet"),
            "close the disk image",
            root=False,
            optional=True,
        ),
        Step(
            ("open", "-a", "Docker"),
            "start Docker Desktop (approve its helper and licence in the window it opens)",
            root=False,
            timeout=30,
        ),
        Step(wait.argv, wait.why, root=False, kind="wait-docker", timeout=FIRST_START_WAIT_S),
    ]
    reason = "docker-wrong-chip" if wrong else "docker-missing"
    return RuntimePlan(PRIVILEGED, reason, tuple(steps), notes=_brew_notes(facts))


def needs_amd64_check(arch: str, mysql_engine: str) -> bool:
    """Only an Apple Silicon Mac whose install resolves
    to the amd64-only MySQL 5.7 image needs amd64 emulation proven before the cluster (its
    skip, TRACEBLOC_ALLOW_ARM64, is not carried: MIGRATION)."""
    return arch == "arm64" and mysql_engine == "5.7"


AMD64_SMOKE_TIMEOUT_S = 120.0
DOCKER_FAILED_RC = 125  # `docker run` itself failed (the daemon, the image pull): no container ran


def amd64_verdict(rc: int | None, output: str) -> str:
    """What the smoke run shows: "ok", "broken" (failed, or exec-format error), "timeout" (`rc`
    None), "unknown" (Docker failed before a container ran: no evidence either way)."""
    if rc is None:
        return "timeout"
    if rc == 0:
        return "ok"
    if rc == DOCKER_FAILED_RC and "exec format error" not in output.lower():
        return "unknown"
    return "broken"


def amd64_refusal() -> tuple[str, str]:
    return (
        "amd64 emulation does not work on this Apple Silicon Mac, and this install uses "
        "the amd64-only MySQL 5.7 image: it would crash-loop",
        'Docker Desktop: Settings > General > enable "Use Rosetta for x86_64/amd64 '
        'emulation" and restart Docker; colima: colima delete && colima start --vm-type '
        "vz --vz-rosetta; then run the installer again",
    )


LAUNCH_DAEMONS = "/Library/LaunchDaemons"
# The scripts' test seam (setup-macos.sh's TB_LAUNCHDAEMONS_DIR), honoured the same way.
LAUNCH_DAEMONS_SEAM = "TB_LAUNCHDAEMONS_DIR"
BOOT_PATH = "/usr/local/bin:/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin"


def launch_daemons_dir(env: Mapping[str, str]) -> str:
    return env.get(LAUNCH_DAEMONS_SEAM, "").strip() or LAUNCH_DAEMONS


def colima_path(facts: Facts) -> str:
    """colima's absolute path: where it is, else where Homebrew puts it on this processor
    (/opt/homebrew on Apple Silicon, /usr/local on Intel). launchd runs no shell: a bare
    name would not be found at boot."""
    if facts.colima_path:
        return facts.colima_path
    return ("/opt/homebrew" if facts.arch == "arm64" else "/usr/local") + "/bin/colima"


def launch_agent(home: str, colima: str = "") -> bytes:
    """The login autostart: a LaunchAgent that starts the runtime when this user logs in
    (`open -a Docker`, or `colima start`), so a rebooted Mac comes back with the client."""
    program = [colima, "start"] if colima else ["/usr/bin/open", "-a", "Docker"]
    log = f"{home}/Library/Logs/tracebloc-autostart.log"
    return plistlib.dumps(
        {
            "Label": AUTOSTART_LABEL,
            "ProgramArguments": program,
            "RunAtLoad": True,
            "StandardOutPath": log,
            "StandardErrorPath": log,
        }
    )


def launch_daemon(home: str, user: str, colima: str) -> bytes:
    """The boot autostart of a headless Mac (a LaunchAgent loads only in a desktop login,
    which a headless Mac never has): launchd starts colima at boot as `user`, with HOME and
    a PATH colima's helpers need, retrying after a stale VM state as the scripts did."""
    boot = (
        f"tries=0; until {shlex.quote(colima)} start; do tries=$((tries+1)); "
        f"if [ $tries -ge 3 ]; then exit 1; fi; {shlex.quote(colima)} stop --force; "
        "sleep 15; done"
    )
    log = f"{home}/Library/Logs/tracebloc-autostart.log"
    return plistlib.dumps(
        {
            "Label": AUTOSTART_LABEL,
            "ProgramArguments": ["/bin/bash", "-c", boot],
            "RunAtLoad": True,
            "UserName": user,
            "EnvironmentVariables": {"HOME": home, "PATH": BOOT_PATH},
            "StandardOutPath": log,
            "StandardErrorPath": log,
        }
    )


def autostart_steps(
    home: str,
    uid: int,
    colima: str = "",
    *,
    headless: bool = False,
    user: str = "",
    daemons: str = LAUNCH_DAEMONS,
) -> tuple[Step, ...]:
    """A desktop Mac: the LaunchAgent, as this user. A headless one: the LaunchDaemon under
    `daemons`, as root, loaded into the system domain (colima's absolute path in it). Each
    best-effort, as the scripts': the reboot line reads what is in place afterwards."""
    if headless:
        path = f"{daemons}/{AUTOSTART_LABEL}.plist"
        return (
            Step(
                ("install", "-m", "0755", "-d", f"{home}/Library/Logs"),
                "a directory for the autostart's log",
                root=False,
                optional=True,
            ),
            Step(
                ("install", "-m", "0755", "-d", daemons),
                "the boot daemons' directory",
                optional=True,
            ),
            Step(
                ("install", "-m", "0644", STAGED, path),
                "start colima at boot (a LaunchDaemon: no login needed)",
                kind="stage",
                optional=True,
                content=launch_daemon(home, user, colima).decode(),
            ),
            Step(("launchctl", "bootstrap", "system", path), "register it now", optional=True),
        )
    path = f"{home}/Library/LaunchAgents/{AUTOSTART_LABEL}.plist"
    return (
        Step(
            ("install", "-m", "0755", "-d", f"{home}/Library/LaunchAgents", f"{home}/Library/Logs"),
            "directories for the login autostart",
            root=False,
            optional=True,
        ),
        Step(
            ("install", "-m", "0644", STAGED, path),
            "start the runtime at login",
            root=False,
            kind="stage",
            optional=True,
            content=launch_agent(home, colima).decode(),
        ),
        Step(
            ("launchctl", "bootstrap", f"gui/{uid}", path),
            "register it now",
            root=False,
            optional=True,
        ),
    )
