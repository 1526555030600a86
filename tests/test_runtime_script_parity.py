"""The engine's root commands against the bash twin's, for the same machine.

The twin's own functions (`setup_pm`, `apt_wait_for_lock`, `install_docker_engine` from
tracebloc/client `scripts/lib/setup-linux.sh` with `common.sh`) run in bash against the same
fakes as the engine (tests/fakes/runtime_host.py), read from the twin's repository when it is
on this machine (never copied here). Both sides' root calls become effects (a package
installed, a unit enabled or started, a user granted, a module loaded, a file written), and
the effects must be equal except for DIFFERENCES, each explained in MIGRATION.md ("The
container runtime (Docker)", deliberate differences).

The twin runs with PATH holding only the fakes and a few harmless real tools (grep, mktemp,
…): no real package manager, systemctl or modprobe can be reached, and its drop-in
directory is redirected into the test's directory.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.executables import make_executable
from tests.fakes.localcluster import creatable, machine_without_cluster
from tests.fakes.runtime_host import GRANTEE, linux_host, root_calls, sysroot
from tests.test_cli_install import env_for, fresh

TWIN_REPO = Path("/work/.mirror/tracebloc+client/repo")
MIGRATION = Path(__file__).resolve().parent.parent / "MIGRATION.md"
SAFE = (
    "bash",
    "sh",
    "grep",
    "mktemp",
    "chmod",
    "rm",
    "cat",
    "find",
    "uname",
    "readlink",
    "mkdir",
    "tail",
    "cp",
    "sed",
    "sleep",
    "date",
    "basename",
    "dirname",
    "tr",
    "printf",
    "head",
)
PROXY = "http://proxy.corp:3128"

ID = """import sys
argv = sys.argv[1:]
print({"-u": "1000", "-un": "ana", "-nG": "ana", "-Gn": "ana"}.get(argv[0] if argv else "", "ana"))
"""

HARNESS = r"""
source "$TWIN/common.sh"
source "$TWIN/setup-linux.sh"
export PATH="$FAKE_PATH"
spin_cmd() { shift; "$@"; }
spin_cmd_bounded() { shift 2; "$@"; }
retry() { shift 2; "$@"; }
curl_secure() { local out=""; while [ $# -gt 0 ]; do [ "$1" = "-o" ] && out="$2"; shift; done
                printf 'cp "%s" "%s"\n' "$FAKE_DOCKER" "$FAKE_BIN/docker" > "$out"; }
log() { :; }; info() { :; }; success() { :; }; hint() { :; }; warn() { echo "warn: $*" >&2; }
error() { echo "error: $*" >&2; exit 1; }
[ -n "${TIER0:-}" ] && INSTALL_TIER=0
_route_install_tier
[ "${INSTALL_TIER:-}" = 0 ] && exit 0  # install_linux's tier-0 return: nothing privileged
setup_pm
apt_wait_for_lock
if [ -n "${PREPARE:-}" ]; then
  TB_PREPARE_HOST_MODE=1 install_docker_engine
  sudo usermod -aG docker "$TB_PREPARE_USER"
else
  install_docker_engine
fi
"""

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime step"),
    pytest.mark.skipif(
        not (TWIN_REPO / "HEAD").exists(), reason="the twin's repository is not here"
    ),
]


def twin_scripts(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for name in ("common.sh", "setup-linux.sh"):
        text = subprocess.run(
            ["git", f"--git-dir={TWIN_REPO}", "show", f"HEAD:scripts/lib/{name}"],
            capture_output=True,
            check=True,
        ).stdout
        (where / name).write_bytes(text)
    return where


def run_twin(cluster: FakeCluster, env: dict[str, str], **extra: str) -> None:
    twin_bin = cluster.root / "twin-bin"
    twin_bin.mkdir(exist_ok=True)
    for tool in SAFE:
        found = shutil.which(tool)
        if found and not (twin_bin / tool).exists():
            (twin_bin / tool).symlink_to(found)
    make_executable(twin_bin / "id", ID)
    docker = make_executable(cluster.root / "docker-to-install", cluster.program("docker"))
    cluster.install("tee")
    cluster.on("tee", stdout="")
    run_env = {
        **cluster.env(**env, **extra),
        "TWIN": str(twin_scripts(cluster.root / "twin")),
        "TB_DOCKER_DROPIN_DIR": str(cluster.root / "twin-dropin"),
        "USER": "ana",
        "FAKE_PATH": f"{cluster.bin}:{twin_bin}",
        "FAKE_DOCKER": str(docker),
        "FAKE_BIN": str(cluster.bin),
    }
    subprocess.run(
        [shutil.which("bash") or "/bin/bash", "-c", HARNESS],
        env=run_env,
        cwd=cluster.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def effects(calls: list[list[str]], dropin: str = "") -> set[str]:
    """What each root call leaves on the machine, the same way for both sides."""
    out: set[str] = set()
    for argv in calls:
        argv = argv[3:] if argv[:1] == ["env"] else argv
        if dropin:
            argv = [a.replace(dropin, "/etc/systemd/system/docker.service.d") for a in argv]
        head = argv[0] if argv else ""
        if head == "modprobe":
            out |= {f"module {m}" for m in argv[1:] if m != "-a"}
        elif head == "tee":
            out.add(f"write {argv[-1]}")
        elif head == "install" and "-d" not in argv and not argv[-1].endswith(".tracebloc-new"):
            out.add(f"write {argv[-1]}")
        elif head == "mv":  # the engine's atomic write: the new file renamed over the old
            out.add(f"write {argv[-1]}")
        elif head == "rm":
            out.add(f"remove {argv[-1]}")
        elif head == "systemctl" and argv[1:2] in (["is-active"], ["status"]):
            continue  # reads
        elif head in ("systemctl", "usermod"):
            out.add(" ".join(a for a in argv if a != "--"))  # the engine's `usermod … -- NAME`
        elif head in ("apt-get", "dnf", "yum", "zypper", "pacman", "bash") and (
            "install" in argv or "-S" in argv or head == "bash"
        ):
            out.add(
                "package "
                + " ".join(
                    a for a in argv[1:] if not a.startswith("-") and "=" not in a and a != "install"
                )
            )
    return out


def engine_effects(
    cluster: FakeCluster, backend: BackendServer, command: str, env: dict[str, str], **extra: str
) -> set[str]:
    if command == "prepare-host":
        result = cluster.run("prepare-host", **env, **extra)
    else:
        result = cluster.run("install", "--yes", **env_for(backend, **env, **extra))
    assert result.returncode == 0, result.stderr
    return effects(root_calls(cluster))


DOCKER_CE = "package docker-ce docker-ce-cli containerd.io"
APT_REPO = {
    "write /etc/apt/keyrings/docker.asc",
    "write /etc/apt/sources.list.d/docker.list",
    "package ca-certificates",
}
RPM_REPO = {"write /etc/yum.repos.d/docker-ce.repo", "write /etc/pki/rpm-gpg/docker-ce.asc"}
# Every root call both sides make and the engine's extras the twin has not, by scenario:
# (only the twin, only the engine). Each is in MIGRATION.md's deliberate differences.
SCENARIOS = {
    "debian": ("debian", "install", "missing", {}),
    "ubuntu": ("ubuntu", "install", "missing", {}),
    "fedora": ("fedora", "install", "missing", {}),
    "rhel-9": ("rhel9", "install", "missing", {}),
    "rocky-9": ("rocky9", "install", "missing", {}),
    "amazon-linux-2023": ("amzn2023", "install", "missing", {}),
    "arch": ("arch", "install", "missing", {}),
    "opensuse": ("opensuse", "install", "missing", {}),
    "proxy-set": ("ubuntu", "install", "missing", {"HTTPS_PROXY": PROXY}),
    "stopped": ("debian", "install", "stopped", {}),
    "tier-0": ("ubuntu", "install", "running", {}),
    # A drop-in an earlier run wrote (the twin's marker), the proxy unset since.
    "stale-proxy-dropin": ("debian", "install", "stopped", {}),
    "prepare-host": ("ubuntu", "prepare-host", "missing", {"TB_PREPARE_USER": GRANTEE}),
}
SIGNED = {  # the signed repository instead of get.docker.com (or dnf config-manager)
    "apt": ({"package"}, APT_REPO | {DOCKER_CE}),
    "rpm": ({"package"}, RPM_REPO | {DOCKER_CE}),
    # the twin added dnf-plugins-core for `dnf config-manager --add-repo`
    "rebuild": ({"package dnf-plugins-core"}, RPM_REPO),
}
DIFFERENCES = {
    "debian": SIGNED["apt"],
    "ubuntu": SIGNED["apt"],
    # `try-restart` restarts only a running daemon: the twin asked `is-active` first.
    "proxy-set": (SIGNED["apt"][0], SIGNED["apt"][1] | {"systemctl try-restart docker"}),
    "prepare-host": SIGNED["apt"],
    "fedora": SIGNED["rpm"],
    "rhel-9": SIGNED["rpm"],
    "rocky-9": SIGNED["rebuild"],
    # A Docker the engine starts is enabled at boot too (scripts/lib/cluster.sh did it there).
    "stopped": (set(), {"systemctl enable docker"}),
    "stale-proxy-dropin": (set(), {"systemctl try-restart docker", "systemctl enable docker"}),
}
STALE = '# Managed by tracebloc installer (#244)\n[Service]\nEnvironment="HTTP_PROXY=http://gone:3128"\n'


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_engine_runs_as_root_what_the_scripts_ran(
    tmp_path: Path, backend: BackendServer, name: str
) -> None:
    distro, command, docker, extra = SCENARIOS[name]
    twin = FakeCluster(tmp_path / "twin")
    twin_env = linux_host(twin, distro, docker=docker, sudo="nopw", etc_tools=False)
    if name == "stale-proxy-dropin":
        (twin.root / "twin-dropin").mkdir()
        (twin.root / "twin-dropin" / "http-proxy.conf").write_text(STALE, encoding="utf-8")
    run_twin(
        twin,
        twin_env,
        PREPARE="1" if command == "prepare-host" else "",
        TIER0="1" if docker == "running" else "",
        **extra,
    )
    twin_effects = effects(root_calls(twin), str(twin.root / "twin-dropin"))
    engine = FakeCluster(tmp_path / "engine")
    if command == "install":
        creatable(machine_without_cluster(fresh(engine)))
    engine_env = linux_host(engine, distro, docker=docker, sudo="nopw")
    if name == "stale-proxy-dropin":
        dropin = sysroot(engine) / "etc/systemd/system/docker.service.d/http-proxy.conf"
        dropin.parent.mkdir(parents=True)
        dropin.write_text(STALE, encoding="utf-8")
    engine_side = engine_effects(engine, backend, command, engine_env, **extra)

    # The twin's get.docker.com script runs as `bash <tempfile>`: one effect, named once.
    twin_effects = {
        ("package" if e.startswith("package ") and "/tmp" in e else e) for e in twin_effects
    }
    only_twin, only_engine = DIFFERENCES.get(name, (set(), set()))
    assert twin_effects - engine_side == only_twin, f"twin did, engine not: {sorted(engine_side)}"
    assert engine_side - twin_effects == only_engine - twin_effects, "engine did, twin not"
    if docker == "running":
        assert twin_effects == engine_side == set()  # tier 0: nothing privileged on either side


def test_every_difference_is_in_migration() -> None:
    text = MIGRATION.read_text(encoding="utf-8")
    for phrase in ("get.docker.com", "dnf config-manager", "9DC8 5822 9FC7 DD38", "0600"):
        assert phrase in text, phrase
