"""The change list is the contract: over every journey, at the process boundary, each
mutating call the fakes log is an item of the list `install` showed before its question and
of `plan --json`'s `changes`, with the same program and arguments; nothing mutating runs
before the answer; and `n` changes nothing."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from installer.decide import remedy
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, installer_command
from tests.fakes.healthy import make_healthy
from tests.fakes.localcluster import creatable, docker_running, existing, machine_without_cluster
from tests.test_cli_install import env_for, fresh

PTY = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

# Calls that change nothing: reads of the cluster, Docker, k3d and sudo, and the refresh
# of helm's local copy of a repository index (the engine's own cache).
READS = (
    ("kubectl", "version"),
    ("kubectl", "config", "view"),
    ("kubectl", "get"),
    ("kubectl", "cluster-info"),
    ("kubectl", "rollout", "status"),  # waits for a rollout, changes nothing
    ("kubectl", "config", "current-context"),
    ("helm", "version"),
    ("helm", "list"),
    ("helm", "status"),
    ("helm", "get"),
    ("helm", "repo", "list"),
    ("helm", "repo", "update"),
    ("helm", "search", "repo"),
    ("helm", "show"),
    ("helm", "template"),
    ("docker", "info"),
    ("docker", "version"),
    ("docker", "inspect"),
    ("docker", "ps"),
    ("docker", "run", "--rm", "--platform"),
    ("k3d", "version"),
    ("k3d", "cluster", "list"),
    ("k3d", "kubeconfig", "get"),
    ("sudo", "-n", "true"),
    ("sudo", "-n", "cmp"),
    ("sudo", "-n", "grep"),
    ("sudo", "-n", "test"),
    ("sudo", "-n", "cat"),
    ("sudo", "-n", "stat"),
    ("systemctl", "is-active"),
    ("systemctl", "is-enabled"),
    ("systemctl", "show"),
    ("nvidia-smi",),
    ("nvidia-ctk", "--version"),
    ("id",),
    ("getent",),
    ("uname",),
    ("fuser",),
)


STAGED = re.compile(r".*[/\\]tracebloc-runtime-[^/\\]+[/\\]\d+-[^/\\]+")


def as_listed(call: list[str]) -> list[str]:
    """A file the runtime step stages in its own temporary directory is listed as what it
    is (decide/runtime.py STAGED): its path is made when the step runs."""
    return ["<staged file>" if STAGED.fullmatch(part) else part for part in call]


def mutating(cluster: FakeCluster) -> list[list[str]]:
    """The logged calls that change something; a program sudo ran is sudo's call (the
    logged program's argv ends the sudo call's)."""
    out: list[list[str]] = []
    wrapped: list[list[str]] = []
    for entry in cluster.call_log():
        call = [entry["tool"], *entry["argv"]]
        if call[0] == "sg":  # the new docker group's shell: the program it runs logs itself
            continue
        if any(len(w) >= len(call) and w[-len(call) :] == call for w in wrapped):
            continue
        if call[:2] == ["sudo", "-n"]:
            wrapped.append(call[2:])
        if not any(call[: len(p)] == list(p) for p in READS):
            out.append(as_listed(call))
    return out


def listed(stderr: str) -> list[str]:
    """The numbered items of every `about to change:` block, as printed."""
    items = []
    for line in stderr.splitlines():
        text = line.split("] ", 1)[-1] if line.startswith("[") else line
        head, _, rest = text.strip().partition(". ")
        if head.isdigit() and rest:
            items.append(rest)
    return items


def check_contract(cluster: FakeCluster, env: dict[str, str], run: Callable[[], str]) -> None:
    plan = cluster.run("plan", "--json", **env)
    planned = [list(c["argv"]) for c in json.loads(plan.stdout)["changes"]]
    cluster.log_path.unlink(missing_ok=True)
    shown = listed(run())
    made = mutating(cluster)
    assert made, "the journey changed nothing: it tests nothing"
    for call in made:
        assert call in planned, f"{call} is not in plan --json's changes: {planned}"
        assert any(item.startswith(remedy.command(call) + "  (") for item in shown), (
            f"{call} was not in the list shown before the question: {shown}"
        )


def install_yes(cluster: FakeCluster, env: dict[str, str], *flags: str) -> Callable[[], str]:
    def run() -> str:
        result = cluster.run("install", "--yes", *flags, **env)
        assert result.returncode == 0, result.stderr
        return result.stderr

    return run


def remote_fresh(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    fresh(cluster)
    return env_for(backend)


def remote_changed_setting(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    make_healthy(cluster, env_for(backend))
    return env_for(backend, CLIENT_ENV="dev")


def remote_reinstall(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    make_healthy(cluster, env_for(backend))
    return env_for(backend, TRACEBLOC_FORCE_REINSTALL="1")


def laptop_docker_running(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    cluster.install("docker")
    return env_for(backend)


def laptop_cluster_stopped(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    machine_without_cluster(fresh(cluster))
    cluster.install("docker")
    existing(docker_running(cluster), "stopped")
    return env_for(backend)


def laptop_docker_stopped(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    from tests.fakes.runtime_host import linux_host

    creatable(machine_without_cluster(fresh(cluster)))
    return env_for(backend, **linux_host(cluster, "debian", docker="stopped", sudo="nopw"))


def laptop_docker_missing(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    from tests.fakes.runtime_host import linux_host

    creatable(machine_without_cluster(fresh(cluster)))
    return env_for(backend, **linux_host(cluster, "ubuntu", docker="missing", sudo="nopw"))


def laptop_earlier_data(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    old = cluster.home / ".tracebloc" / "tracebloc" / "mysql"
    old.mkdir(parents=True)
    (old / "ibdata1").write_bytes(b"rows")
    return laptop_docker_running(cluster, backend)


def laptop_gpu_cluster_recreated(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    from tests.test_cli_gpu_recreate import FLAG, cpu_cluster

    cpu_cluster(cluster)
    return env_for(backend, **FLAG)


def gpu_check_fails(cluster: FakeCluster) -> None:
    cluster.on("docker", "run", "--gpus", rc=125, stderr="could not select device driver\n")


def gpu_workstation_check_fails(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    """A GPU cluster is listed; Docker's GPU check fails after the answer: the CPU create."""
    from tests.test_cli_gpu_host import workstation

    env = workstation(cluster)
    gpu_check_fails(cluster)
    return env_for(backend, **env)


def gpu_workstation_docker_stopped_check_fails(
    cluster: FakeCluster, backend: BackendServer
) -> dict[str, str]:
    """Docker is started first; then the GPU check fails: the CPU create, as listed."""
    from tests.fakes.gpu_host import gpu_machine, info
    from tests.fakes.runtime_host import STARTED, STOPPED, linux_host

    creatable(machine_without_cluster(fresh(cluster)))
    env = {**linux_host(cluster, "ubuntu", docker="stopped", sudo="nopw"), **gpu_machine(cluster)}
    cluster.on("docker", "info", stdout=STOPPED, rc=1)
    cluster.on("docker", "info", stdout=info("nvidia", ("nvidia", "runc")), after=STARTED)
    gpu_check_fails(cluster)
    return env_for(backend, **env)


def laptop_gpu_recreate_check_fails(cluster: FakeCluster, backend: BackendServer) -> dict[str, str]:
    env = laptop_gpu_cluster_recreated(cluster, backend)
    gpu_check_fails(cluster)
    return env


LINUX = pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime step")


JOURNEYS = [
    pytest.param(remote_fresh, (), id="remote-fresh-install"),
    pytest.param(remote_reinstall, (), id="remote-re-install"),
    pytest.param(remote_changed_setting, (), id="remote-changed-setting"),
    pytest.param(laptop_docker_running, (), id="bare-laptop-docker-running"),
    pytest.param(laptop_cluster_stopped, (), id="laptop-cluster-stopped"),
    pytest.param(laptop_docker_stopped, (), id="bare-laptop-docker-stopped", marks=LINUX),
    pytest.param(laptop_docker_missing, (), id="bare-laptop-docker-missing", marks=LINUX),
    pytest.param(laptop_earlier_data, ("--reuse-data",), id="earlier-data-reused"),
    pytest.param(laptop_earlier_data, ("--wipe-data",), id="earlier-data-wiped"),
    pytest.param(laptop_gpu_cluster_recreated, (), id="cpu-cluster-recreated-for-the-gpu"),
    pytest.param(
        gpu_workstation_check_fails, (), id="gpu-workstation-docker-gpu-check-fails", marks=LINUX
    ),
    pytest.param(
        gpu_workstation_docker_stopped_check_fails,
        (),
        id="gpu-workstation-docker-stopped-gpu-check-fails",
        marks=LINUX,
    ),
    pytest.param(laptop_gpu_recreate_check_fails, (), id="recreate-docker-gpu-check-fails"),
]


@pytest.mark.parametrize(("journey", "flags"), JOURNEYS)
def test_every_mutating_call_was_listed_before_the_question_and_by_plan(
    cluster: FakeCluster,
    backend: BackendServer,
    journey: Callable[..., dict[str, str]],
    flags: tuple[str, ...],
) -> None:
    env = journey(cluster, backend)
    check_contract(cluster, env, install_yes(cluster, env, *flags))


def files_in(data: Path) -> dict[Path, bytes]:
    """The data directory's files and their bytes, but the run's own log and lock files."""
    found = data.rglob("*") if data.exists() else iter(())
    return {p: p.read_bytes() for p in found if p.is_file() and p.suffix not in (".log", ".lock")}


@PTY
@pytest.mark.parametrize(("journey", "flags"), JOURNEYS)
def test_nothing_mutating_before_the_answer_and_no_changes_nothing(
    cluster: FakeCluster,
    backend: BackendServer,
    journey: Callable[..., dict[str, str]],
    flags: tuple[str, ...],
) -> None:
    """Every journey: no change before the answer, and after `n` none at all: no call that
    mutates, the earlier data where it was, no values file or install record written."""
    from tests.fakes.terminal import Pty

    env = journey(cluster, backend)
    data = cluster.home / ".tracebloc"
    kept = files_in(data)
    term = Pty.start(
        [*installer_command(), "install", *flags], cwd=cluster.root, env=cluster.env(**env)
    )
    try:
        term.expect("Install? [y/N]", timeout=60)
        before = mutating(cluster)
        term.send("n")
        code = term.wait(timeout=60)
    finally:
        term.close()
    assert before == []
    assert code != 0 and mutating(cluster) == []
    assert files_in(data) == kept  # no values file or record written, the earlier data kept


@PTY
@pytest.mark.parametrize("where", ["remote", "local"])
def test_a_browser_sign_in_and_the_re_run_after_it_keep_to_the_list(
    cluster: FakeCluster, backend: BackendServer, where: str
) -> None:
    from installer.commands.steps import MINTED
    from tests.fakes.terminal import Pty
    from tests.test_cli_signin import MINTED_NS, cluster_run_without_tty, local_machine, setup

    _, env = setup(cluster, backend, PF_MIN_DISK_GB="0")
    if where == "local":
        local_machine(cluster)
    else:
        cluster.kube_target("office", "https://10.1.2.3:6443")  # the kubeconfig's own cluster
    plan = json.loads(cluster_run_without_tty(env, cluster.root, "plan", "--json").stdout)
    planned = [[p.replace(MINTED, MINTED_NS) for p in c["argv"]] for c in plan["changes"]]
    # The local re-run would need the fakes to replay the cluster the first run made.
    for attempt in ("sign-in", "re-run") if where == "remote" else ("sign-in",):
        cluster.log_path.unlink(missing_ok=True)
        term = Pty.start([*installer_command(), "install"], cwd=cluster.root, env=env)
        try:
            # Remote: the sign-in names the namespace before the question; on the local
            # cluster it registers against the cluster made after it.
            signs_first = attempt == "sign-in" and where == "remote"
            if signs_first:
                term.expect("Name your secure environment")
                term.send("\x1b[Dlab one")
            term.expect("Install? [y/N]")
            assert mutating(cluster) == [], "a change before the answer"
            term.send("y")
            if attempt == "sign-in" and not signs_first:
                term.expect("Name your secure environment", timeout=60)
                term.send("\x1b[Dlab one")
            code = term.wait(timeout=90)
            screen = term.screen().replace("\r\n", "\n")
        finally:
            term.close()
        assert code == 0, screen
        shown = [
            item.replace(MINTED, MINTED_NS).replace(f"'{MINTED_NS}'", MINTED_NS)
            for item in listed(screen)
        ]
        made = mutating(cluster)
        assert made
        for call in made:
            if attempt == "sign-in":
                assert call in planned, f"{call} is not in plan --json's changes: {planned}"
            assert any(item.startswith(remedy.command(call) + "  (") for item in shown), (
                f"{attempt}: {call} was not in the list shown before the question: {shown}"
            )
        if attempt == "sign-in" and where == "remote":
            # After it, plan finds the minted client through the record: the same list again.
            again = json.loads(cluster_run_without_tty(env, cluster.root, "plan", "--json").stdout)
            planned = [list(c["argv"]) for c in again["changes"]]
