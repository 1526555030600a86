"""Scripted Docker and k3d for the local-cluster tests: fake `docker` and `k3d` executables
(the same replaying fake as kubectl/helm) in the states a workstation can be in."""

from __future__ import annotations

import json
from typing import Any

from installer.decide.localcluster import CREATED_LABEL, CREATED_VALUE
from tests.fakes.cluster import FakeCluster

GIB = 2**30
NAME = "tracebloc"
CREATED = "created"  # the mark a successful `k3d cluster create` sets


def kubeconfig_of_k3d(server: str = "https://0.0.0.0:6550", name: str = NAME) -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- cluster:\n    server: {server}\n  name: k3d-{name}\n"
        f"contexts:\n- context:\n    cluster: k3d-{name}\n    user: admin@k3d-{name}\n"
        f"  name: k3d-{name}\ncurrent-context: k3d-{name}\n"
        f"users:\n- name: admin@k3d-{name}\n  user: {{}}\n"
    )


def machine_without_cluster(cluster: FakeCluster) -> FakeCluster:
    """Docker and k3d installed; no kubeconfig: a fresh workstation."""
    cluster.kubeconfig.unlink()
    cluster.install("docker")
    cluster.install("k3d")
    return cluster


def docker_running(
    cluster: FakeCluster,
    *,
    memory_gib: float = 16,
    cpus: int = 8,
    runtimes: tuple[str, ...] = ("runc",),
) -> FakeCluster:
    info = {
        "MemTotal": int(memory_gib * GIB),
        "NCPU": cpus,
        "OperatingSystem": "Ubuntu",
        "Runtimes": {r: {} for r in runtimes},
        "ServerErrors": None,
        "DefaultRuntime": "nvidia" if "nvidia" in runtimes else "runc",
    }
    cluster.on("docker", "info", stdout=json.dumps(info))
    cluster.on("docker", "update", stdout="ok\n")
    return cluster


def docker_stopped(cluster: FakeCluster) -> FakeCluster:
    doc = {
        "ServerErrors": [
            "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."
            " Is the docker daemon running?"
        ]
    }
    return cluster.on("docker", "info", stdout=json.dumps(doc), rc=1)


def listed(state: str, name: str = NAME, agents: int = 1) -> str:
    nodes = [{"name": f"k3d-{name}-server-0", "role": "server"}]
    nodes += [{"name": f"k3d-{name}-agent-{i}", "role": "agent"} for i in range(agents)]
    nodes += [{"name": f"k3d-{name}-serverlb", "role": "loadbalancer"}]
    return json.dumps(
        [
            {
                "name": name,
                "serversCount": 1,
                "serversRunning": 1 if state == "running" else 0,
                "nodes": nodes,
            }
        ]
    )


def mergeable(cluster: FakeCluster, server: str = "https://0.0.0.0:6550") -> FakeCluster:
    """`k3d kubeconfig merge` writes the k3d context and makes it current; the API answers."""
    cluster.on(
        "k3d",
        "kubeconfig",
        "merge",
        stdout="merged\n",
        write=[(str(cluster.kubeconfig), kubeconfig_of_k3d(server))],
    )
    cluster.on("kubectl", "cluster-info", stdout="Kubernetes control plane is running\n")
    return cluster


def creatable(cluster: FakeCluster, **create: Any) -> FakeCluster:
    """No cluster until `k3d cluster create` runs (answered as `create` says)."""
    cluster.on("k3d", "cluster", "list", stdout="[]")
    cluster.on("k3d", "cluster", "list", stdout=listed("running"), after=CREATED)
    create.setdefault("stdout", "INFO Cluster 'tracebloc' created successfully!\n")
    cluster.on("k3d", "cluster", "create", mark=CREATED, **create)
    cluster.on("k3d", "cluster", "delete", stdout="deleted\n")
    return mergeable(cluster)


def existing(
    cluster: FakeCluster,
    state: str,
    *,
    env: tuple[str, ...] = ("PATH",),
    mounts: tuple[str, ...] = ("/tracebloc",),
    image: str = "rancher/k3s:v1.29.4-k3s1",
    lb_ip: str = "127.0.0.1",
    gpus: bool = False,
    agents: int = 1,
    ours: bool = False,
) -> FakeCluster:
    """`gpus`: created with --gpus=all (docker inspect's device request); `ours`: it carries
    the label the engine's own create sets."""
    cluster.on("k3d", "cluster", "list", stdout=listed(state, agents=agents))
    cluster.on("k3d", "cluster", "start", stdout="started\n")
    server = {
        "Name": f"/k3d-{NAME}-server-0",
        "Config": {
            "Env": [f"{e}=x" for e in env],
            "Image": image,
            "Labels": {CREATED_LABEL: CREATED_VALUE} if ours else {},
        },
        "Mounts": [{"Destination": m} for m in mounts],
    }
    if gpus:
        server["HostConfig"] = {
            "DeviceRequests": [{"Driver": "", "Count": -1, "Capabilities": [["gpu"]]}]
        }
    lb = {
        "Name": f"/k3d-{NAME}-serverlb",
        "Config": {},
        "NetworkSettings": {"Ports": {"6443/tcp": [{"HostIp": lb_ip, "HostPort": "6550"}]}},
    }
    cluster.on("docker", "inspect", stdout=json.dumps([server, lb]))
    return mergeable(cluster)
