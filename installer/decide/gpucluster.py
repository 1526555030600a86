"""Whether the engine's own k3d cluster gives its pods this machine's NVIDIA GPU, and the
shape it needs for that. Pure.

`--gpus=all` hands the same card to every node container, so a GPU cluster is one server
and no agents (two nodes would advertise one card twice). `--gpus` is fixed at creation:
a cluster made without it gets no GPU, and the values then request none.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from installer.decide.drift import Inspected, recreate_remedy
from installer.decide.localcluster import Settings
from installer.decide.localcluster_state import CREATE

TOOLKIT_URL = (
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
)


@dataclass(frozen=True)
class GpuCluster:
    access: bool  # the cluster has (or is created with) --gpus=all
    settings: Settings  # one server, no agents when a GPU cluster is created
    notes: tuple[str, ...] = ()
    reason: str = ""  # why the pods get no GPU although this machine has one


def node_count(names: tuple[str, ...]) -> int:
    """Server and agent containers among k3d's node names (the load balancer is none)."""
    return sum(1 for n in names if "-server-" in n or "-agent-" in n)


def decide(
    s: Settings,
    *,
    host_nvidia: bool,
    docker_nvidia: bool,
    action: str | None,
    inspected: Inspected | None,
    nodes: tuple[str, ...] = (),
    check_failed: str = "",
) -> GpuCluster:
    """`host_nvidia`: nvidia-smi lists a GPU (or will, once the planned GPU steps ran);
    `docker_nvidia`: Docker has the NVIDIA runtime (or will); `action`: create, start or
    adopt; `check_failed`: why Docker could not run a GPU container, when it could not."""
    if not host_nvidia:
        return GpuCluster(False, s)
    if check_failed and action == CREATE:
        return GpuCluster(
            False,
            s,
            (
                f"Docker could not give a container this machine's GPU ({check_failed}), so the "
                "local cluster is created for CPU and the client requests no GPU; check `docker "
                "run --rm --gpus all nvidia/cuda:12.3.1-base-ubuntu22.04 nvidia-smi`, then run "
                "the installer again",
            ),
            "Docker's GPU check failed",
        )
    if not docker_nvidia:
        return GpuCluster(
            False,
            s,
            (
                "this machine has an NVIDIA GPU, but Docker has no NVIDIA runtime, so the local "
                "cluster gets no GPU and the client installs for CPU; to use the GPU, install the "
                f"NVIDIA container toolkit ({TOOLKIT_URL}), restart Docker, and run the installer "
                "again",
            ),
            "the local cluster has no GPU access (no NVIDIA runtime in Docker)",
        )
    if action == CREATE:
        one = dataclasses.replace(s, servers=1, agents=0)
        said = (
            ()
            if (s.servers, s.agents) == (1, 0)
            else (
                f"GPU mode: the local cluster is one server and no agents (not {s.servers} "
                f"server(s) and {s.agents} agent(s)), so the one GPU is advertised once",
            )
        )
        return GpuCluster(True, one, said)
    server = inspected.server if inspected is not None else None
    if server is None or not server.gpus:
        return GpuCluster(
            False,
            s,
            (
                f"the existing local cluster {s.name} was created without GPU access (no --gpus), "
                "so this install stays on CPU and requests no nvidia.com/gpu; to train on this "
                "machine's GPU, recreate the cluster (its data under HOST_DATA_DIR is kept):\n"
                + recreate_remedy(s),
            ),
            f"the existing local cluster {s.name} has no GPU access (created without --gpus)",
        )
    count = node_count(nodes)
    if count > 1:
        return GpuCluster(
            True,
            s,
            (
                f"the existing local cluster {s.name} has {count} nodes and each advertises the "
                "same physical GPU: two jobs can land on one card; recreate it as one node "
                "(its data under HOST_DATA_DIR is kept):\n" + recreate_remedy(s),
            ),
        )
    return GpuCluster(True, s)
