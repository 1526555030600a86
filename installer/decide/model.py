"""Plain data passed between the stages. Frozen, so a stage cannot change what it was given."""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def os_name(sys_platform: str) -> str:
    """ "linux", "darwin" or "windows" from a `sys.platform` value."""
    if sys_platform.startswith("win"):
        return "windows"
    if sys_platform == "darwin":
        return "darwin"
    return "linux"


class Provenance(str, enum.Enum):
    """Who chose the training size."""

    INSTALLER = "installer"
    USER = "user"
    UNKNOWN = "unknown"


class Source(str, enum.Enum):
    """Where the training size came from in this run."""

    OVERRIDE = "override"
    CARRIED = "carried"
    MACHINE = "machine"
    FALLBACK = "fallback"


class ReleaseState(str, enum.Enum):
    ABSENT = "absent"
    PRESENT = "present"
    UNREADABLE = "unreadable"
    # Not asked (an override made it unnecessary): a report never claims a read failed.
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Connection:
    """Which cluster to talk to; passed identically to kubectl and helm."""

    kubeconfig: str | None = None
    context: str | None = None
    # How a printed command names each tool: the bare name when the person's PATH finds the
    # copy this run uses, else that copy's full path (a remedy works as printed).
    helm_typed: str = "helm"
    kubectl_typed: str = "kubectl"

    def kubectl_flags(self) -> list[str]:
        flags = ["--kubeconfig", self.kubeconfig] if self.kubeconfig else []
        return flags + (["--context", self.context] if self.context else [])

    @staticmethod
    def request_timeout(timeout: float) -> str:
        """kubectl's own limit on one request, whole seconds rounded up (proc's deadline is
        the one that is enforced)."""
        return f"--request-timeout={max(1, math.ceil(timeout))}s"

    def helm_flags(self) -> list[str]:
        flags = ["--kubeconfig", self.kubeconfig] if self.kubeconfig else []
        return flags + (["--kube-context", self.context] if self.context else [])


@dataclass(frozen=True)
class Node:
    name: str
    cpu_millicores: int | None
    memory_bytes: int | None
    schedulable: bool
    parsed: bool
    reason: str = ""
    # Read beside the size for placement (decide/placement.py): arch, GPUs, kernel, provider id.
    arch: str | None = None
    gpus: tuple[tuple[str, int], ...] = ()
    kernel: str = ""
    provider_id: str = ""

    @property
    def usable(self) -> bool:
        return self.schedulable and self.parsed


@dataclass(frozen=True)
class NodeRead:
    """The result of one `kubectl get nodes` read. `readable` False means nothing was seen."""

    readable: bool
    nodes: tuple[Node, ...] = ()
    reason: str = ""
    skipped: bool = False

    @property
    def schedulable_count(self) -> int:
        return sum(1 for n in self.nodes if n.schedulable)


@dataclass(frozen=True)
class ReleaseRead:
    """The result of one `helm get values` read of the installed release's user values."""

    name: str
    namespace: str
    state: ReleaseState
    values: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""


@dataclass(frozen=True)
class Resolution:
    size: str
    provenance: Provenance
    source: Source
    undersized: bool = False
    unschedulable: bool = False
    anchor: str | None = None


@dataclass(frozen=True)
class MachineFacts:
    os: str
    arch: str
    cpu_count: int
    memory_total_bytes: int
    memory_available_bytes: int
    wsl: bool
    # "docker": Docker's budget (its VM off Linux); `host_memory_bytes` keeps the host's total.
    budget: str = "host"
    host_memory_bytes: int | None = None


@dataclass(frozen=True)
class Gpu:
    """`vendor` is "nvidia", "amd" or None when no GPU was detected."""

    vendor: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class KubeTarget:
    """The cluster a run acts on, as the kubeconfig names it (a local read, no cluster call).
    `readable` False: unknown, with `reason`. `context` "": no current context; `cluster` set
    only when its entry exists; `exec_command` the basename of the user's credential plugin."""

    readable: bool
    context: str = ""
    server: str = ""
    reason: str = ""
    cluster: str = ""
    user: str = ""
    exec_command: str = ""

    @property
    def usable(self) -> bool:
        """The current context names a cluster entry that exists."""
        return self.readable and bool(self.context) and bool(self.cluster)


def exec_command(user: Any) -> str:
    """The basename of a kubeconfig user entry's credential plugin (`users[].user.exec
    .command`), without a directory or `.exe`; "" when it has none."""
    plugin = user.get("exec") if isinstance(user, Mapping) else None
    command = plugin.get("command") if isinstance(plugin, Mapping) else None
    if not isinstance(command, str):
        return ""
    name = command.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name[:-4] if name.endswith(".exe") else name


# `helm list -A`, as data: what the guard, status and uninstall decide on.
CLIENT_CHART = "client"


@dataclass(frozen=True)
class Installed:
    """One row of `helm list -A`."""

    name: str
    namespace: str
    chart: str  # "client-1.4.2"
    status: str

    @property
    def chart_name(self) -> str:
        return chart_name(self.chart)

    @property
    def is_client(self) -> bool:
        return self.chart_name == CLIENT_CHART


@dataclass(frozen=True)
class ListRead:
    readable: bool
    releases: tuple[Installed, ...] = ()
    reason: str = ""


def chart_name(chart: str) -> str:
    """`client-1.4.2` → `client`; helm joins name and SemVer version with a dash."""
    match = re.fullmatch(r"(?P<name>.+?)-v?\d+\.\d+\.\d+(?:[-+].*)?", chart)
    return match["name"] if match else chart
