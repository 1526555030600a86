"""A new user with nothing but a browser account: `install` as a process signs in through the
fake tracebloc CLI, registers the machine, and installs the minted client, without the person
ever seeing a credential (issue 21). The CLI runs against a scripted cluster (fake kubectl and
helm) and a loopback stand-in for the backend."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from tests.fakes import workloads
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, installer_command, node
from tests.fakes.tracebloc_cli import FakeCli

PTY = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
MINTED_ID, MINTED_PASSWORD, MINTED_NS = "5b7c-uuid", "e1f2a3b4" * 8, "lab-one"


def setup(cluster: FakeCluster, backend: BackendServer, **extra: str) -> tuple[FakeCli, dict[str, str]]:
    cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()
    # The minted namespace's workloads, as the chart would make them there.
    cluster.workloads(*workloads.client(release=MINTED_NS, namespace=MINTED_NS))
    cli = FakeCli(cluster.root)
    cli.script(create={"mode": "mint", "client_id": MINTED_ID, "password": MINTED_PASSWORD,
                       "namespace": MINTED_NS})  # fmt: skip
    env = cluster.env(TRACEBLOC_BACKEND_URL=backend.url, TRACEBLOC_SKIP_PREFLIGHT="1",
                      TB_METRICS_WAIT_S="5", TB_PLAIN="1", READY_TIMEOUT="30", TZ="UTC",
                      SHELL="/bin/bash", **extra)  # fmt: skip
    env["PATH"] = f"{cli.dir}:{env['PATH']}"
    return cli, env


@PTY
@pytest.mark.parametrize("piped", [
    pytest.param(False, id="run-in-a-terminal"),
    pytest.param(True, id="curl-pipe-sh-only-dev-tty-reaches-the-person"),
])  # fmt: skip
def test_a_bare_run_signs_in_and_installs_the_minted_client(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path, piped: bool
) -> None:
    from tests.fakes.terminal import Pty

    cli, env = setup(cluster, backend)
    stderr = tmp_path / "stderr.txt"
    term = Pty.start([*installer_command(), "install"], cwd=cluster.root, env=env,
                     stdio_log=stderr if piped else None)  # fmt: skip
    try:
        term.expect("WDJB-MJHT")  # the device code, on the person's terminal
        term.expect("Name your secure environment")
        term.send("\x1b[Dlab one")
        term.expect("Install? [y/N]")
        term.send("y")
        code = term.wait(timeout=90)
        screen = term.screen()
    finally:
        term.close()
    shown = screen + (stderr.read_text(encoding="utf-8") if piped else "")
    assert code == 0, shown
    login = next(e for e in cli.entries() if e["argv"] == ["login"])
    assert login["stdin_tty"] and login["stdout_tty"] and login["installer"] == "1"
    create = next(c for c in cli.calls() if c[:2] == ["client", "create"])
    assert create[create.index("--name") + 1] == "lab one"
    assert [(r.fields["username"], r.fields["password"]) for r in backend.requests] == [
        (MINTED_ID, MINTED_PASSWORD)]  # the backend check, as for environment credentials
    upgrade = next(a for a in cluster.calls("helm") if a[:2] == ["upgrade", "--install"])
    assert upgrade[2] == MINTED_NS and upgrade[upgrade.index("--namespace") + 1] == MINTED_NS
    written = yaml.safe_load((cluster.home / ".tracebloc" / "values.yaml").read_text())
    assert (written["clientId"], written["clientPassword"]) == (MINTED_ID, MINTED_PASSWORD)
    assert not (cluster.home / ".tracebloc" / "client-credential.env").exists()
    log = (cluster.home / ".tracebloc" / "install.log").read_text(encoding="utf-8")
    assert MINTED_PASSWORD not in shown and MINTED_PASSWORD not in log
    assert "tracebloc client create: exit 0" in log
    if not piped:  # the summary is stdout: under `curl | sh` that is not the terminal
        assert f"tracebloc data ingest` (the CLI: {cli.path})" in " ".join(shown.split())


def test_yes_with_no_terminal_stops_with_exit_2_naming_the_unattended_variables(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cli, env = setup(cluster, backend)
    # setsid: no controlling terminal, as under CI or a daemon, whatever runs this test.
    result = cluster_run_without_tty(env, cluster.root, "install", "--yes")
    assert result.returncode == 2, result.stderr
    assert "TRACEBLOC_CLIENT_ID" in result.stderr and "TRACEBLOC_VALUES_FILE" in result.stderr
    assert cli.calls() == [] and backend.requests == []


def test_plan_says_it_would_sign_in_with_the_name_and_location(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cli, env = setup(cluster, backend, TRACEBLOC_CLIENT_NAME="gpu box",
                     TRACEBLOC_CLIENT_LOCATION="DE")  # fmt: skip
    result = cluster_run_without_tty(env, cluster.root, "plan")
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    assert "signs you in through the browser" in said
    assert "'gpu box'" in said and "location DE" in said
    assert cli.calls() == []  # nothing run but the --help/version queries
    assert backend.requests == []


def test_credentials_in_the_environment_never_sign_in(cluster: FakeCluster,
                                                      backend: BackendServer) -> None:  # fmt: skip
    cli, env = setup(cluster, backend, TRACEBLOC_CLIENT_ID="client-7f3a",
                     TRACEBLOC_CLIENT_PASSWORD="pw pw")  # fmt: skip
    cluster.workloads(*workloads.client())  # the default namespace, as before sign-in existed
    result = cluster_run_without_tty(env, cluster.root, "install", "--yes")
    assert result.returncode == 0, result.stderr
    assert cli.entries() == []


def cluster_run_without_tty(env: dict[str, str], cwd: Path, *args: str):  # type: ignore[no-untyped-def]
    import subprocess

    return subprocess.run([*installer_command(), *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL,
                          start_new_session=sys.platform != "win32")  # fmt: skip


# --- a local cluster the engine makes -------------------------------------------------------


def local_machine(cluster: FakeCluster) -> FakeCluster:
    from tests.fakes.localcluster import creatable, docker_running, machine_without_cluster

    return creatable(docker_running(machine_without_cluster(cluster)))


def k3d_creates(cluster: FakeCluster) -> list[list[str]]:
    return [a for a in cluster.calls("k3d") if a[:2] == ["cluster", "create"]]


def test_nobody_to_sign_in_stops_before_a_local_cluster_is_made(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cli, env = setup(cluster, backend, PF_MIN_DISK_GB="0")
    local_machine(cluster)
    result = cluster_run_without_tty(env, cluster.root, "install", "--yes")
    assert result.returncode == 2, result.stderr
    assert "TRACEBLOC_VALUES_FILE" in result.stderr
    assert k3d_creates(cluster) == [] and cli.calls() == []


@PTY
def test_on_a_new_local_cluster_the_sign_in_follows_its_creation(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    from tests.fakes.terminal import Pty

    cli, env = setup(cluster, backend, PF_MIN_DISK_GB="0", TRACEBLOC_CLIENT_NAME="box")
    local_machine(cluster)
    with Pty.spawn(["install", "--yes"], env=env, cwd=cluster.root) as term:
        code = term.wait(timeout=90)
        screen = term.screen()
    assert code == 0, screen
    assert len(k3d_creates(cluster)) == 1
    assert [c[:2] for c in cli.calls()] == [["login"], ["client", "create"]]
    upgrade = next(a for a in cluster.calls("helm") if a[:2] == ["upgrade", "--install"])
    assert upgrade[2] == MINTED_NS
