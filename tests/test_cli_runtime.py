"""The container-runtime step as a process: `prepare-host`, `plan` and `install` on a Linux
machine made of fakes (tests/fakes/runtime_host.py) — what ran as root, in which order, the
files left under /etc with their modes, and what a tier-0 machine is spared."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from installer.decide import openpgp
from tests.fakes import runtime_host
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, installer_command
from tests.fakes.localcluster import creatable, machine_without_cluster
from tests.fakes.runtime_host import (
    DOCKER_CE_APT,
    GRANTEE,
    KERNEL_MODULE_NAMES,
    RUNNING,
    STARTED,
    linux_host,
    root_calls,
    sysroot,
)
from tests.test_cli_install import env_for, fresh

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime step")

PROXY = "http://ana:s3cr%t@proxy.corp:3128"


def mode(path: os.PathLike[str] | str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def detached(cluster: FakeCluster, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """The CLI with no controlling terminal at all (CI, cloud-init, ssh without one): a
    session of its own, whatever terminal the tests run in."""
    return subprocess.run(
        [*installer_command(), *args],
        env=cluster.env(**extra),
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
        check=False,
    )


def commands(cluster: FakeCluster) -> list[str]:
    return [" ".join(argv[:4]) for argv in root_calls(cluster)]


# --- prepare-host -----------------------------------------------------------------------------


def test_prepare_host_on_debian_installs_from_dockers_signed_repository_and_grants_the_user(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "debian")
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, HTTPS_PROXY=PROXY, **env)

    assert result.returncode == 0, result.stderr
    calls = root_calls(cluster)
    assert calls[0] == ["sudo", "-v"]  # the one password prompt, before any root command
    assert DOCKER_CE_APT in calls
    assert ["usermod", "-aG", "docker", "--", GRANTEE] in calls
    assert calls.index(["systemctl", "start", "docker"]) > calls.index(DOCKER_CE_APT)
    etc = sysroot(cluster) / "etc"
    assert (
        (etc / "apt/keyrings/docker.asc")
        .read_bytes()
        .startswith(b"# Managed by tracebloc installer\n-----BEGIN PGP PUBLIC KEY")
    )
    assert (
        "signed-by=/etc/apt/keyrings/docker.asc] https://download.docker.com/linux/debian "
        "bookworm stable" in (etc / "apt/sources.list.d/docker.list").read_text()
    )
    dropin = etc / "systemd/system/docker.service.d/http-proxy.conf"
    assert (
        mode(dropin) == 0o600
        and 'HTTPS_PROXY=http://ana:s3cr%%t@proxy.corp:3128"' in dropin.read_text()
    )
    assert (etc / "modules-load.d/tracebloc.conf").read_text().split()[0] == "overlay"
    # The password never reached a command line, the output or the log.
    assert all("s3cr%t" not in " ".join(e["argv"]) for e in cluster.call_log())
    assert "s3cr" not in result.stdout + result.stderr
    assert f"{GRANTEE} can now install" in result.stdout
    # Nothing of an install: no cluster, no helm, no kubectl.
    assert not any(e["tool"] in ("k3d", "helm", "kubectl") for e in cluster.call_log())


@pytest.mark.parametrize(
    ("distro", "install"),
    [
        pytest.param("ubuntu", DOCKER_CE_APT, id="ubuntu"),
        pytest.param(
            "fedora",
            ["dnf", "-y", "-q", "install", "docker-ce", "docker-ce-cli", "containerd.io"],
            id="fedora",
        ),
        pytest.param(
            "rhel9",
            ["dnf", "-y", "-q", "install", "docker-ce", "docker-ce-cli", "containerd.io"],
            id="rhel-9",
        ),
        pytest.param(
            "rocky9",
            ["dnf", "-y", "-q", "install", "docker-ce", "docker-ce-cli", "containerd.io"],
            id="rocky-9",
        ),
        pytest.param("amzn2023", ["dnf", "install", "-y", "docker"], id="amazon-linux-2023"),
        pytest.param("arch", ["pacman", "-S", "--noconfirm", "docker"], id="arch"),
        pytest.param("opensuse", ["zypper", "install", "-y", "docker"], id="opensuse"),
    ],
)
def test_prepare_host_installs_docker_per_distribution(
    cluster: FakeCluster, distro: str, install: list[str]
) -> None:
    env = linux_host(cluster, distro)
    result = cluster.run("prepare-host", "--json", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    calls = root_calls(cluster)
    assert install in calls
    assert ["systemctl", "enable", "docker"] in calls and [
        "usermod",
        "-aG",
        "docker",
        "--",
        GRANTEE,
    ] in calls
    assert json.loads(result.stdout)["user"] == GRANTEE
    if distro in ("fedora", "rhel9", "rocky9"):
        repo = (sysroot(cluster) / "etc/yum.repos.d/docker-ce.repo").read_text()
        assert "gpgcheck=1" in repo


def test_prepare_host_as_the_old_flag_at_any_position(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "ubuntu", docker="stopped", sudo="nopw")
    result = cluster.run("--force", "--prepare-host", **env)
    assert result.returncode == 0, result.stderr
    assert ["systemctl", "start", "docker"] in root_calls(cluster)
    assert ["sudo", "-v"] not in root_calls(cluster)  # no password needed: none asked


def test_a_key_that_is_not_dockers_is_never_installed(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "debian")
    env["TB_TEST_DOCKER_APT_KEY_FPR"] = "0" * 40
    result = cluster.run("prepare-host", **env)

    assert result.returncode == 1
    assert "fingerprint" in result.stderr and "not installed" in result.stderr
    assert not (sysroot(cluster) / "etc/apt/keyrings/docker.asc").exists()
    assert not any(c[:1] == ["env"] and "docker-ce" in c for c in root_calls(cluster))


def test_a_wrong_password_stops_with_a_clear_message_before_any_root_command(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "ubuntu", password_ok=False)
    result = cluster.run("prepare-host", **env)

    assert result.returncode == 1
    assert "sudo authentication failed" in result.stderr
    assert root_calls(cluster) == [["sudo", "-v"]]


def test_the_test_seams_are_refused_without_each_other(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "ubuntu")
    del env["TRACEBLOC_TOOLS_MIRROR"]
    result = cluster.run("prepare-host", **env)
    assert result.returncode == 2 and "for tests only" in result.stderr


# --- plan and install -------------------------------------------------------------------------


def test_plan_lists_every_root_command_and_runs_none(cluster: FakeCluster) -> None:
    machine_without_cluster(fresh(cluster))
    env = linux_host(cluster, "ubuntu", docker="missing")
    result = detached(cluster, "plan", "--json", HTTPS_PROXY=PROXY, **env)

    # With no terminal for sudo's password, install would stop: so does plan, listing all.
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["verdict"]["action"] == "blocked"
    runtime = json.loads(result.stdout)["local_cluster"]["runtime"]
    assert runtime["reason"] == "docker-missing" and runtime["grant_user"] == "ana"
    shown = runtime["commands"]
    assert shown[0].startswith("sudo -v")
    assert any(
        line.startswith(
            "sudo -n env DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a apt-get install"
        )
        and "docker-ce" in line
        for line in shown
    )
    assert any(line.startswith("sudo -n usermod -aG docker -- ana") for line in shown)
    assert any(line.startswith("id -nG -- ana") for line in shown)  # the grant read back
    assert any(
        line.startswith(
            "sudo -n install -m 0600 /dev/stdin "
            "/etc/systemd/system/docker.service.d/http-proxy.conf"
        )
        for line in shown
    )
    assert "s3cr" not in result.stdout
    # Reads only: `sudo -n true` (does sudo need a password?) is the one sudo call.
    assert [e["argv"] for e in cluster.call_log() if e["tool"] == "sudo"] == [["-n", "true"]]
    assert not (sysroot(cluster) / "etc").exists()


def test_tier_0_runs_no_privileged_step_at_all(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="running")
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    tools = {e["tool"] for e in cluster.call_log()}
    assert not tools & {"sudo", "apt-get", "usermod", "install", "modprobe", "sg"}
    # systemctl only read, as the user: is Docker enabled at boot (the reboot line).
    assert [e["argv"] for e in cluster.call_log() if e["tool"] == "systemctl"] == [
        ["is-enabled", "docker"]
    ]


def boot_state(cluster: FakeCluster, enabled: bool) -> None:
    """systemctl's answer to is-enabled, as the real one gives it (disabled: exit 1), and
    enabled once `systemctl enable docker` ran."""
    cluster.on(
        "systemctl",
        "is-enabled",
        stdout="enabled\n" if enabled else "disabled\n",
        rc=0 if enabled else 1,
    )
    cluster.on("systemctl", "enable", "docker", mark="boot-enabled")
    cluster.on("systemctl", "is-enabled", stdout="enabled\n", after="boot-enabled")


def test_a_docker_the_engine_starts_is_enabled_at_boot_and_the_summary_says_so(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    boot_state(cluster, enabled=False)
    planned = cluster.run("plan", **env)
    assert planned.returncode == 0, planned.stderr
    assert "sudo -n systemctl enable docker" in planned.stdout
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    calls = root_calls(cluster)
    assert ["systemctl", "enable", "docker"] in calls
    assert calls.index(["systemctl", "enable", "docker"]) < calls.index(
        ["systemctl", "start", "docker"]
    )
    assert result.stdout.rstrip().splitlines()[-1] == (
        "After a reboot, tracebloc restarts automatically (Docker starts at boot; the "
        "cluster's containers restart with it)."
    )


def test_an_already_enabled_docker_is_not_enabled_again(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    boot_state(cluster, enabled=True)
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    assert ["systemctl", "enable", "docker"] not in root_calls(cluster)
    assert "restarts automatically" in result.stdout.splitlines()[-1]


def test_tier_0_with_docker_disabled_at_boot_says_how_to_bring_it_back(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="running")
    boot_state(cluster, enabled=False)
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    assert not any(e["tool"] == "sudo" for e in cluster.call_log())  # tier 0: nothing privileged
    assert result.stdout.rstrip().splitlines()[-1] == (
        "After a reboot, start Docker to bring tracebloc back: sudo systemctl start docker "
        "(to make it automatic: sudo systemctl enable docker)"
    )


def test_a_laptop_without_docker_goes_to_a_connected_client_in_one_run(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    from tests.fakes.terminal import Pty

    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="missing")
    # sudo asks for its password on the terminal, so the person runs this in one.
    term = Pty.start(
        [*installer_command(), "install", "--yes"],
        cwd=cluster.root,
        env=cluster.env(**env_for(backend, **env)),
    )
    try:
        code = term.wait(timeout=90)
        screen = term.screen()
    finally:
        term.close()

    assert code == 0, screen
    assert "installed and connected" in screen
    calls = root_calls(cluster)
    assert calls.count(["sudo", "-v"]) == 1 and calls[0] == ["sudo", "-v"]
    assert DOCKER_CE_APT in calls and ["usermod", "-aG", "docker", "--", "ana"] in calls
    order = [e["tool"] for e in cluster.call_log()]
    # Docker first (root), then the cluster as the user: k3d through the new group (sg).
    assert order.index("apt-get") < order.index("k3d") and "sg" in order
    assert not any(e["tool"] == "sudo" and "k3d" in e["argv"] for e in cluster.call_log())
    sg_calls = [e["argv"] for e in cluster.call_log() if e["tool"] == "sg"]
    assert any("cluster create" in argv[-1] for argv in sg_calls)


def test_sudo_that_needs_a_password_with_no_terminal_stops_before_credentials_are_sent(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="missing")
    runs = {
        verb: detached(cluster, *verb.split(), **env_for(backend, **env))
        for verb in ("install --yes", "plan --json")
    }

    install = runs["install --yes"]
    assert install.returncode == 1, install.stderr
    assert "sudo needs a password and there is no terminal to type it on" in install.stderr
    assert backend.requests == []  # the credentials were never sent
    assert [e["argv"] for e in cluster.call_log() if e["tool"] == "sudo"] == [["-n", "true"]] * 2
    verdict = json.loads(runs["plan --json"].stdout)["verdict"]
    assert (verdict["action"], verdict["exit"]) == ("blocked", 1)
    assert "no terminal to type it on" in verdict["reason"]
    assert runs["plan --json"].returncode == 1


@pytest.mark.parametrize(
    ("docker", "unable", "said"),
    [
        pytest.param(
            "stopped", "systemctl", "this machine has no systemd to start it with", id="no-systemd"
        ),
        pytest.param(
            "missing",
            "os-release",
            "cannot install Docker on this distribution (gentoo) by itself",
            id="unknown-distribution",
        ),
    ],
)
def test_a_docker_the_engine_cannot_start_or_install_stops_before_credentials_are_sent(
    cluster: FakeCluster, backend: BackendServer, docker: str, unable: str, said: str
) -> None:
    """Known without credentials, so said before them: nothing sent, nothing run as root,
    no question; `plan --json` gives the same verdict and exit."""
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "debian", docker=docker, sudo="nopw")
    if unable == "systemctl":
        cluster.remove("systemctl")
    else:
        (cluster.root / "os-release").write_text('NAME="Gentoo"\nID=gentoo\n', encoding="utf-8")

    install = cluster.run("install", "--yes", **env_for(backend, **env))
    plan = cluster.run("plan", "--json", **env_for(backend, **env))

    assert install.returncode == 1, install.stderr
    assert said in install.stderr, install.stderr
    assert backend.requests == []  # the credentials were never sent
    assert root_calls(cluster) == []
    assert not [a for a in cluster.calls("k3d") if a[:2] == ["cluster", "create"]]
    verdict = json.loads(plan.stdout)["verdict"]
    assert (verdict["action"], verdict["exit"], plan.returncode) == ("blocked", 1, 1)
    assert said in verdict["reason"]


def test_docker_stopped_is_started_and_nothing_is_installed(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    calls = root_calls(cluster)
    assert ["systemctl", "start", "docker"] in calls
    assert not any(c[0] in ("apt-get", "env", "dnf") for c in calls)


def test_installed_but_not_in_the_group_is_granted_and_goes_on_without_a_new_login(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="denied", sudo="nopw")
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    assert ["usermod", "-aG", "docker", "--", "ana"] in root_calls(cluster)
    assert not any(c[0] in ("apt-get", "env") for c in root_calls(cluster))
    # Docker runs, but may be restarted in this run or after a reboot: the modules are
    # loaded now and listed for boot all the same.
    assert ["modprobe", "-a", *KERNEL_MODULE_NAMES] in root_calls(cluster)
    modules = sysroot(cluster) / "etc/modules-load.d/tracebloc.conf"
    assert modules.read_text().split() == list(KERNEL_MODULE_NAMES)
    assert any(e["tool"] == "sg" and "k3d" in e["argv"][-1] for e in cluster.call_log())


def test_a_sudo_wrapped_install_is_refused_before_anything(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = linux_host(cluster, "ubuntu", docker="running")
    env["TB_TEST_RUNTIME_USER"] = "root:0"
    result = cluster.run("install", "--yes", **env_for(backend, SUDO_USER="ana", **env))

    assert result.returncode == 1
    assert "don't run the installer with sudo" in result.stderr and "prepare-host" in result.stderr
    assert cluster.call_log() == []
    assert not (cluster.home / ".tracebloc").exists()


def test_prepare_host_run_with_sudo_runs_directly_and_never_grants_the_administrator(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "ubuntu", docker="stopped")
    env["TB_TEST_RUNTIME_USER"] = "root:0"
    result = cluster.run("prepare-host", SUDO_USER="admin", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    assert not any(e["tool"] == "sudo" for e in cluster.call_log())  # already root
    direct = [[e["tool"], *e["argv"]] for e in cluster.call_log()]
    assert ["usermod", "-aG", "docker", "--", GRANTEE] in direct
    assert ["systemctl", "start", "docker"] in direct
    assert not any("admin" in " ".join(call) for call in direct)


# --- the Docker daemon's proxy drop-in from an earlier run --------------------------------------

DROPIN = "etc/systemd/system/docker.service.d/http-proxy.conf"
OURS = (
    '# Managed by tracebloc installer (#244)\n[Service]\nEnvironment="HTTP_PROXY=http://old:3128"\n'
)
FOREIGN = '[Service]\nEnvironment="HTTP_PROXY=http://it-managed:8080"\n'


def earlier_dropin(cluster: FakeCluster, text: str) -> os.PathLike[str]:
    path = sysroot(cluster) / DROPIN
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o644)  # the twin's was world-readable
    return path


def test_a_drop_in_an_earlier_run_left_is_removed_once_the_proxy_is_unset(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    path = earlier_dropin(cluster, OURS)
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    assert not os.path.exists(path)
    calls = root_calls(cluster)
    removed = calls.index(["rm", "-f", "/" + DROPIN])
    assert (
        calls.index(["grep", "-qxE", r"# Managed by tracebloc installer( \(#244\))?", "/" + DROPIN])
        < removed
    )
    assert (
        removed
        < calls.index(["systemctl", "daemon-reload"])
        < calls.index(["systemctl", "try-restart", "docker"])
    )


def test_a_proxy_drop_in_someone_else_wrote_is_left_as_it_is(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    path = earlier_dropin(cluster, FOREIGN)
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    assert open(path, encoding="utf-8").read() == FOREIGN
    assert "was not written by tracebloc: left as it is" in result.stdout + result.stderr
    calls = root_calls(cluster)
    assert not any(c[:1] in (["rm"], ["mv"]) for c in calls)
    # Nothing of ours changed: the daemon is neither reloaded nor restarted for it.
    assert ["systemctl", "daemon-reload"] not in calls and [
        "systemctl",
        "try-restart",
        "docker",
    ] not in calls


def test_a_foreign_drop_in_is_not_overwritten_when_a_proxy_is_set(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    path = earlier_dropin(cluster, FOREIGN)
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, HTTPS_PROXY=PROXY, **env)

    assert result.returncode == 0, result.stderr
    assert open(path, encoding="utf-8").read() == FOREIGN
    assert "left as it is, so it is not rewritten" in result.stdout + result.stderr


def test_our_drop_in_with_a_changed_proxy_is_rewritten_owner_only_in_one_rename(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    path = earlier_dropin(cluster, OURS)
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, HTTPS_PROXY=PROXY, **env)

    assert result.returncode == 0, result.stderr
    text = open(path, encoding="utf-8").read()
    assert (
        "http://old:3128" not in text and 'HTTPS_PROXY=http://ana:s3cr%%t@proxy.corp:3128"' in text
    )
    assert mode(path) == 0o600
    assert not os.path.exists(str(path) + ".tracebloc-new")
    calls = root_calls(cluster)
    new = "/" + DROPIN + ".tracebloc-new"
    written = next(i for i, c in enumerate(calls) if c[:1] == ["install"] and c[-1] == new)
    assert calls[written][:3] == ["install", "-m", "0600"]
    assert calls.index(["mv", "-f", new, "/" + DROPIN]) == written + 1
    assert calls.index(["systemctl", "try-restart", "docker"]) > written
    assert all("s3cr%t" not in " ".join(e["argv"]) for e in cluster.call_log())


def sudo_refusing(cluster: FakeCluster, refused: str, said: str) -> None:
    """sudo, but `sudo -n <refused...>` (a Python expression over `argv`, sudo's own
    arguments after -n) fails with `said`; everything else reaches the fake sudo."""
    from tests.fakes.executables import make_executable

    real = cluster.bin / "sudo-real"
    os.replace(cluster.bin / "sudo", real)
    make_executable(
        cluster.bin / "sudo",
        "import os, sys\n"
        "argv = sys.argv[2:] if sys.argv[1:2] == ['-n'] else None\n"
        f"if argv is not None and ({refused}):\n"
        f"    sys.stderr.write({said!r} + '\\n')\n"
        "    sys.exit(1)\n"
        f"os.execv(sys.executable, [sys.executable, {str(real)!r}, *sys.argv[1:]])\n",
    )


def test_a_sudo_that_refuses_the_guards_check_is_not_read_as_someone_elses_file(
    cluster: FakeCluster,
) -> None:
    # `sudo -n` refusing exits 1, as grep does for a file without the marker: that is no
    # evidence of whose the file is, so nothing may be said about its author.
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    path = earlier_dropin(cluster, OURS)
    sudo_refusing(
        cluster,
        "argv[:1] in (['grep'], ['test'])",  # the guard's reads
        "sudo: a password is required",
    )
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    said = result.stdout + result.stderr
    assert open(path, encoding="utf-8").read() == OURS  # nothing was removed blind
    assert "was not written by tracebloc: left" not in said, said
    assert "(it could not be read)" in said, said


def test_a_rename_that_fails_leaves_the_drop_in_as_it_was_and_no_copy_beside_it(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    path = earlier_dropin(cluster, OURS)
    sudo_refusing(
        cluster,
        "argv[:1] == ['mv']",  # the rename that puts the new drop-in in place
        "mv: cannot move: Read-only file system",
    )
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, HTTPS_PROXY=PROXY, **env)

    assert result.returncode != 0
    assert "Read-only file system" in result.stderr, result.stderr
    assert open(path, encoding="utf-8").read() == OURS
    assert not os.path.exists(str(path) + ".tracebloc-new")  # the owner-only copy is gone
    new = "/" + DROPIN + ".tracebloc-new"
    calls = root_calls(cluster)  # what reached the real sudo: the refused mv never did
    written = next(i for i, c in enumerate(calls) if c[:1] == ["install"] and c[-1] == new)
    assert calls.index(["rm", "-f", "--", new]) > written


def test_dockers_budget_is_read_again_once_the_engine_started_it(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    small = json.dumps({**json.loads(RUNNING), "MemTotal": 2**30})
    cluster.on("docker", "info", stdout=small, after=STARTED)
    result = cluster.run(
        "install",
        "--yes",
        **env_for(
            backend, TRACEBLOC_SKIP_PREFLIGHT="0", PF_MIN_DISK_GB="0", PF_MIN_MEM_GB="4", **env
        ),
    )

    assert result.returncode == 1
    assert "Docker, now running, has less memory than the client needs" in result.stderr
    assert "Docker's memory budget: 1.0 GiB total, the client needs at least 4 GiB" in result.stderr
    assert ["systemctl", "start", "docker"] in root_calls(cluster)
    assert not any(e["tool"] == "k3d" and "create" in e["argv"] for e in cluster.call_log())


def test_free_disk_is_measured_on_dockers_data_root_too(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    # /dev/shm: another filesystem than the data directory, as /var/lib/docker often is.
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="running")
    cluster.on(
        "docker", "info", stdout=json.dumps({**json.loads(RUNNING), "DockerRootDir": "/dev/shm"})
    )
    result = cluster.run(
        "install",
        "--yes",
        **env_for(backend, TRACEBLOC_SKIP_PREFLIGHT="0", PF_MIN_DISK_GB="100000", **env),
    )

    assert result.returncode == 1
    assert "free on Docker's data root /dev/shm, the client needs at least" in result.stderr


# --- what the engine trusts: the apt key, the dnf repository ----------------------------------


def second_key(tmp_path: os.PathLike[str], armor: bool) -> bytes:
    from tests.fakes.debian_repo import export, gpg_key

    home = Path(tmp_path) / "gnupg"
    return export(home, gpg_key(home, "not docker"), armor=armor)


@pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed")
@pytest.mark.parametrize(
    "armor",
    [
        pytest.param(True, id="armored-block-appended"),
        pytest.param(False, id="binary-key-appended"),
    ],
)
def test_a_key_file_that_also_carries_a_second_key_is_never_installed(
    cluster: FakeCluster,
    tmp_path: os.PathLike[str],
    armor: bool,
) -> None:
    env = linux_host(cluster, "debian")
    served = cluster.root / "mirror/download.docker.com/linux/debian/gpg"
    docker = served.read_bytes() if armor else openpgp.dearmor(served.read_bytes())
    served.write_bytes(docker + second_key(tmp_path, armor))
    result = cluster.run("prepare-host", **env)

    assert result.returncode == 1, result.stderr
    assert "is not one OpenPGP key alone" in result.stderr and "not installed" in result.stderr
    assert not (sysroot(cluster) / "etc/apt/keyrings/docker.asc").exists()
    assert not (sysroot(cluster) / "etc/apt/sources.list.d/docker.list").exists()
    assert not any("docker-ce" in c for c in root_calls(cluster))


def test_a_mirror_never_decides_what_dnf_trusts(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "fedora")
    (cluster.root / "mirror/download.docker.com/linux/fedora/docker-ce.repo").write_text(
        "[docker-ce-stable]\nname=evil\nbaseurl=http://evil.example/fedora\ngpgcheck=0\n",
        encoding="utf-8",
    )
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    repo = (sysroot(cluster) / "etc/yum.repos.d/docker-ce.repo").read_text(encoding="utf-8")
    assert repo.startswith("# Managed by tracebloc installer\n[docker-ce-stable]\n")
    assert "gpgcheck=1\n" in repo and "gpgcheck=0" not in repo and "evil" not in repo
    assert "baseurl=https://download.docker.com/linux/fedora/$releasever/$basearch/stable\n" in repo
    assert [
        "dnf",
        "-y",
        "-q",
        "install",
        "docker-ce",
        "docker-ce-cli",
        "containerd.io",
    ] in root_calls(cluster)


# --- an administrator's files are kept --------------------------------------------------------

CORP_SOURCE = (
    "deb [signed-by=/etc/apt/keyrings/corp.gpg] https://mirror.corp.example/docker "
    "bookworm stable\n"
)


def etc_file(
    cluster: FakeCluster, path: str, text: str | None = None, *, link: str | None = None
) -> Path:
    where = sysroot(cluster) / path.lstrip("/")
    where.parent.mkdir(parents=True, exist_ok=True)
    if link is not None:
        where.symlink_to(link)
    else:
        where.write_text(text or "", encoding="utf-8")
    return where


def test_an_administrators_apt_source_is_kept_and_docker_installed_from_it(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "debian")
    source = etc_file(cluster, "/etc/apt/sources.list.d/docker.list", CORP_SOURCE)
    etc_file(cluster, "/etc/apt/keyrings/corp.gpg", "the company's key")
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    assert source.read_text(encoding="utf-8") == CORP_SOURCE
    assert (
        "# kept: /etc/apt/sources.list.d/docker.list (not written by tracebloc): Docker is "
        "installed from the repository it names" in result.stdout + result.stderr
    )
    assert not (sysroot(cluster) / "etc/apt/keyrings/docker.asc").exists()
    calls = root_calls(cluster)
    assert DOCKER_CE_APT in calls
    assert not any(
        c[-1].startswith("/etc/apt/sources.list.d/docker.list")
        for c in calls
        if c[0] in ("install", "mv")
    )


def test_an_administrators_dnf_repository_is_kept(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "rocky9")
    theirs = "[docker-ce-stable]\nbaseurl=https://mirror.corp.example/docker\ngpgcheck=1\n"
    repo = etc_file(cluster, "/etc/yum.repos.d/docker-ce.repo", theirs)
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    assert repo.read_text(encoding="utf-8") == theirs
    assert "# kept: /etc/yum.repos.d/docker-ce.repo" in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("distro", "path", "extra"),
    [
        pytest.param("debian", "/etc/apt/sources.list.d/docker.list", {}, id="apt-source"),
        pytest.param("fedora", "/etc/yum.repos.d/docker-ce.repo", {}, id="dnf-repository"),
        pytest.param("debian", "/" + DROPIN, {"HTTPS_PROXY": PROXY}, id="proxy-drop-in"),
    ],
)
def test_a_dangling_link_where_the_engine_would_write_stops_before_any_root_command(
    cluster: FakeCluster,
    distro: str,
    path: str,
    extra: dict[str, str],
) -> None:
    env = linux_host(cluster, distro)
    link = etc_file(cluster, path, link="/nonexistent/tracebloc-test/target")
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **extra, **env)

    assert result.returncode == 1
    assert f"{path} is a symbolic link to a file that does not exist" in result.stderr
    assert f"sudo rm {path}" in result.stderr and "Traceback" not in result.stderr
    assert root_calls(cluster) == []  # not even the password prompt
    assert link.is_symlink() and os.readlink(link) == "/nonexistent/tracebloc-test/target"


def test_a_dangling_link_stops_an_install_before_its_question(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="missing")
    etc_file(cluster, "/etc/apt/sources.list.d/docker.list", link="/nonexistent/tracebloc-test/x")
    result = cluster.run("install", **env_for(backend, **env))

    assert result.returncode == 1
    assert "docker.list is a symbolic link to a file that does not exist" in result.stderr
    assert "[y/N]" not in result.stdout + result.stderr
    assert root_calls(cluster) == []


def test_a_linked_proxy_drop_in_is_kept_as_a_link(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "debian", docker="stopped", sudo="nopw")
    target = etc_file(cluster, "/etc/corp/docker-proxy.conf", FOREIGN)
    link = etc_file(cluster, "/" + DROPIN, link="../../../corp/docker-proxy.conf")
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, HTTPS_PROXY=PROXY, **env)

    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and target.read_text(encoding="utf-8") == FOREIGN
    assert f"# kept: /{DROPIN} (a symbolic link)" in result.stdout + result.stderr
    assert (
        "is a symbolic link: left as it is, so it is not rewritten" in result.stdout + result.stderr
    )
    assert not any(c[0] == "mv" for c in root_calls(cluster))


def test_the_engines_own_apt_source_is_rewritten_in_one_rename(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "debian")
    old = (
        "# Managed by tracebloc installer\ndeb [arch=x86_64 signed-by=/etc/apt/keyrings/docker.asc] "
        "https://download.docker.com/linux/debian bookworm stable\n"
    )
    source = etc_file(cluster, "/etc/apt/sources.list.d/docker.list", old)
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    text = source.read_text(encoding="utf-8")
    assert text.startswith("# Managed by tracebloc installer\ndeb [arch=")
    assert "arch=x86_64" not in text and "kept:" not in result.stdout + result.stderr
    calls = root_calls(cluster)
    new = "/etc/apt/sources.list.d/docker.list.tracebloc-new"
    written = next(i for i, c in enumerate(calls) if c[:1] == ["install"] and c[-1] == new)
    assert calls[written + 1] == ["mv", "-f", new, "/etc/apt/sources.list.d/docker.list"]
    assert calls.index(DOCKER_CE_APT) > written + 1


# --- the signing keys: checked, marked, on stdin, in one rename; an administrator's kept -------

APT_KEY = "/etc/apt/keyrings/docker.asc"
RPM_KEY = "/etc/pki/rpm-gpg/docker-ce.asc"
MARKER_LINE = "# Managed by tracebloc installer"


def key_written_in_one_rename(cluster: FakeCluster, dest: str) -> int:
    """The key reached root on stdin (no staged path on install's command line), went beside
    `dest` and was renamed over it; the index of the rename among the root calls."""
    calls = root_calls(cluster)
    new = dest + ".tracebloc-new"
    written = calls.index(["install", "-m", "0644", "/dev/stdin", new])
    assert calls[written + 1] == ["mv", "-f", new, dest]
    assert not any(c[:1] == ["install"] and c[-1] == dest for c in calls)  # never written in place
    assert not os.path.exists(str(sysroot(cluster)) + new)
    return written + 1


def engine_key(cluster: FakeCluster, dest: str) -> bytes:
    text = (sysroot(cluster) / dest.lstrip("/")).read_text(encoding="ascii")
    assert text.startswith(MARKER_LINE + "\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
    return text.split("\n", 1)[1].encode()


def test_the_apt_key_reaches_root_on_stdin_and_replaces_the_engines_own_in_one_rename(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "debian")
    old = etc_file(cluster, APT_KEY, MARKER_LINE + "\nan earlier run's key\n")
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    renamed = key_written_in_one_rename(cluster, APT_KEY)
    assert openpgp.fingerprint(engine_key(cluster, APT_KEY)) == runtime_host.TEST_KEY_FPR
    assert mode(old) == 0o644 and "earlier run" not in old.read_text(encoding="ascii")
    assert root_calls(cluster).index(DOCKER_CE_APT) > renamed


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("foreign", id="an-administrators-keyring"),
        pytest.param("link", id="a-link-to-a-keyring"),
    ],
)
def test_an_apt_keyring_the_engine_did_not_write_is_kept_and_the_plan_says_so(
    cluster: FakeCluster,
    kind: str,
) -> None:
    env = linux_host(cluster, "debian")
    theirs = "the administrator's copy of Docker's key\n"
    target = etc_file(cluster, "/etc/corp/docker.asc", theirs)
    key = (
        etc_file(cluster, APT_KEY, theirs)
        if kind == "foreign"
        else etc_file(cluster, APT_KEY, link="../../corp/docker.asc")
    )
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    assert f"# kept: {APT_KEY} (" in said and "checked against the key it holds" in said
    assert key.is_symlink() == (kind == "link")
    assert key.read_text(encoding="utf-8") == theirs == target.read_text(encoding="utf-8")
    calls = root_calls(cluster)
    assert not any(c[-1].startswith(APT_KEY) for c in calls if c[0] in ("install", "mv"))
    assert DOCKER_CE_APT in calls  # the engine's source is written, naming that keyring


def test_a_dangling_apt_keyring_link_stops_before_any_root_command(cluster: FakeCluster) -> None:
    env = linux_host(cluster, "debian")
    link = etc_file(cluster, APT_KEY, link="/nonexistent/tracebloc-test/docker.asc")
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 1
    assert f"{APT_KEY} is a symbolic link to a file that does not exist" in result.stderr
    assert root_calls(cluster) == [] and link.is_symlink()


def test_with_an_administrators_apt_source_no_key_is_fetched_or_written(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "debian")
    etc_file(cluster, "/etc/apt/sources.list.d/docker.list", CORP_SOURCE)
    etc_file(cluster, "/etc/apt/keyrings/corp.gpg", "the company's key")
    (cluster.root / "mirror/download.docker.com/linux/debian/gpg").unlink()  # a fetch would fail
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    assert not (sysroot(cluster) / APT_KEY.lstrip("/")).exists()
    assert not any(APT_KEY in " ".join(c) for c in root_calls(cluster))


@pytest.mark.parametrize(
    "distro", [pytest.param("fedora", id="fedora"), pytest.param("rocky9", id="rocky-9")]
)
def test_dnf_trusts_only_the_pinned_rpm_key_the_engine_installed(
    cluster: FakeCluster, distro: str
) -> None:
    env = linux_host(cluster, distro)
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 0, result.stderr
    repo = (sysroot(cluster) / "etc/yum.repos.d/docker-ce.repo").read_text(encoding="utf-8")
    gpgkeys = [line for line in repo.splitlines() if line.startswith("gpgkey")]
    assert gpgkeys == [f"gpgkey=file://{RPM_KEY}"] and "gpgcheck=1\n" in repo
    renamed = key_written_in_one_rename(cluster, RPM_KEY)
    assert openpgp.fingerprint(engine_key(cluster, RPM_KEY)) == runtime_host.TEST_KEY_FPR
    dnf = ["dnf", "-y", "-q", "install", "docker-ce", "docker-ce-cli", "containerd.io"]
    assert root_calls(cluster).index(dnf) > renamed


def test_an_rpm_key_that_is_not_dockers_is_never_installed_nor_dnf_run(
    cluster: FakeCluster,
) -> None:
    env = linux_host(cluster, "fedora")
    env["TB_TEST_DOCKER_APT_KEY_FPR"] = "0" * 40
    result = cluster.run("prepare-host", TB_PREPARE_USER=GRANTEE, **env)

    assert result.returncode == 1
    assert "fingerprint" in result.stderr and "not installed" in result.stderr
    assert not (sysroot(cluster) / RPM_KEY.lstrip("/")).exists()
    assert not (sysroot(cluster) / "etc/yum.repos.d/docker-ce.repo").exists()
    assert not any(c[:1] == ["dnf"] and "docker-ce" in c for c in root_calls(cluster))
