"""The local-cluster path in install's order: an existing cluster's guard verdict before
the question and the credentials; an earlier client's data decided before the plan (which
shows the directory mounted), wiped only after the go-ahead. The CLI as a process against
fake docker/k3d/kubectl/helm; questions through a real pseudo-terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, release_row
from tests.fakes.localcluster import (
    creatable,
    docker_running,
    existing,
    kubeconfig_of_k3d,
    machine_without_cluster,
)
from tests.fakes.terminal import unwrapped
from tests.test_cli_first_run import changed_machine
from tests.test_cli_install import env_for, fresh, mutations

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")


def running_local_cluster(cluster: FakeCluster) -> FakeCluster:
    """The engine's k3d cluster runs and is the current kube context (a re-run)."""
    cluster.kubeconfig.write_text(kubeconfig_of_k3d("https://127.0.0.1:6550"), encoding="utf-8")
    cluster.install("docker")
    cluster.install("k3d")
    return existing(docker_running(fresh(cluster)), "running")


def earlier_data(cluster: FakeCluster) -> Path:
    old = cluster.home / ".tracebloc" / "tracebloc" / "mysql"
    old.mkdir(parents=True)
    (old / "ibdata1").write_bytes(b"rows")
    return old / "ibdata1"


def mount_of(argv: list[str]) -> str:
    return argv[argv.index("-v") + 1]


# --- (a) the guard's verdict on an existing local cluster -----------------------------


def test_an_existing_local_cluster_with_another_client_stops_before_credentials_are_sent(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    running_local_cluster(cluster).installed(release_row())
    cluster.values_of("tracebloc", "tracebloc", {"clientId": "someone-else"})
    kubeconfig = cluster.kubeconfig.read_bytes()

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    assert "another tracebloc client (someone-else)" in result.stderr
    assert "about to change" not in result.stdout + result.stderr  # no plan, no question
    assert backend.requests == []  # the credentials were never sent
    assert changed_machine(cluster) == [] and mutations(cluster) == []
    assert cluster.kubeconfig.read_bytes() == kubeconfig  # not even the merge


@POSIX_ONLY
def test_an_existing_local_cluster_refused_for_any_id_stops_before_the_prompt(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    from tests.fakes.terminal import Pty

    running_local_cluster(cluster).installed(release_row(chart="postgresql-15.2.0"))
    env = env_for(backend)
    del env["TRACEBLOC_CLIENT_ID"], env["TRACEBLOC_CLIENT_PASSWORD"]  # they would be typed

    with Pty.spawn(["install"], env=cluster.env(**env), cwd=cluster.root) as term:
        code = term.wait(timeout=90)
        screen = term.screen()

    assert code == 3, screen
    assert "postgresql-15.2.0" in screen
    assert "Client ID" not in screen and "Install? [y/N]" not in screen
    assert backend.requests == []
    assert changed_machine(cluster) == [] and mutations(cluster) == []


@pytest.mark.parametrize("command", [("install", "--yes"), ("plan",)], ids=["install", "plan"])
def test_a_running_local_cluster_missing_from_the_kubeconfig_is_judged_before_the_merge(
    cluster: FakeCluster, backend: BackendServer, command: tuple[str, ...]
) -> None:
    existing(docker_running(machine_without_cluster(fresh(cluster))), "running")
    cluster.on("k3d", "kubeconfig", "get", stdout=kubeconfig_of_k3d())  # a read, no merge
    cluster.installed(release_row())
    cluster.values_of("tracebloc", "tracebloc", {"clientId": "someone-else"})

    result = cluster.run(*command, **env_for(backend))

    said = result.stdout + result.stderr
    assert result.returncode == 3, said
    assert "another tracebloc client (someone-else)" in said
    assert "is not in your kubeconfig yet" in said and "k3d kubeconfig merge tracebloc" in said
    assert backend.requests == []
    changed = changed_machine(cluster)
    assert ["k3d", "kubeconfig", "get", "tracebloc"] in changed  # how it was read
    assert [c for c in changed if c[1:3] != ["kubeconfig", "get"]] == [] and mutations(
        cluster
    ) == []
    assert not cluster.kubeconfig.exists()  # nothing merged into the user's kubeconfig


def test_an_existing_cluster_with_another_client_is_refused_before_credentials_are_sent(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    # The user's own cluster (not the engine's): the same order.
    fresh(cluster).installed(release_row())
    cluster.values_of("tracebloc", "tracebloc", {"clientId": "someone-else"})

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    assert backend.requests == [] and mutations(cluster) == []


@pytest.mark.parametrize(
    ("state", "said"),
    [
        pytest.param("none", "does not exist yet: nothing is installed in it", id="no-cluster-yet"),
        pytest.param(
            "stopped",
            "is stopped: what is installed in it is read and judged by install once it is up",
            id="stopped-cluster",
        ),
    ],
)
def test_plan_says_when_the_local_cluster_cannot_be_judged_yet(
    cluster: FakeCluster, backend: BackendServer, state: str, said: str
) -> None:
    machine = docker_running(machine_without_cluster(fresh(cluster)))
    creatable(machine) if state == "none" else existing(machine, state)

    doc = cluster.run_json("plan", **env_for(backend))

    assert doc["verdict"]["action"] == ("install" if state == "none" else "judged-once-up")
    assert said in doc["verdict"]["reason"]
    assert doc["exit"] == 0


# --- (b) an earlier client's data: chosen before the plan, wiped after the go-ahead ---


@POSIX_ONLY
@pytest.mark.parametrize(
    ("choice", "answer"),
    [
        pytest.param("w", "n", id="wipe-then-decline-wipes-nothing"),
        pytest.param("w", "y", id="wipe-then-yes-wipes-before-the-create"),
        pytest.param("n", "n", id="another-directory-is-the-planned-mount"),
    ],
)
def test_leftover_data_is_decided_before_the_plan_and_wiped_only_after_the_go_ahead(
    cluster: FakeCluster, backend: BackendServer, choice: str, answer: str
) -> None:
    from tests.fakes.terminal import Pty

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    old = earlier_data(cluster)
    elsewhere = cluster.home / "elsewhere"
    data = str(elsewhere if choice == "n" else cluster.home / ".tracebloc")

    with Pty.spawn(["install"], env=cluster.env(**env_for(backend)), cwd=cluster.root) as term:
        term.expect("Choice [r/w/n/a]: ")
        assert "Install? [y/N]" not in term.screen() and "will:" not in term.screen()
        term.send(choice)
        if choice == "n":
            term.expect("New data directory: ")
            term.send(str(elsewhere))
        term.expect("Install? [y/N]")
        term.send("d")  # the details, then the question again
        term.expect("Install? [y/N]")
        shown = term.screen()
        assert changed_machine(cluster) == [] and old.exists()  # a choice, not the go-ahead
        term.send(answer)
        code = term.wait(timeout=90)
        screen = term.screen()

    plan = unwrapped(shown[shown.index("changes, in order") :])
    assert f"-v {data}:/tracebloc@all" in plan, plan
    assert screen.count("[y/N]") == 2 and screen.count("Choice [r/w/n/a]") == 1
    if answer == "n":
        assert code == 1, screen
        assert old.exists() and changed_machine(cluster) == [] and mutations(cluster) == []
    else:
        assert code == 0, screen
        assert not old.exists()
        create = next(c for c in changed_machine(cluster) if c[1:3] == ["cluster", "create"])
        assert mount_of(create) == f"{data}:/tracebloc@all"
    if choice == "w":
        assert "deleted after the go-ahead" in plan


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        pytest.param("--wipe-data", "deleted after the go-ahead", id="wipe"),
        pytest.param("--reuse-data", "kept and used by the new cluster", id="reuse"),
        pytest.param(None, "no choice given; install asks before its plan", id="no-choice"),
    ],
)
def test_plan_shows_the_leftover_choice_and_the_mount_install_would_use(
    cluster: FakeCluster, backend: BackendServer, flag: str | None, said: str
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    old = earlier_data(cluster)
    data = str(cluster.home / ".tracebloc")

    flags = [flag] if flag else []
    doc = json.loads(cluster.run("plan", "--json", *flags, **env_for(backend)).stdout)
    text = cluster.run("plan", *flags, **env_for(backend)).stdout

    local = doc["local_cluster"]
    assert said in local["leftover_choice"] and said in text
    assert mount_of(local["commands"][0]) == f"{data}:/tracebloc@all"
    assert old.exists() and changed_machine(cluster) == []
    if flag == "--wipe-data":
        installed = cluster.run("install", "--yes", "--wipe-data", **env_for(backend))
        assert installed.returncode == 0, installed.stderr
        create = next(c for c in changed_machine(cluster) if c[1:3] == ["cluster", "create"])
        assert mount_of(create) == mount_of(local["commands"][0]) and not old.exists()


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime step")
def test_leftover_data_without_a_choice_stops_before_docker_is_installed(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    from tests.fakes.runtime_host import linux_host, root_calls

    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="missing", sudo="nopw")
    old = earlier_data(cluster)

    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 1, result.stderr
    assert "existing data found and no choice was given" in result.stderr
    assert root_calls(cluster) == [] and old.exists()  # Docker was not installed first
    assert backend.requests == []


@POSIX_ONLY
def test_declining_after_choosing_another_directory_names_where_the_log_and_lock_were_written(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    # The leftover choice now comes before the question: the directory typed there is the
    # planned mount, but nothing was written in it; the run's log and lock are in the first.
    from tests.fakes.terminal import Pty

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    earlier_data(cluster)
    first, elsewhere = cluster.home / ".tracebloc", cluster.home / "elsewhere"

    with Pty.spawn(["install"], env=cluster.env(**env_for(backend)), cwd=cluster.root) as term:
        term.expect("Choice [r/w/n/a]: ")
        term.send("n")
        term.expect("New data directory: ")
        term.send(str(elsewhere))
        term.expect("Install? [y/N]")
        term.send("n")
        code = term.wait(timeout=90)
        screen = " ".join(term.screen().split())  # the terminal wraps long lines

    assert code == 1, screen
    assert (first / "install.log").exists()
    assert not elsewhere.exists() or not any(elsewhere.iterdir())
    assert f"Nothing was changed. Only the engine's own log and lock in {first} were" in screen, (
        screen
    )
