"""Docker as the machine that runs the pods, and an existing cluster checked against this
run's settings. Pure: what `docker info` and `docker inspect` said in, decisions out.

k3d bakes proxies, the CA mount, bind mounts, storage and the k3s image into the node
containers at creation; so drift is reported with the exact way to recreate the cluster,
never "fixed" by deleting anything.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from installer.decide import shellquote
from installer.decide.localcluster import (
    CREATED_LABEL,
    CREATED_VALUE,
    NODE_CA,
    NODE_DATA,
    NODE_DATASET,
    Settings,
)
from installer.decide.model import MachineFacts

DockerState = Literal["running", "stopped", "missing", "unreadable"]


@dataclass(frozen=True)
class DockerRead:
    """One bounded `docker info`. Memory and CPUs are the daemon's: on macOS and Windows
    that is the VM Docker runs in, not the host."""

    state: DockerState
    memory_bytes: int | None = None
    cpus: int | None = None
    runtimes: tuple[str, ...] = ()
    operating_system: str = ""
    reason: str = ""
    root_dir: str = ""  # DockerRootDir: where images and containers land (inside the VM off Linux)
    default_runtime: str = ""  # `DefaultRuntime`: what a container gets without --runtime

    @property
    def nvidia(self) -> bool:
        return "nvidia" in self.runtimes


def docker_remedy(os_: str, state: DockerState) -> str:
    if state == "missing":
        return {
            "darwin": "install Docker Desktop (https://docs.docker.com/desktop/) or colima "
            "(brew install colima docker), start it, then run the installer again",
            "windows": "install Docker Desktop (https://docs.docker.com/desktop/), start it, "
            "then run the installer again",
        }.get(
            os_,
            "install Docker Engine (https://docs.docker.com/engine/install/), start it "
            "(sudo systemctl start docker), then run the installer again",
        )
    return {
        "darwin": "start Docker Desktop (or colima start) and wait until it is running, "
        "then run the installer again",
        "windows": "start Docker Desktop and wait until it is running, then run the "
        "installer again",
    }.get(
        os_,
        "start Docker (sudo systemctl start docker; Docker Desktop: start it), "
        "check `docker info` answers, then run the installer again",
    )


def budget_machine(host: MachineFacts, docker: DockerRead) -> MachineFacts:
    """The machine preflight and the report measure: Docker's memory and CPUs when it said
    them, the host's otherwise (and then still labelled the host's)."""
    if docker.memory_bytes is None or docker.cpus is None:
        return host
    return dataclasses.replace(
        host,
        memory_total_bytes=docker.memory_bytes,
        cpu_count=docker.cpus,
        budget="docker",
        host_memory_bytes=host.memory_total_bytes,
    )


# --- drift of an existing cluster ----------------------------------------------------


@dataclass(frozen=True)
class Container:
    """What `docker inspect` said about one node container."""

    env_names: frozenset[str] = frozenset()
    mounts: frozenset[str] = frozenset()  # destinations inside the node
    image: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    host_ips: tuple[str, ...] = ()  # of its published ports
    gpus: bool = False  # created with --gpus (a `gpu` device request)


@dataclass(frozen=True)
class Inspected:
    readable: bool
    server: Container | None = None
    serverlb: Container | None = None
    reason: str = ""


@dataclass(frozen=True)
class Drift:
    level: Literal["fail", "warn"]
    message: str
    remedy: str


# The tracebloc CLI's own installer, for a remedy that needs the CLI where there is none.
CLI_GET = "https://github.com/tracebloc/cli/releases/latest"


def recreate_remedy(s: Settings, prefix: str = "", cli: str = "tracebloc") -> str:
    """`cli`: how this machine runs the tracebloc CLI (its full path when not on PATH); ""
    when it has none, so the remedy first says where to get it."""
    first = (
        shellquote.join([cli, "delete", "--keep-data"])
        if cli
        else f"get the tracebloc CLI ({CLI_GET}), then: tracebloc delete --keep-data"
    )
    return (
        "release this machine's secure environment first (it is anchored to the cluster's "
        f"identity): {first}\n"
        f"then: k3d cluster delete {s.name}, and run {prefix}tracebloc-installer again "
        "(data under HOST_DATA_DIR is kept; nothing installed yet? only the k3d line)"
    )


def drift(s: Settings, seen: Inspected, cli: str = "tracebloc") -> list[Drift]:
    server = seen.server
    if server is None:
        return []
    out: list[Drift] = []
    wanted = [
        n
        for n in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
        if s.proxy.get(n, "").strip()
    ]
    missing = [n for n in wanted if n not in server.env_names]
    if missing:
        out.append(
            Drift(
                "warn",
                f"the existing cluster {s.name} was created without "
                f"{', '.join(missing)}: image pulls may not use your proxy "
                "(proxies are fixed when a cluster is created)",
                recreate_remedy(s, cli=cli),
            )
        )
    if s.ca_bundle and NODE_CA not in server.mounts:
        out.append(
            Drift(
                "warn",
                f"{s.ca_variable} is set but the existing cluster {s.name} "
                "was created without that CA: image pulls in it may fail x509",
                recreate_remedy(s, cli=cli),
            )
        )
    lb = seen.serverlb
    if lb is not None and "0.0.0.0" in lb.host_ips and "127.0.0.1" not in lb.host_ips:
        out.append(
            Drift(
                "warn",
                f"the existing cluster {s.name} serves its API on 0.0.0.0, "
                "not 127.0.0.1 (it was created outside the installer); the kubeconfig "
                "is anchored to 127.0.0.1",
                recreate_remedy(s, cli=cli),
            )
        )
    if s.dataset_dir and NODE_DATASET not in server.mounts:
        out.append(
            Drift(
                "fail",
                f"HOST_DATASET_DIR is set but the existing cluster {s.name} "
                f"has no {NODE_DATASET} mount: datasets would land on storage inside "
                "the node and be lost",
                recreate_remedy(s, cli=cli),
            )
        )
    hostpath_cluster = NODE_DATA in server.mounts
    if s.storage_mode == "node-local" and hostpath_cluster:
        out.append(
            Drift(
                "fail",
                f"TB_STORAGE_MODE=node-local but the existing cluster "
                f"{s.name} was built for hostpath storage (it has no local-path "
                "storage class; volumes would stay Pending)",
                recreate_remedy(s, "TB_STORAGE_MODE=node-local ", cli),
            )
        )
    elif s.storage_mode == "hostpath" and not hostpath_cluster:
        out.append(
            Drift(
                "fail",
                f"TB_STORAGE_MODE=hostpath but the existing cluster {s.name} "
                f"has no {NODE_DATA} mount (built for node-local): volumes would "
                "land inside the node, not in HOST_DATA_DIR",
                recreate_remedy(s, cli=cli),
            )
        )
    running = k3s_tag(server.image)
    if s.k3s_version != "latest" and running is not None and running != s.k3s_version:
        out.append(
            Drift(
                "warn",
                f"the existing cluster {s.name} runs k3s {running}, not the "
                f"validated {s.k3s_version} (fixed when it was created)",
                recreate_remedy(s, cli=cli),
            )
        )
    return out


def k3s_tag(image: str) -> str | None:
    """The tag of a `rancher/k3s:<tag>[@digest]` image; None for anything else (a digest-only
    or custom image says nothing comparable)."""
    marker = "rancher/k3s:"
    if marker not in image:
        return None
    tag = image.split(marker, 1)[1].split("@", 1)[0]
    return tag or None


def created_by_engine(server: Container | None) -> bool:
    return server is not None and server.labels.get(CREATED_LABEL) == CREATED_VALUE
