"""`install` and `plan` on a workstation with Docker: the CLI as a process against fake
docker, k3d, kubectl and helm executables, asserting what the operator reads and the exact
docker/k3d calls, in order."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.gpu_host import advertises
from tests.fakes.localcluster import (
    GIB,
    creatable,
    docker_running,
    docker_stopped,
    existing,
    machine_without_cluster,
)
from tests.test_cli_install import CA_PEM, env_for, fresh

CREATE_DEFAULTS = [
    "--servers",
    "1",
    "--agents",
    "1",
    "--api-port",
    "127.0.0.1:6550",
]
DISABLES = [
    "--k3s-arg",
    "--disable=traefik@server:*",
    "--k3s-arg",
    "--disable=servicelb@server:*",
    "--k3s-arg",
    "--disable=local-storage@server:*",
]
LABEL = ["--runtime-label", "tracebloc.io/created-by=tracebloc-installer@server:*"]
MERGE = [
    "kubeconfig",
    "merge",
    "tracebloc",
    "--kubeconfig-merge-default",
    "--kubeconfig-switch-context",
]
RESTART = [
    "update",
    "--restart",
    "unless-stopped",
    "k3d-tracebloc-server-0",
    "k3d-tracebloc-agent-0",
    "k3d-tracebloc-serverlb",
]


def data_dir(cluster: FakeCluster) -> Path:
    return cluster.home / ".tracebloc"


def local_calls(cluster: FakeCluster) -> list[list[str]]:
    """docker and k3d calls, without `k3d version` (how the engine picks its k3d)."""
    return [
        [e["tool"], *e["argv"]]
        for e in cluster.call_log()
        if e["tool"] in ("docker", "k3d") and e["argv"][:1] != ["version"]
    ]


def install(cluster: FakeCluster, server: BackendServer, **extra: str) -> CompletedProcess[str]:
    return cluster.run(
        "install",
        "--yes",
        **env_for(server, TRACEBLOC_SKIP_PREFLIGHT="0", PF_MIN_DISK_GB="0", **extra),
    )


def test_fresh_machine_creates_the_cluster_as_the_scripts_did(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    result = install(cluster, backend)

    assert result.returncode == 0, result.stderr
    data = str(data_dir(cluster))
    assert local_calls(cluster) == [
        ["docker", "info", "--format", "{{json .}}"],
        ["k3d", "cluster", "list", "-o", "json"],
        [
            "k3d",
            "cluster",
            "create",
            "tracebloc",
            *CREATE_DEFAULTS,
            "-v",
            f"{data}:/tracebloc@all",
            *DISABLES,
            "--wait",
            "--timeout",
            "15m",
            "--image",
            "rancher/k3s:v1.29.4-k3s1",
            *LABEL,
        ],
        ["docker", *RESTART],
        ["k3d", *MERGE],
    ]
    # Anchored: the k3d entry reaches the API on loopback, not 0.0.0.0.
    assert "https://127.0.0.1:6550" in cluster.kubeconfig.read_text(encoding="utf-8")
    # The release's hostPath directories exist before helm ran, with the twins' modes.
    if sys.platform != "win32":
        modes = {
            name: stat.S_IMODE(os.stat(data_dir(cluster) / "tracebloc" / name).st_mode)
            for name in ("data", "logs", "mysql")
        }
        assert modes == {"data": 0o2777, "logs": 0o3777, "mysql": 0o777}
    order = [e["tool"] + " " + e["argv"][0] for e in cluster.call_log()]
    assert order.index("k3d kubeconfig") < order.index("helm list")


def test_plan_shows_every_docker_and_k3d_command_and_runs_none(cluster: FakeCluster) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    result = cluster.run("plan", "--json")

    assert result.returncode == 0, result.stderr
    local = json.loads(result.stdout)["local_cluster"]
    assert local["managed"] is True and local["action"] == "create"
    assert [argv[:3] for argv in local["commands"]] == [
        ["k3d", "cluster", "create"],
        ["docker", "update", "--restart"],
        ["k3d", "kubeconfig", "merge"],
    ]
    # Reads only: nothing was created, started, merged or updated.
    assert local_calls(cluster) == [
        ["docker", "info", "--format", "{{json .}}"],
        ["k3d", "cluster", "list", "-o", "json"],
    ]
    assert not data_dir(cluster).exists()


def test_no_docker_fails_with_the_remedy_and_creates_nothing(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    machine_without_cluster(fresh(cluster))
    cluster.remove("docker")
    result = install(cluster, backend)

    assert result.returncode == 1
    assert "docker was not found" in result.stderr and "install Docker" in result.stderr
    assert local_calls(cluster) == []


def test_docker_stopped_fails_before_anything_is_created(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    docker_stopped(machine_without_cluster(fresh(cluster)))
    result = install(cluster, backend)

    assert result.returncode == 1
    assert "Docker is not running" in result.stderr and "start" in result.stderr
    assert [c[:2] for c in local_calls(cluster)] == [["docker", "info"]]
    assert cluster.calls("helm") == []


def test_a_small_docker_vm_fails_preflight_on_every_os(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster)), memory_gib=3, cpus=2))
    result = install(cluster, backend)

    assert result.returncode == 1
    assert "Docker's memory budget: 3.0 GiB total" in result.stderr
    assert "give Docker" in result.stderr or "larger machine" in result.stderr
    assert not any(c[:3] == ["k3d", "cluster", "create"] for c in local_calls(cluster))


def test_a_stopped_cluster_is_started_not_recreated(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    existing(docker_running(machine_without_cluster(fresh(cluster))), "stopped")
    result = install(cluster, backend)

    assert result.returncode == 0, result.stderr
    k3d = [c for c in local_calls(cluster) if c[0] == "k3d"]
    assert ["k3d", "cluster", "start", "tracebloc", "--wait", "--timeout", "5m"] in k3d
    assert not any(c[:3] == ["k3d", "cluster", "create"] for c in k3d)


def test_a_drifted_cluster_is_refused_with_the_remedy_and_never_deleted(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    existing(docker_running(machine_without_cluster(fresh(cluster))), "running", mounts=())
    result = install(cluster, backend)

    assert result.returncode == 1
    assert "no /tracebloc mount" in result.stderr
    assert "k3d cluster delete tracebloc" in result.stderr  # advice, never run
    assert not any(
        c[1:3] in (["cluster", "delete"], ["cluster", "create"]) for c in local_calls(cluster)
    )
    assert cluster.calls("helm") == []


def test_a_create_that_times_out_removes_the_partial_cluster(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    # k3d's --timeout is 0.05 minutes = 3s; the backstop adds 5 minutes, so k3d failing its
    # own timeout is what a real wedged pull looks like: exit 1 and a partial cluster left.
    creatable(
        docker_running(machine_without_cluster(fresh(cluster))),
        rc=1,
        stderr="FATA failed to create cluster: context deadline exceeded\n",
    )
    result = install(cluster, backend, TB_CREATE_TIMEOUT_MIN="0.05")

    assert result.returncode == 1
    assert "context deadline exceeded" in result.stderr
    k3d = [c for c in local_calls(cluster) if c[0] == "k3d"]
    assert "3s" in k3d[1] and k3d[-1] == ["k3d", "cluster", "delete", "tracebloc"]


def test_a_cluster_someone_else_created_meanwhile_is_never_deleted(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """Absent when read, then k3d says it already exists (another install made it while
    this one waited): that cluster is not this run's, so it is left as it is."""
    creatable(
        docker_running(machine_without_cluster(fresh(cluster))),
        rc=1,
        stderr="FATA[0000] Failed to create cluster 'tracebloc' because a cluster with "
        "that name already exists\n",
    )
    result = install(cluster, backend)

    assert result.returncode == 1
    assert "already exists" in result.stderr and "left as it is" in result.stderr
    assert not [c for c in local_calls(cluster) if c[:3] == ["k3d", "cluster", "delete"]]


def test_two_installs_of_the_local_cluster_are_one_at_a_time(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """Another namespace and data directory, the same local cluster: while one install holds
    it, the other is refused before it creates, starts or adopts anything."""
    from installer.edges import lock

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    other = cluster.root / "another-data-dir"
    path = lock.cluster_lock({"HOME": str(cluster.home)}, str(other), "tracebloc")
    with lock.hold([path], what="install of release team-b in namespace team-b"):
        result = install(cluster, backend, TB_NAMESPACE="team-a")

    assert result.returncode != 0
    assert "team-b" in result.stderr, result.stderr
    assert not [
        c
        for c in local_calls(cluster)
        if c[:2] == ["k3d", "cluster"] and c[2] in ("create", "start", "delete")
    ]


@pytest.mark.parametrize(
    "gpu", [pytest.param(True, id="gpu-listed"), pytest.param(False, id="runtime-without-a-gpu")]
)
def test_the_nvidia_runtime_adds_gpus_to_one_node_only_with_a_gpu_here(
    cluster: FakeCluster, backend: BackendServer, gpu: bool
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster)), runtimes=("nvidia", "runc")))
    if gpu:
        cluster.install("nvidia-smi")
        cluster.on("nvidia-smi", "-L", stdout="GPU 0: NVIDIA RTX A4000 (UUID: GPU-1)\n")
        cluster.install("nvidia-ctk")
        cluster.on("nvidia-ctk", "--version", stdout="NVIDIA Container Toolkit CLI 1.17.8\n")
        cluster.on("docker", "run", "--gpus", stdout="NVIDIA-SMI 550.54  Driver Version: 550\n")
        advertises(cluster)
    result = install(cluster, backend, AGENTS="2")

    assert result.returncode == 0, result.stderr
    create = next(c for c in local_calls(cluster) if c[1:3] == ["cluster", "create"])
    # One physical card is advertised once: a GPU cluster is one server and no agents.
    assert (create[create.index("--agents") + 1] == "0") is gpu
    assert ("--gpus=all" in create) is gpu
    assert create[create.index("--servers") + 1] == "1"
    update = next(c for c in local_calls(cluster) if c[:2] == ["docker", "update"])
    assert any("agent" in name for name in update) is not gpu


def test_proxy_and_ca_are_carried_into_the_nodes(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    ca = tmp_path / "corp-ca.pem"
    ca.write_text(CA_PEM, encoding="ascii")  # a real PEM: the one CA rule checks it for every use
    result = install(
        cluster,
        backend,
        HTTPS_PROXY="http://ada:S3cret@proxy.corp:3128",
        NO_PROXY=f"corp.example,127.0.0.1,{backend.url.split('//')[1].split(':')[0]}",
        CURL_CA_BUNDLE=str(ca),
    )

    assert result.returncode == 0, result.stderr
    create = next(c for c in local_calls(cluster) if c[1:3] == ["cluster", "create"])
    config = create[create.index("--config") + 1]
    assert create[create.index(config) + 1 : create.index(config) + 5] == [
        "-v",
        f"{ca}:/etc/ssl/certs/tracebloc-mitm-ca.crt@all",
        "--registry-config",
        create[create.index("--registry-config") + 1],
    ]
    assert not any("S3cret" in part for part in create)
    # The proxy configuration (which holds the password) is gone once the create ran.
    assert not Path(config).exists()


def test_another_current_context_is_never_redirected(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    cluster.install("docker")
    cluster.install("k3d")
    result = install(cluster, backend)

    assert result.returncode == 0, result.stderr
    assert local_calls(cluster) == []


def test_leftover_data_without_a_choice_stops_and_deletes_nothing(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    old = data_dir(cluster) / "tracebloc" / "mysql"
    old.mkdir(parents=True)
    (old / "ibdata1").write_bytes(b"rows")
    result = install(cluster, backend)

    assert result.returncode == 1
    assert "--wipe-data" in result.stderr and "--reuse-data" in result.stderr
    assert (old / "ibdata1").exists()
    assert not any(c[1:3] == ["cluster", "create"] for c in local_calls(cluster))

    wiped = cluster.run("install", "--yes", "--wipe-data", **env_for(backend, PF_MIN_DISK_GB="0"))
    assert wiped.returncode == 0, wiped.stderr
    assert not (old / "ibdata1").exists()


@pytest.mark.parametrize("memory_gib", [16])
def test_plan_reports_dockers_budget_as_the_machine(cluster: FakeCluster, memory_gib: int) -> None:
    creatable(
        docker_running(machine_without_cluster(fresh(cluster)), memory_gib=memory_gib, cpus=3)
    )
    machine = json.loads(cluster.run("plan", "--json").stdout)["machine"]
    assert (machine["budget"], machine["cpu_count"]) == ("docker", 3)
    assert machine["memory_total_bytes"] == memory_gib * GIB


def test_a_proxy_configuration_a_killed_run_left_is_removed_by_the_next_create(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    leftover = data_dir(cluster) / ".k3d" / "tracebloc-proxy.yaml"  # a kill -9 mid-create
    leftover.parent.mkdir(parents=True)
    leftover.write_text(
        "env:\n- envVar: HTTPS_PROXY=http://ada:S3cret@proxy.corp:3128\n", encoding="utf-8"
    )
    result = install(cluster, backend)  # no proxy this time

    assert result.returncode == 0, result.stderr
    assert not leftover.exists()


def test_a_taken_api_port_stops_before_the_cluster_is_created(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    import socket

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))  # a port of this test's own stands for 6550
    holder.listen(1)
    probe = {"TB_TEST_API_PORT_PROBE": f"127.0.0.1:{holder.getsockname()[1]}"}
    try:
        planned = cluster.run("plan", **env_for(backend), **probe)
        result = install(cluster, backend, **probe)
    finally:
        holder.close()

    assert result.returncode == 1
    assert "port 6550 on 127.0.0.1 is already in use" in result.stderr
    assert "ss -ltnp" in result.stderr and "port 6550" in planned.stdout + planned.stderr
    assert not any(c[1:3] == ["cluster", "create"] for c in local_calls(cluster))
