"""The Windows host preparation end to end with fake Windows tools that log every call (powershell,
wsl, dism, winget, net, reg, cmd, shutdown, docker, k3d, kubectl, helm: tests/fakes/fake_tool.py,
`.exe` programs on Windows): a laptop whose Docker does not answer gets a plan listing every
privileged step and runs none of them; `install` then elevates once (the exact Start-Process
argv), and after the elevated half the daily user's half runs (.wslconfig, autostart, Docker
Desktop's first start) and the install goes on to the cluster.

The CLI takes the Windows branch only on Windows (sys.platform), so the process-level tests run
on the workflow's Windows leg (`test (windows-latest, …)`, which runs the whole suite). The same
scenario, with the same fake executables and the same assertions on their calls, runs
everywhere through the flow the CLI calls (commands/winhost.py's `survey` and `prepare`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from installer.commands import winhost as flow
from installer.decide import elevation
from installer.decide import winhost as wh
from installer.decide.errors import InstallerError
from installer.decide.redact import Redactor
from installer.edges import winhost as edge
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, installer_command
from tests.fakes.localcluster import GIB, creatable, machine_without_cluster
from tests.test_cli_install import PASSWORD, env_for, fresh

ON_WINDOWS = pytest.mark.skipif(
    sys.platform != "win32",
    reason="the CLI takes the Windows host branch only on Windows; "
    "test_the_same_laptop_through_the_flow_the_cli_calls runs this scenario everywhere",
)
DESKTOP = "docker-desktop-installed"  # the mark the elevated half sets
WINDOWS_TOOLS = ("powershell", "wsl", "dism", "winget", "net", "reg", "cmd", "shutdown")
PRIVILEGED = ["wsl-update", "wsl-default", "docker-desktop", "docker-users"]


def engine() -> tuple[str, list[str]]:
    """How the engine under test starts itself again (commands/winhost.engine_command)."""
    command = installer_command()
    return command[0], command[1:]


def elevation_script(exe: str, prefix: list[str]) -> str:
    return elevation.elevate_argv(exe, [*prefix, "prepare-host", "--windows-elevated"])[-1]


def probe(cluster: FakeCluster, **overrides: object) -> dict[str, object]:
    """The machine's probe as edges/winhost.py reads it: Windows 11 Pro, WSL's features on,
    16 GiB, winget, no Docker Desktop, the nurse not an administrator (`overrides` change it)."""
    return {
        "features": {wh.WSL_FEATURE: 1, wh.VM_PLATFORM: 1, wh.HYPER_V: 1},
        "admin": False,
        "user": "nurse",
        "edition": "Microsoft Windows 11 Pro",
        "memory_kib": 16 * 2**20,
        "virtualization": True,
        "winget": True,
        "docker_desktop": False,
        "port_busy": False,
        "temp": str(cluster.root / "temp"),
        "docker_desktop_exe": r"C:\Program Files\Docker\Docker\Docker Desktop.exe",
        **overrides,
    }


def windows_laptop(cluster: FakeCluster, data_dir: Path, exe: str, prefix: list[str]) -> None:
    """Windows 11 Pro with WSL's features on but WSL stale, winget present, no Docker Desktop:
    Docker does not answer until the elevated half (a rule here) has installed it."""
    creatable(machine_without_cluster(fresh(cluster)))
    for tool in WINDOWS_TOOLS:
        cluster.install(tool)
        cluster.on(tool, rc=0)  # anything not scripted below succeeds, and is logged
    cluster.on("powershell", rc=9)  # an unscripted script fails loudly
    cluster.on("wsl", "--version", rc=1)  # legacy WSL: no --version
    cluster.on("powershell", edge.PROBE_SCRIPT, stdout=json.dumps(probe(cluster)))
    cluster.on("powershell", edge.members_script("docker-users"), rc=3)  # no such group yet
    # The elevated engine's record, as a real elevated `prepare-host` would leave it.
    record = {
        "schema": 1,
        "consented": True,
        "done": PRIVILEGED,
        "reboot_pending": False,
        "failed": [],
    }
    cluster.on(
        "powershell",
        elevation_script(exe, prefix),
        mark=DESKTOP,
        write=[(str(data_dir / flow.STATE_FILE), json.dumps(record))],
    )
    down = {"ServerErrors": ["error during connect: open //./pipe/dockerDesktopLinuxEngine"]}
    cluster.on("docker", "info", stdout=json.dumps(down), rc=1)
    info = {
        "MemTotal": 16 * GIB,
        "NCPU": 8,
        "OperatingSystem": "Docker Desktop",
        "Runtimes": {"runc": {}},
        "ServerErrors": None,
    }
    cluster.on("docker", "info", stdout=json.dumps(info), after=DESKTOP)
    cluster.on("docker", "update", stdout="ok\n")


def windows_calls(cluster: FakeCluster) -> list[list[str]]:
    return [[e["tool"], *e["argv"]] for e in cluster.call_log() if e["tool"] in WINDOWS_TOOLS]


def elevations(cluster: FakeCluster) -> list[list[str]]:
    return [c for c in windows_calls(cluster) if c[0] == "powershell" and "-Verb RunAs" in c[-1]]


def the_daily_users_half(cluster: FakeCluster, profile: Path) -> None:
    """After the elevation: the Docker VM sized, autostart, Docker Desktop started and waited for."""
    made = windows_calls(cluster)
    after = made[made.index(elevations(cluster)[0]) + 1 :]
    assert [
        "reg",
        "add",
        r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run",
        "/v",
        "Docker Desktop",
        "/t",
        "REG_SZ",
        "/d",
        r'"C:\Program Files\Docker\Docker\Docker Desktop.exe"',
        "/f",
    ] in after
    assert [
        "cmd",
        "/d",
        "/c",
        "start",
        '""',
        r"C:\Program Files\Docker\Docker\Docker Desktop.exe",
    ] in after
    assert (profile / ".wslconfig").read_bytes() == b"[wsl2]\r\nmemory=14GB\r\n"
    # None of the privileged steps ran in this (the daily user's) process.
    assert not [c for c in made if c[0] in ("dism", "winget", "net")]


@ON_WINDOWS
def test_plan_lists_every_privileged_step_and_runs_none(cluster: FakeCluster) -> None:
    exe, prefix = engine()
    windows_laptop(cluster, cluster.home / ".tracebloc", exe, prefix)
    result = cluster.run("plan", "--json", USERNAME="nurse")

    assert result.returncode == 0, result.stderr
    changes = json.loads(result.stdout)["changes"]
    admin = [c["argv"] for c in changes if c["why"].startswith("as administrator")]
    assert admin == [
        ["wsl.exe", "--update", "--web-download"],
        ["wsl.exe", "--set-default-version", "2"],
        [
            "winget.exe",
            "install",
            "-e",
            "--id",
            "Docker.DockerDesktop",
            "--accept-package-agreements",
            "--accept-source-agreements",
            "--silent",
            "--override",
            wh.DOCKER_DESKTOP_ARGS,
        ],
        ["net.exe", "localgroup", "docker-users", "nurse", "/add"],
    ]
    assert elevations(cluster) == []
    assert [c[0] for c in windows_calls(cluster)] == ["powershell", "wsl", "powershell"]  # reads


@ON_WINDOWS
def test_install_elevates_once_then_runs_the_daily_users_half_and_connects(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    exe, prefix = engine()
    windows_laptop(cluster, cluster.home / ".tracebloc", exe, prefix)
    result = cluster.run("install", "--yes", **env_for(backend, USERNAME="nurse"))

    assert result.returncode == 0, result.stderr
    assert "installed and connected" in result.stdout
    [elevation] = elevations(cluster)
    assert elevation == [
        "powershell",
        "-NoProfile",
        "-NonInteractive",
        "-Command",
        elevation_script(exe, prefix),
    ]
    the_daily_users_half(cluster, cluster.home)
    order = [e["tool"] for e in cluster.call_log()]
    assert order.index("cmd") < order.index("k3d")  # Docker Desktop first, then the cluster
    assert all(PASSWORD not in " ".join(e["argv"]) for e in cluster.call_log())


def test_the_same_laptop_through_the_flow_the_cli_calls(cluster: FakeCluster) -> None:
    """The Windows tests' scenario and assertions on any OS: commands/winhost.py's survey (what
    the plan lists) and prepare (what install runs after the confirmation)."""
    exe, prefix = r"C:\tb\tracebloc-installer.exe", flow.engine_command()[1]
    data = cluster.root / "data"
    windows_laptop(cluster, data, exe, prefix)
    env = cluster.env(
        USERNAME="nurse",
        USERPROFILE=str(cluster.home),
        TB_DOCKER_WAIT_MIN="0.5",
        TRACEBLOC_CLIENT_PASSWORD=PASSWORD,
    )
    opts = flow.options(env)
    _, plan = flow.survey(
        env, opts, Redactor([PASSWORD]), our_cluster_running=False, docker_usable=False
    )
    assert [s.key for s in plan.privileged] == PRIVILEGED
    assert elevations(cluster) == []

    said: list[str] = []
    before = len(windows_calls(cluster))
    flow.prepare(
        exe,
        env,
        opts,
        Redactor([PASSWORD]),
        str(data),
        ask=None,
        say=said.append,
        our_cluster_running=False,
    )
    [elevation] = elevations(cluster)
    assert elevation == [
        "powershell",
        "-NoProfile",
        "-NonInteractive",
        "-Command",
        elevation_script(exe, prefix),
    ]
    the_daily_users_half(cluster, cluster.home)
    assert "Docker Desktop is running" in said
    # What ran is what the plan listed, argv for argv: the elevation carries the privileged
    # steps to the elevated process; every other change is a step's own command.
    ran = windows_calls(cluster)[before:]
    reads = (["wsl", "--version"], ["wsl", "--status"], ["wsl", "-l"])
    read_scripts = ("Get-LocalGroupMember", "[ordered]@{ features")  # the machine, the group

    def is_read(call: list[str]) -> bool:
        if call[0] == "powershell":
            return any(mark in call[-1] for mark in read_scripts)
        return any(call[: len(r)] == r for r in reads)

    made = [c for c in ran if c != elevation and not is_read(c)]
    listed = [[a[0].removesuffix(".exe"), *a[1:]] for a in (s.argv for s in plan.steps) if a]
    assert made and all(call in listed for call in made), (made, listed)
    assert all(PASSWORD not in " ".join(e["argv"]) for e in cluster.call_log())


def it_admins_machine(cluster: FakeCluster, exe: str) -> tuple[dict[str, str], Path]:
    """Docker Desktop works for it-admin, who runs the installer for the nurse (not yet in
    docker-users, signed in once: a profile); the nurse's membership reads back once added."""
    data = cluster.root / "data"
    windows_laptop(cluster, data, exe, flow.engine_command()[1])
    it = probe(cluster, admin=True, user="it-admin", docker_desktop=True)
    cluster.on("powershell", edge.PROBE_SCRIPT, stdout=json.dumps(it))
    cluster.on("powershell", edge.members_script("docker-users"), stdout="PC\\it-admin\n")
    cluster.on(
        "powershell", edge.members_script("docker-users"), stdout="PC\\nurse\n", after="joined"
    )
    cluster.on("net", "localgroup", "docker-users", "nurse", "/add", mark="joined")
    running = {"MemTotal": 16 * GIB, "NCPU": 8, "OperatingSystem": "Docker Desktop"}
    running.update(Runtimes={"runc": {}}, ServerErrors=None)
    cluster.on("docker", "info", stdout=json.dumps(running))
    drive = cluster.root / "drive"
    nurse = drive / "Users" / "nurse"
    nurse.mkdir(parents=True)
    env = {
        "USERNAME": "it-admin",
        "USERPROFILE": str(cluster.home),
        "SystemDrive": str(drive),
        "TRACEBLOC_DAILY_USER": "nurse",
        "TB_DOCKER_WAIT_MIN": "0.05",
    }
    return env, nurse


def test_it_runs_it_for_a_nurse_where_docker_desktop_already_works(cluster: FakeCluster) -> None:
    """Docker Desktop works for the administrator running the installer; the daily user
    (-DailyUser nurse) is let into docker-users, gets a sized .wslconfig and a Startup
    shortcut, in this (elevated) process, as listed; a re-run then prepares nothing."""
    exe = r"C:\tb\tracebloc-installer.exe"
    given, nurse = it_admins_machine(cluster, exe)
    env, data = cluster.env(**given), cluster.root / "data"
    opts = flow.options(env)
    _, plan = flow.survey(env, opts, Redactor(), our_cluster_running=False, docker_usable=True)
    assert [s.key for s in plan.steps] == ["docker-users", "wslconfig", "autostart"]
    before = len(windows_calls(cluster))
    said: list[str] = []
    flow.prepare(
        exe, env, opts, Redactor(), str(data), ask=None, say=said.append, our_cluster_running=False
    )
    ran = windows_calls(cluster)[before:]
    assert elevations(cluster) == []  # already administrator: no second window
    assert ["net", "localgroup", "docker-users", "nurse", "/add"] in ran
    assert (nurse / ".wslconfig").read_bytes() == b"[wsl2]\r\nmemory=14GB\r\n"
    [shortcut] = [c for c in ran if c[0] == "powershell" and "CreateShortcut" in c[-1]]
    assert str(nurse) in shortcut[-1] and "Docker Desktop.lnk" in shortcut[-1]
    assert (cluster.home / ".wslconfig").exists() is False  # the administrator's own is untouched
    made = [c for c in ran if c != ["wsl", "--version"] and not _a_read(c)]
    assert made == [["net", "localgroup", "docker-users", "nurse", "/add"], shortcut]
    assert "done: add 'nurse' to docker-users" in said
    # Read back: nurse is a member now, so a re-run lists nothing and runs nothing.
    _, again = flow.survey(env, opts, Redactor(), our_cluster_running=False, docker_usable=True)
    assert again.tier == 0 and again.steps == ()


def _a_read(call: list[str]) -> bool:
    """The machine's probe and the docker-users membership: PowerShell reads, no change."""
    return call[0] == "powershell" and (
        call[-1] == edge.PROBE_SCRIPT or call[-1] == edge.members_script("docker-users")
    )


@ON_WINDOWS
def test_plan_lists_the_nurses_docker_users_step_where_docker_desktop_works(
    cluster: FakeCluster,
) -> None:
    given, _ = it_admins_machine(cluster, engine()[0])
    result = cluster.run("plan", "--json", **given)

    assert result.returncode == 0, result.stderr
    changes = json.loads(result.stdout)["changes"]
    admin = [c["argv"] for c in changes if c["why"].startswith("as administrator")]
    assert ["net.exe", "localgroup", "docker-users", "nurse", "/add"] in admin
    assert elevations(cluster) == []
    assert [c for c in windows_calls(cluster) if c[0] == "net"] == []


def test_a_docker_blip_after_the_question_runs_nothing_unlisted(cluster: FakeCluster) -> None:
    """The list held the nurse's steps (Docker answered); Docker Desktop then stops answering
    (an update restarts it): prepare, called as install calls it, runs only what was
    listed, or stops; it never sets up WSL or starts Docker Desktop unasked."""
    exe = r"C:\tb\tracebloc-installer.exe"
    given, nurse = it_admins_machine(cluster, exe)
    env, data = cluster.env(**given), cluster.root / "data"
    opts = flow.options(env)
    _, plan = flow.survey(env, opts, Redactor(), our_cluster_running=False, docker_usable=True)
    listed = tuple(step.key for step in plan.steps)
    cluster.on("docker", "info", stdout=json.dumps({"ServerErrors": ["connect"]}), rc=1)
    before = len(windows_calls(cluster))
    flow.prepare(
        exe,
        env,
        opts,
        Redactor(),
        str(data),
        ask=None,
        say=lambda _: None,
        our_cluster_running=False,
        listed=listed,
        docker_usable=True,
    )
    made = [c for c in windows_calls(cluster)[before:] if c != ["wsl", "--version"]]
    made = [c for c in made if not _a_read(c)]
    assert [c[0] for c in made] == ["net", "powershell"]  # the add and the Startup shortcut
    # Read as Docker not answering, the machine needs WSL's steps too: not listed, a stop.
    with pytest.raises(InstallerError, match="needs to update WSL.*not in the list"):
        flow.prepare(
            exe,
            env,
            opts,
            Redactor(),
            str(data),
            ask=None,
            say=lambda _: None,
            our_cluster_running=False,
            listed=listed,
            docker_usable=False,
        )
    assert [c for c in windows_calls(cluster)[before:] if c[0] in ("dism", "winget", "cmd")] == []
