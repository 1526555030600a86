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


def setup(
    cluster: FakeCluster, backend: BackendServer, **extra: str
) -> tuple[FakeCli, dict[str, str]]:
    cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()
    # The minted namespace's workloads, as the chart would make them there.
    cluster.workloads(*workloads.client(release=MINTED_NS, namespace=MINTED_NS))
    cli = FakeCli(cluster.root)
    cli.script(
        create={
            "mode": "mint",
            "client_id": MINTED_ID,
            "password": MINTED_PASSWORD,
            "namespace": MINTED_NS,
        }
    )
    env = cluster.env(
        TRACEBLOC_BACKEND_URL=backend.url,
        TRACEBLOC_SKIP_PREFLIGHT="1",
        TB_METRICS_WAIT_S="5",
        TB_PLAIN="1",
        READY_TIMEOUT="30",
        TZ="UTC",
        SHELL="/bin/bash",
        **extra,
    )
    env["PATH"] = f"{cli.dir}:{env['PATH']}"
    return cli, env


@PTY
@pytest.mark.parametrize(
    "piped",
    [
        pytest.param(False, id="run-in-a-terminal"),
        pytest.param(True, id="curl-pipe-sh-only-dev-tty-reaches-the-person"),
    ],
)
def test_a_bare_run_signs_in_and_installs_the_minted_client(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path, piped: bool
) -> None:
    from tests.fakes.terminal import Pty

    cli, env = setup(cluster, backend)
    store = cluster.home / ".tracebloc" / ".cred-store.kdbx"  # the person's, beside ours
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(b"password store")
    stderr = tmp_path / "stderr.txt"
    term = Pty.start(
        [*installer_command(), "install"],
        cwd=cluster.root,
        env=env,
        stdio_log=stderr if piped else None,
    )
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
        (MINTED_ID, MINTED_PASSWORD)
    ]  # the backend check, as for environment credentials
    upgrade = next(a for a in cluster.calls("helm") if a[:2] == ["upgrade", "--install"])
    assert upgrade[2] == MINTED_NS and upgrade[upgrade.index("--namespace") + 1] == MINTED_NS
    written = yaml.safe_load((cluster.home / ".tracebloc" / "values.yaml").read_text())
    assert (written["clientId"], written["clientPassword"]) == (MINTED_ID, MINTED_PASSWORD)
    assert not (cluster.home / ".tracebloc" / "client-credential.env").exists()
    assert not (cluster.home / ".tracebloc" / ".tracebloc-signin").exists()
    assert store.read_bytes() == b"password store"
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
    cli, env = setup(
        cluster, backend, TRACEBLOC_CLIENT_NAME="gpu box", TRACEBLOC_CLIENT_LOCATION="DE"
    )
    result = cluster_run_without_tty(env, cluster.root, "plan")
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    assert "signs you in through the browser" in said
    assert "'gpu box'" in said and "location DE" in said
    assert cli.calls() == []  # nothing run but the --help/version queries
    assert backend.requests == []
    # The list names the namespace the sign-in will mint in its place, as install's does.
    import json

    from installer.commands.steps import MINTED

    document = json.loads(cluster_run_without_tty(env, cluster.root, "plan", "--json").stdout)
    upgrade = next(
        c["argv"] for c in document["changes"] if c["argv"][1:3] == ["upgrade", "--install"]
    )
    assert upgrade[3] == MINTED and upgrade[upgrade.index("--namespace") + 1] == MINTED


def test_credentials_in_the_environment_never_sign_in(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cli, env = setup(
        cluster, backend, TRACEBLOC_CLIENT_ID="client-7f3a", TRACEBLOC_CLIENT_PASSWORD="pw pw"
    )
    cluster.workloads(*workloads.client())  # the default namespace, as before sign-in existed
    result = cluster_run_without_tty(env, cluster.root, "install", "--yes")
    assert result.returncode == 0, result.stderr
    # Only read: the summary's check that the CLI is recent enough (`tracebloc version`).
    assert [e["argv"] for e in cli.entries()] == [["version"]]


def cluster_run_without_tty(env: dict[str, str], cwd: Path, *args: str):  # type: ignore[no-untyped-def]
    import subprocess

    return subprocess.run(
        [*installer_command(), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        start_new_session=sys.platform != "win32",
    )


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
    # The list agreed to names the namespace the sign-in would mint in its place, and the
    # call made is that item with the minted name.
    from installer.commands.steps import MINTED
    from installer.decide import remedy

    agreed = remedy.command(["helm", *(part.replace(MINTED_NS, MINTED) for part in upgrade)])
    assert agreed in screen.replace("\r\n", "\n").replace("\n", ""), screen


@PTY
@pytest.mark.parametrize(
    "how",
    [
        pytest.param("record", id="the-cli-handles-ctrl-c-and-leaves-echo-off"),
        pytest.param("default", id="the-cli-dies-of-ctrl-c-with-echo-off"),
        pytest.param("ignore", id="the-cli-ignores-ctrl-c-and-is-ended-after-a-bound"),
    ],
)
def test_ctrl_c_during_login_reaches_the_cli_and_the_terminal_gets_its_echo_back(
    cluster: FakeCluster, backend: BackendServer, how: str
) -> None:
    """`tracebloc login` runs in the terminal's foreground: the terminal's Ctrl-C reaches it
    (as it would without the installer), the engine waits for it, puts back the terminal
    modes it had before the CLI started (echo, line editing) and stops with 130. A CLI that
    ignores Ctrl-C is ended after a bound, and the terminal is restored all the same."""
    import termios
    import time

    from installer.edges import proc
    from tests.fakes.terminal import Pty

    cli, env = setup(cluster, backend)
    cli.script(login=[f"hold-{how}"])
    with Pty.spawn(["install"], env=env, cwd=cluster.root) as term:
        before = termios.tcgetattr(term.fd)
        term.expect("Waiting for approval")
        assert not termios.tcgetattr(term.fd)[3] & termios.ECHO  # the CLI switched it off
        pressed = time.monotonic()
        term.type("\x03")
        code = term.wait(timeout=60)
        took = time.monotonic() - pressed
        after = termios.tcgetattr(term.fd)
        screen = term.screen()
    assert code == 130, screen
    assert "interrupted" in screen
    assert after[3] & termios.ECHO and after[3] & termios.ICANON, screen
    assert after[3] == before[3], screen
    if how == "record":
        assert (cli.state / "interrupted").exists(), "the Ctrl-C never reached the CLI"
    if how == "ignore":
        assert proc.ON_TERMINAL_GRACE_S <= took < proc.ON_TERMINAL_GRACE_S + 10, took
    assert not (cluster.home / ".tracebloc" / "values.yaml").exists()


@PTY
def test_a_minted_kube_system_namespace_is_refused_before_anything_changes(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    from tests.fakes.healthy import mutating_calls
    from tests.fakes.terminal import Pty

    cli, env = setup(cluster, backend)
    cli.script(
        create={
            "mode": "mint",
            "client_id": MINTED_ID,
            "password": MINTED_PASSWORD,
            "namespace": "kube-system",
        }
    )
    term = Pty.start([*installer_command(), "install"], cwd=cluster.root, env=env)
    try:
        term.expect("Name your secure environment")
        term.send("\x1b[Dlab one")
        code = term.wait(timeout=90)
        screen = term.screen()
    finally:
        term.close()
    assert code == 2, screen
    assert "'kube-system' is a namespace the tracebloc client may not use" in screen
    assert "Install? [y/N]" not in screen
    assert mutating_calls(cluster) == []


@PTY
def test_after_a_sign_in_the_record_finds_the_client_and_a_rerun_asks_for_nothing(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    import json
    import stat

    from tests.fakes.terminal import Pty

    cli, env = setup(cluster, backend)
    # The cluster answers as the kubeconfig's own context (the office cluster).
    cluster.kube_target("office", "https://10.1.2.3:6443")
    term = Pty.start([*installer_command(), "install"], cwd=cluster.root, env=env)
    try:
        term.expect("Name your secure environment")
        term.send("\x1b[Dlab one")
        term.expect("Install? [y/N]")
        term.send("y")
        assert term.wait(timeout=90) == 0, term.screen()
    finally:
        term.close()
    record = cluster.home / ".tracebloc" / "install.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert {k: saved[k] for k in ("release", "namespace", "context", "server", "credentials")} == {
        "release": MINTED_NS,
        "namespace": MINTED_NS,
        "context": "office",
        "server": "https://10.1.2.3:6443",
        "credentials": "sign-in",
    }
    assert MINTED_PASSWORD not in record.read_text(encoding="utf-8")

    # status, with no options, looks where the client is, and says why in one line.
    status = cluster.run("status", "--json", **env)
    assert json.loads(status.stdout)["release"]["namespace"] == MINTED_NS, status.stderr
    assert status.stderr.count("using the install record") == 1
    # An option wins over the record.
    named = cluster.run("status", "--json", "-n", "other", **env)
    assert json.loads(named.stdout)["release"]["namespace"] == "other"
    assert "install record" not in named.stderr

    # A bare re-run asks for no credential and lists the minted release before the question.
    before = len(backend.requests)
    term = Pty.start([*installer_command(), "install"], cwd=cluster.root, env=env)
    try:
        term.expect("Install? [y/N]")
        shown = term.screen()
        term.send("n")
        term.wait(timeout=60)
    finally:
        term.close()
    assert "Client ID" not in shown
    assert f"upgrade --install {MINTED_NS} " in shown and f"--namespace {MINTED_NS}" in shown
    assert [r.fields["username"] for r in backend.requests[before:]] == [MINTED_ID]
