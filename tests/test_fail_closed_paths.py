"""Nothing that is not the client's is deleted, and every path obeys one set of rules,
wherever it comes from (issue 19): the CLI as a process against fake tools and a private HOME.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import workloads
from tests.fakes.cluster import FakeCluster, kubeconfig_view, node, release_row
from tests.fakes.processes import kill_if_running

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths, links and signals")
CREDENTIALS = {
    "TRACEBLOC_CLIENT_ID": "client-7f3a",
    "TRACEBLOC_CLIENT_PASSWORD": "Cl1ent-P4ss:#w0rd",
    "TRACEBLOC_SKIP_PREFLIGHT": "1",
    "TRACEBLOC_BACKEND_URL": "http://127.0.0.1:9",
}


@pytest.fixture
def cleanup() -> Iterator[list[int]]:
    """Pids to kill after the test, whatever it left running."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        kill_if_running(pid)


def plannable(cluster: FakeCluster) -> FakeCluster:
    return cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()


# --- paths are absolute ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "named"),
    [
        pytest.param(["HOST_DATA_DIR=tbdata"], "HOST_DATA_DIR='tbdata'", id="variable"),
        pytest.param(["--data-dir=tbdata"], "--data-dir='tbdata'", id="twin-flag"),
        pytest.param(["--data-dir", "tbdata"], "--data-dir='tbdata'", id="twin-flag-separate"),
    ],
)
def test_a_relative_data_dir_is_bad_input_naming_what_was_typed(
    cluster: FakeCluster, flag: list[str], named: str
) -> None:
    # The flag's value reaches the settings as HOST_DATA_DIR; the error still names the flag.
    plannable(cluster)
    env = dict(CREDENTIALS)
    args = ["plan"]
    if flag[0].startswith("HOST_DATA_DIR="):
        env["HOST_DATA_DIR"] = flag[0].split("=", 1)[1]
    else:
        args += flag
    result = cluster.run(*args, **env)

    assert result.returncode == 2, result.stderr
    assert f"{named} is not an absolute path" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2  # the error and its remedy
    assert not (cluster.root / "tbdata").exists()


@POSIX
@pytest.mark.parametrize(
    ("command", "via_flag"),
    [
        pytest.param(("plan",), True, id="plan-flag"),
        pytest.param(("plan",), False, id="plan-variable"),
        pytest.param(("install", "--yes"), True, id="install-flag"),
    ],
)
def test_a_data_dir_outside_the_home_is_refused_naming_the_flag_or_the_variable(
    cluster: FakeCluster, command: tuple[str, ...], via_flag: bool
) -> None:
    plannable(cluster)
    outside = "/etc/tracebloc-data"
    if via_flag:
        result = cluster.run(*command, f"--data-dir={outside}", **CREDENTIALS)
    else:
        result = cluster.run(*command, **{**CREDENTIALS, "HOST_DATA_DIR": outside})

    assert result.returncode == 2, result.stderr
    named = "--data-dir" if via_flag else "HOST_DATA_DIR"
    assert f"{named}='{outside}' is inside the system directory" in result.stderr
    assert ("give --data-dir=" in result.stderr) == via_flag
    assert [call for call in cluster.calls("helm") if "upgrade" in call] == []


def test_a_tilde_data_dir_is_the_home_not_a_folder_named_tilde(cluster: FakeCluster) -> None:
    plannable(cluster)
    doc = cluster.run_json("plan", "--data-dir=~/tbdata2", **CREDENTIALS)

    assert doc["values_path"] == str(cluster.home / "tbdata2" / "values.yaml")


@POSIX
def test_a_linked_data_dir_is_refused_naming_where_it_points(cluster: FakeCluster) -> None:
    """The leftover guard would look behind the link for nothing, and the cluster be
    created on top of an old client's MySQL: refused, in plan as in install."""
    plannable(cluster)
    elsewhere = cluster.root / "elsewhere"
    (elsewhere / "tracebloc" / "mysql").mkdir(parents=True)
    (elsewhere / "tracebloc" / "mysql" / "ibdata1").write_bytes(b"rows")
    (cluster.home / ".tracebloc").symlink_to(elsewhere)
    for command in (["plan"], ["install", "--yes"]):
        result = cluster.run(*command, **CREDENTIALS)

        assert result.returncode == 2, result.stderr
        assert f"is a symbolic link to {elsewhere}" in result.stderr
    assert (elsewhere / "tracebloc" / "mysql" / "ibdata1").exists()
    assert [c for c in cluster.calls("helm") if c[:1] in (["upgrade"], ["install"])] == []


@POSIX
@pytest.mark.parametrize(
    ("typed", "said"),
    [
        pytest.param("~", "is your home directory itself", id="tilde-is-the-home"),
        pytest.param("tbdata", "'tbdata' is not an absolute path", id="relative"),
        pytest.param("/etc/tracebloc", "inside the system directory /etc", id="system-path"),
    ],
)
def test_a_path_typed_at_the_leftover_prompt_obeys_the_data_dir_rules(
    cluster: FakeCluster, typed: str, said: str
) -> None:
    from tests.fakes.localcluster import creatable, docker_running, machine_without_cluster
    from tests.fakes.terminal import Pty

    creatable(docker_running(machine_without_cluster(plannable(cluster))))
    old = cluster.home / ".tracebloc" / "tracebloc" / "mysql"
    old.mkdir(parents=True)
    (old / "ibdata1").write_bytes(b"rows")
    home_mode = os.stat(cluster.home).st_mode
    env = cluster.env(**CREDENTIALS, PF_MIN_DISK_GB="0")
    with Pty.spawn(["install"], env=env, cwd=cluster.root) as term:
        term.expect("Choice [r/w/n/a]")  # a choice, asked before the plan and its question
        term.send("n")
        term.expect("New data directory")
        term.send(typed)
        code = term.wait()
        screen = term.screen()

    assert code == 2, screen
    assert said in screen
    assert os.stat(cluster.home).st_mode == home_mode
    assert not (cluster.home / "mysql").exists() and not (cluster.root / "tbdata").exists()
    assert not [c for c in cluster.calls("k3d") if c[:2] == ["cluster", "create"]]


# --- uninstall deletes only what is the client's, on the cluster it names --------------------


def release_listed(cluster: FakeCluster, *rows: dict[str, Any]) -> FakeCluster:
    return cluster.on("helm", "list", "-n", "tracebloc", "--filter", stdout=json.dumps(list(rows)))


def removable(cluster: FakeCluster, data: Path | None = None) -> Path:
    """The client installed as release tracebloc; its data in `data` (default ~/.tracebloc)."""
    release_listed(cluster, release_row())
    cluster.on("kubectl", "get", "persistentvolumeclaims", stdout=workloads.listing())
    cluster.on("kubectl", "get", "persistentvolumes", stdout=workloads.listing())
    cluster.on("helm", "uninstall", stdout='release "tracebloc" uninstalled\n')
    data = data or cluster.home / ".tracebloc"
    (data / "tracebloc" / "mysql").mkdir(parents=True, exist_ok=True)
    (data / "tracebloc" / "mysql" / "ibdata1").write_bytes(b"rows")
    (data / "values.yaml").write_text("clientId: x\n", encoding="utf-8")
    return data


def helm_uninstalls(cluster: FakeCluster) -> list[list[str]]:
    return [a for a in cluster.calls("helm") if a[:1] == ["uninstall"]]


def test_delete_data_with_an_ancestor_of_home_as_data_dir_deletes_nothing(
    cluster: FakeCluster,
) -> None:
    removable(cluster)
    (cluster.root / "install.log").write_text("a stray log\n", encoding="utf-8")
    precious = cluster.home / "thesis.tex"
    precious.write_text("years of work", encoding="utf-8")
    result = cluster.run("uninstall", "--yes", "--delete-data", HOST_DATA_DIR=str(cluster.root))

    assert result.returncode == 2, result.stderr
    assert "is not under your home directory" in result.stderr
    assert precious.read_text(encoding="utf-8") == "years of work"
    assert helm_uninstalls(cluster) == []


def test_delete_data_for_a_release_not_installed_names_the_releases_it_saw(
    cluster: FakeCluster,
) -> None:
    data = removable(cluster)
    team_a = data / "team-a" / "mysql"
    team_a.mkdir(parents=True)
    (team_a / "ibdata1").write_bytes(b"team-a rows")
    release_listed(cluster)  # nothing in namespace tracebloc
    cluster.on(
        "helm",
        "list",
        "--all-namespaces",
        stdout=json.dumps(
            [release_row("team-a", "team-a"), release_row("web", "web", chart="nginx-1.0.0")]
        ),
    )
    result = cluster.run("uninstall", "--delete-data", "--yes")

    assert result.returncode == 3, result.stderr
    assert "release tracebloc is not installed in namespace tracebloc" in result.stderr
    assert "client releases seen: team-a in namespace team-a" in result.stderr
    assert "web" not in result.stderr
    assert (team_a / "ibdata1").read_bytes() == b"team-a rows"
    assert (data / "values.yaml").exists()
    assert helm_uninstalls(cluster) == []


def test_delete_data_keeps_another_releases_data_in_the_shared_directory(
    cluster: FakeCluster,
) -> None:
    data = removable(cluster)
    team_a = data / "team-a" / "mysql"
    team_a.mkdir(parents=True)
    (team_a / "ibdata1").write_bytes(b"team-a rows")
    result = cluster.run("uninstall", "--delete-data", "--yes")

    assert result.returncode == 0, result.stderr
    assert not (data / "tracebloc").exists()
    assert (team_a / "ibdata1").read_bytes() == b"team-a rows"
    assert (data / "values.yaml").exists()  # the shared values file may be team-a's
    assert re.search(
        r"will remove:\n(?:  .*\n)*  .*[\\/]\.tracebloc[\\/]tracebloc \(\d+(\.\d)? (B|KiB)\)",
        result.stderr,
    ), result.stderr
    assert "team-a: not the release's" in result.stderr


@POSIX
def test_delete_data_through_a_linked_data_dir_is_refused_and_changes_nothing(
    cluster: FakeCluster,
) -> None:
    elsewhere = cluster.home / "real-data"
    removable(cluster, elsewhere)
    (cluster.home / ".tracebloc").symlink_to(elsewhere)
    os.chmod(elsewhere, 0o755)
    result = cluster.run("uninstall", "--delete-data", "--yes")

    assert result.returncode == 2, result.stderr
    assert f"is a symbolic link to {elsewhere}" in result.stderr
    assert stat.S_IMODE(os.stat(elsewhere).st_mode) == 0o755
    assert (elsewhere / "tracebloc" / "mysql" / "ibdata1").exists()
    assert helm_uninstalls(cluster) == []


@POSIX
def test_uninstall_under_a_running_install_refuses_naming_it(
    cluster: FakeCluster, cleanup: list[int]
) -> None:
    from tests.test_fail_closed import wait_for_call

    plannable(cluster).on("helm", "upgrade", "--install", sleep=60, on_term=1)
    cluster.on("helm", "uninstall", stdout='release "tracebloc" uninstalled\n')
    first = cluster.start("install", "--yes", **CREDENTIALS, TB_METRICS_WAIT_S="0")
    cleanup.append(first.pid)
    cleanup.append(wait_for_call(cluster, "upgrade"))

    second = cluster.run("uninstall", "--yes", "--delete-data")

    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=30)
    assert second.returncode == 3, second.stderr
    assert "another install is running" in second.stderr
    assert f"pid {first.pid}" in second.stderr
    assert helm_uninstalls(cluster) == []
    assert (cluster.home / ".tracebloc").exists()


def local_k3d_cluster(cluster: FakeCluster, server: str) -> FakeCluster:
    """The engine's own k3d cluster `tracebloc`; its context's server is `server`. The
    current context stays `office` (another cluster: production, say)."""
    for tool in ("k3d", "docker"):
        cluster.install(tool)
    cluster.on(
        "k3d",
        "cluster",
        "list",
        stdout=json.dumps([{"name": "tracebloc", "serversRunning": 1, "nodes": []}]),
    )
    cluster.on("k3d", "cluster", "delete", stdout="deleted\n")
    server0 = {
        "Name": "/k3d-tracebloc-server-0",
        "Config": {"Labels": {"tracebloc.io/created-by": "tracebloc-installer"}, "Env": []},
    }
    cluster.on("docker", "inspect", stdout=json.dumps([server0]))
    cluster.on(
        "kubectl",
        "config",
        "view",
        "--minify",
        "-o",
        "json",
        "--context",
        "k3d-tracebloc",
        stdout=json.dumps(kubeconfig_view("k3d-tracebloc", server)),
    )
    return cluster


def test_delete_cluster_uninstalls_through_the_local_clusters_own_context(
    cluster: FakeCluster,
) -> None:
    removable(cluster)
    local_k3d_cluster(cluster, "https://127.0.0.1:6550")
    result = cluster.run("uninstall", "--yes", "--delete-cluster", "--delete-data")

    assert result.returncode == 0, result.stderr
    helm = [c for c in cluster.calls("helm") if c[:1] in (["list"], ["uninstall"])]
    assert helm and all(c[-2:] == ["--kube-context", "k3d-tracebloc"] for c in helm), helm
    kubectl = cluster.calls("kubectl")
    assert kubectl and all(c[c.index("--context") + 1] == "k3d-tracebloc" for c in kubectl), kubectl
    assert "kube context:   k3d-tracebloc (API server https://127.0.0.1:6550)" in result.stderr
    assert "namespace:      tracebloc (release tracebloc)" in result.stderr
    assert "local k3d cluster tracebloc (created by tracebloc-installer)" in result.stderr
    assert cluster.calls("k3d")[-1] == ["cluster", "delete", "tracebloc"]


def test_delete_cluster_refuses_a_local_looking_context_on_a_remote_server(
    cluster: FakeCluster,
) -> None:
    removable(cluster)
    local_k3d_cluster(cluster, "https://10.9.8.7:6443")
    result = cluster.run("uninstall", "--yes", "--delete-cluster")

    assert result.returncode == 3, result.stderr
    assert "points at https://10.9.8.7:6443, not shown to be this machine" in result.stderr
    assert helm_uninstalls(cluster) == []
    assert not [c for c in cluster.calls("k3d") if c[:2] == ["cluster", "delete"]]


def test_delete_cluster_with_another_context_named_is_bad_input(cluster: FakeCluster) -> None:
    removable(cluster)
    local_k3d_cluster(cluster, "https://127.0.0.1:6550")
    result = cluster.run("uninstall", "--yes", "--delete-cluster", "--context", "office")

    assert result.returncode == 2, result.stderr
    assert "--context office names another" in result.stderr
    assert helm_uninstalls(cluster) == []


def test_plan_uses_a_k3d_named_context_on_a_remote_server_as_it_is(cluster: FakeCluster) -> None:
    from tests.fakes.localcluster import docker_running, kubeconfig_of_k3d

    plannable(cluster)
    docker_running(cluster)
    cluster.install("k3d")
    cluster.kubeconfig.write_text(kubeconfig_of_k3d("https://10.9.8.7:6443"), encoding="utf-8")
    result = cluster.run("plan", "--json", **CREDENTIALS)

    assert result.returncode == 0, result.stderr
    local = json.loads(result.stdout)["local_cluster"]
    assert local["managed"] is False and local["commands"] == []
    assert "not shown to be on this machine" in local["reason"]
    assert cluster.calls("k3d") + cluster.calls("docker") == []  # not even a read


# --- an interrupted create leaves no partial cluster ----------------------------------------


@POSIX
@pytest.mark.parametrize(
    ("sent", "code"),
    [
        pytest.param(signal.SIGINT, 130, id="ctrl-c"),
        pytest.param(signal.SIGTERM, 143, id="sigterm"),
    ],
)
def test_an_interrupted_cluster_create_removes_the_partial_cluster(
    cluster: FakeCluster, cleanup: list[int], sent: int, code: int
) -> None:
    from tests.fakes.backend_server import BackendServer
    from tests.fakes.localcluster import creatable, docker_running, machine_without_cluster

    creatable(docker_running(machine_without_cluster(plannable(cluster))), sleep=60, on_term=1)
    with BackendServer(default=200) as backend:
        engine = cluster.start(
            "install",
            "--yes",
            **{**CREDENTIALS, "PF_MIN_DISK_GB": "0", "TRACEBLOC_BACKEND_URL": backend.url},
        )
        cleanup.append(engine.pid)
        cluster.sleeping_call("cluster", "create", tool="k3d")
        engine.send_signal(sent)
        _, stderr = engine.communicate(timeout=60)

    assert engine.returncode == code, stderr
    assert cluster.calls("k3d")[-1] == ["cluster", "delete", "tracebloc"]
    assert "the partially created cluster tracebloc was removed" in stderr
    assert all(c[:1] != ["upgrade"] for c in cluster.calls("helm"))
