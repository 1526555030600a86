"""A GPU workstation, as a process against fakes: `nvidia-smi`, Docker's runtimes and the
k3d cluster as they would be on a machine with one NVIDIA card. The cluster is sized for
one card, and the values request `nvidia.com/gpu` only where the cluster can give it.

Only fakes here: no GPU, driver or NVIDIA container toolkit exists on the test machine."""

from __future__ import annotations

import json
import sys

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.gpu_host import advertises
from tests.fakes.localcluster import creatable, docker_running, existing, machine_without_cluster
from tests.fakes.runtime_host import STARTED, linux_host, root_calls
from tests.test_cli_install import env_for, fresh, values_file

GPU_LINE = "GPU 0: NVIDIA RTX A4000 (UUID: GPU-1)\n"


def with_gpu(cluster: FakeCluster) -> FakeCluster:
    cluster.install("nvidia-smi")
    cluster.on("nvidia-smi", "-L", stdout=GPU_LINE)
    return advertises(cluster)  # once the chart's device plugin runs


@pytest.mark.parametrize(
    ("gpus", "agents", "requested", "said"),
    [
        pytest.param(False, 1, False, "created without GPU access", id="cpu-only-cluster-exists"),
        pytest.param(True, 0, True, "", id="gpu-cluster-exists"),
        pytest.param(
            True, 1, True, "each advertises the same physical GPU", id="gpu-cluster-two-nodes"
        ),
    ],
)
def test_an_existing_cluster_gets_gpu_values_only_when_it_was_made_with_the_gpu(
    cluster: FakeCluster,
    backend: BackendServer,
    gpus: bool,
    agents: int,
    requested: bool,
    said: str,
) -> None:
    with_gpu(
        existing(
            docker_running(machine_without_cluster(fresh(cluster)), runtimes=("nvidia", "runc")),
            "running",
            gpus=gpus,
            agents=agents,
        )
    )

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    values = values_file(cluster).read_text(encoding="utf-8")
    assert ("nvidia.com/gpu=1" in values) is requested, values
    if said:
        assert said in result.stdout
        assert "k3d cluster delete tracebloc" in result.stdout  # the way to recreate it, shown
    # Never deleted or recreated by the install itself: it may hold a person's work.
    assert not [
        e
        for e in cluster.call_log()
        if e["tool"] == "k3d" and e["argv"][:2] == ["cluster", "delete"]
    ]


def test_plan_says_a_cpu_only_cluster_stays_on_cpu_and_how_to_recreate_it(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    with_gpu(
        existing(
            docker_running(machine_without_cluster(fresh(cluster)), runtimes=("nvidia", "runc")),
            "running",
        )
    )

    result = cluster.run("plan", **env_for(backend))

    assert result.returncode == 0, result.stderr
    assert "created without GPU access" in result.stdout
    assert "nvidia.com/gpu=1" not in result.stdout


RUNNING_NVIDIA = json.dumps(
    {
        "MemTotal": 16 * 2**30,
        "NCPU": 8,
        "OperatingSystem": "Ubuntu",
        "Runtimes": {"nvidia": {}, "runc": {}},
        "DefaultRuntime": "nvidia",
        "ServerErrors": None,
    }
)


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime step")
def test_the_gpu_is_decided_after_docker_starts_so_cluster_and_values_agree(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="stopped", sudo="nopw")
    with_gpu(cluster)
    cluster.install("nvidia-ctk")  # NVIDIA's toolkit is installed
    cluster.on("nvidia-ctk", "--version", stdout="NVIDIA Container Toolkit CLI version 1.17.8\n")
    # Docker was stopped when the run began: its runtimes are known only once it answers.
    cluster.on("docker", "info", stdout=RUNNING_NVIDIA, after=STARTED)
    cluster.on(
        "docker", "info", "--format", "{{.DefaultRuntime}}", stdout="nvidia\n", after=STARTED
    )
    cluster.on("docker", "run", "--gpus", stdout="NVIDIA-SMI 550.54.14  Driver Version: 550\n")

    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    create = next(
        e["argv"]
        for e in cluster.call_log()
        if e["tool"] == "k3d" and e["argv"][:2] == ["cluster", "create"]
    )
    values = values_file(cluster).read_text(encoding="utf-8")
    assert "--gpus=all" in create and "nvidia.com/gpu=1" in values, values
    # The default runtime was read again once Docker answered: already nvidia, no restart.
    assert ["systemctl", "restart", "docker"] not in root_calls(cluster)
