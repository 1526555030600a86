"""Whether the engine's own k3d cluster gives its pods this machine's NVIDIA GPU, and the
shape it needs for that. Pure.

`--gpus=all` hands the same card to every node container, so a GPU cluster is one server
and no agents (two nodes would advertise one card twice). `--gpus` is fixed at creation:
a cluster made without it gets no GPU, and the values then request none, unless
TRACEBLOC_RECREATE_CLUSTER lets the installer recreate one it made that holds no release.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from installer.decide.drift import Inspected, created_by_engine, recreate_remedy
from installer.decide.localcluster import Settings
from installer.decide.localcluster_state import CREATE, RECREATE, START
from installer.decide.model import ListRead

RECREATE_VARIABLE = "TRACEBLOC_RECREATE_CLUSTER"

TOOLKIT_URL = (
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
)


@dataclass(frozen=True)
class GpuCluster:
    access: bool  # the cluster has (or is created with) --gpus=all
    settings: Settings  # one server, no agents when a GPU cluster is created
    notes: tuple[str, ...] = ()
    reason: str = ""  # why the pods get no GPU although this machine has one
    action: str | None = None  # RECREATE: delete the cluster and create it for the GPU
    problem: tuple[str, str] | None = None  # (message, remedy): the recreate cannot go on


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
    recreate: bool = False,
    releases: ListRead | None = None,
) -> GpuCluster:
    """`host_nvidia`: nvidia-smi lists a GPU (or will, once the planned GPU steps ran);
    `docker_nvidia`: Docker has the NVIDIA runtime (or will); `action`: create, start or
    adopt; `check_failed`: why Docker could not run a GPU container, when it could not;
    `recreate`: TRACEBLOC_RECREATE_CLUSTER is set; `releases`: helm's list of what the
    existing cluster holds (None: not read)."""
    if not host_nvidia:
        kept = (
            (f"{RECREATE_VARIABLE} is set, but nvidia-smi lists no GPU here: nothing is recreated",)
            if recreate and action not in (None, CREATE)
            else ()
        )
        return GpuCluster(False, s, kept)
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
        if recreate and check_failed:
            return GpuCluster(
                False,
                s,
                (
                    f"Docker could not give a container this machine's GPU ({check_failed}), so "
                    f"the local cluster {s.name} is not recreated and this install stays on CPU",
                ),
                "Docker's GPU check failed",
            )
        if recreate:
            return _recreated(s, action, inspected, releases)
        return GpuCluster(
            False,
            s,
            (
                f"the existing local cluster {s.name} was created without GPU access (no --gpus), "
                "so this install stays on CPU and requests no nvidia.com/gpu; to train on this "
                f"machine's GPU, set {RECREATE_VARIABLE}=1 (the installer then recreates it if "
                "it made it and it holds nothing, its data under HOST_DATA_DIR kept), or go on "
                "for CPU; by hand:\n" + recreate_remedy(s),
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


def _recreated(
    s: Settings, action: str | None, inspected: Inspected | None, releases: ListRead | None
) -> GpuCluster:
    """Deleted and created for the GPU only on positive evidence: the engine's label on its
    server, and helm listing no release in it (a client's secure environment is anchored
    to the cluster's identity, so it is released by the person first)."""
    why = f"the existing local cluster {s.name} was created without GPU access"
    refused = f"{why} and {RECREATE_VARIABLE} is set, but it is not recreated: "
    remedy = recreate_remedy(s)
    if inspected is None or not inspected.readable:
        return _refused(
            s,
            refused + "its containers could not be inspected, so who made it is not known",
            f"check `docker ps -a`, then run again, or unset {RECREATE_VARIABLE}",
        )
    if not created_by_engine(inspected.server):
        return _refused(
            s,
            refused + "the installer did not create it (it carries no installer label)",
            f"unset {RECREATE_VARIABLE} to install for CPU, or recreate it yourself (it may "
            "hold someone's work):\n" + remedy,
        )
    if releases is None:  # read only while it runs (or before Docker's restart stopped it)
        said = (
            "it is stopped, so what is installed in it cannot be read"
            if action == START
            else "what is installed in it was not read"
        )
        return _refused(
            s,
            refused + said,
            f"start it (k3d cluster start {s.name}) and run the installer again, or unset "
            f"{RECREATE_VARIABLE} to install for CPU",
        )
    if not releases.readable:
        return _refused(
            s,
            refused + f"what it holds could not be vouched for ({releases.reason})",
            "check `helm list -A` and `kubectl get namespaces,pvc -A` in it, or unset "
            f"{RECREATE_VARIABLE}:\n" + remedy,
        )
    if releases.releases:
        first = next((r for r in releases.releases if r.is_client), releases.releases[0])
        what = "a tracebloc client" if first.is_client else "a helm release"
        return _refused(
            s,
            refused + f"{what} is installed in it ({first.name} in namespace {first.namespace})",
            remedy,
        )
    one = dataclasses.replace(s, servers=1, agents=0)
    return GpuCluster(
        True,
        one,
        (
            f"{why} and holds no helm release: it is deleted and created again for the GPU "
            f"({RECREATE_VARIABLE}); its data under HOST_DATA_DIR is kept",
        ),
        action=RECREATE,
    )


def _refused(s: Settings, message: str, remedy: str) -> GpuCluster:
    return GpuCluster(False, s, reason="the recreate was refused", problem=(message, remedy))


def recreate_unread(s: Settings, why: str) -> tuple[str, str]:
    """RECREATE_VARIABLE set while Docker does not run: what the cluster holds is unread."""
    return (
        f"{RECREATE_VARIABLE} is set, but what the local cluster {s.name} holds cannot be read "
        f"({why}), so it is not recreated",
        f"start Docker, then run the installer again; or unset {RECREATE_VARIABLE} to install "
        "for CPU",
    )
