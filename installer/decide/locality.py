"""Is this cluster on this machine? The one answer, from one table of evidence. Pure.

Preflight, `env.SINGLE_NODE`, the GPU, the local cluster and `uninstall --delete-cluster`
all act on `where()`: True (local), False (remote) or None (unknown, with the evidence that
left it open); each caller says what it does without an answer. `EVIDENCE` is the table,
strongest row first (nodes a cloud runs, managed-cloud names, a loopback API server, a
VM-only distribution, ...); the first row that matches decides.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from installer.decide.model import KubeTarget, Node, NodeRead


@dataclass(frozen=True)
class Locality:
    local: bool | None  # None: unknown
    evidence: str  # what decided it, in a phrase a report can quote
    why: str = ""  # the table row's reason


@dataclass(frozen=True)
class Seen:
    """Everything the table looks at. `nodes` None: not read in this run."""

    target: KubeTarget
    nodes: NodeRead | None = None
    storage_mode: str = ""

    @property
    def node_list(self) -> tuple[Node, ...]:
        return self.nodes.nodes if self.nodes is not None and self.nodes.readable else ()

    @property
    def names(self) -> tuple[str, ...]:
        t = self.target
        return tuple(n for n in (t.context, t.cluster, t.user) if n) if t.readable else ()


@dataclass(frozen=True)
class Row:
    seen: str
    means: bool | None
    why: str
    match: Callable[[Seen], str | None]  # the evidence in words when the row applies


# Hosts that name this machine in a kubeconfig: Docker Desktop's and k3d's names for it.
THIS_MACHINE_HOSTS = frozenset(
    {"localhost", "host.docker.internal", "kubernetes.docker.internal", "host.k3d.internal"}
)
# Provider ids of workstation nodes; any other scheme (aws://, gce://, …) a provider runs.
_WORKSTATION_PROVIDERS = ("k3s://", "kind://")
# Distributions that run only in a VM or container of this machine.
VM_CONTEXTS = frozenset(
    {"minikube", "docker-desktop", "docker-for-desktop", "rancher-desktop", "colima", "orbstack"}
)
_VM_NODE = re.compile(
    r"minikube(-m\d+)?|docker-desktop|desktop-(control-plane|worker\d*)"
    r"|orbstack|colima|lima-rancher-desktop"
)
# Distributions whose API may be published on another host (a remote Docker host, a LAN IP).
HOSTED_PREFIXES = ("k3d-", "kind-")
HOSTED_CONTEXTS = frozenset({"microk8s"})
_HOSTED_NODE = re.compile(r"k3d-.+-(server|agent)-\d+")
# What the managed clouds write into a kubeconfig.
_CLOUD_NAME = re.compile(r"arn:aws:eks:|\.eksctl\.io$|^gke_|^cluster(User|Admin)_")
_CLOUD_PLUGINS = frozenset(
    {"aws", "aws-iam-authenticator", "gke-gcloud-auth-plugin", "kubelogin", "doctl", "oci"}
)
_CLOUD_HOSTS = (
    ".eks.amazonaws.com",
    ".azmk8s.io",
    ".gke.goog",
    ".k8s.ondigitalocean.com",
    ".linodelke.net",
)


def server_host(server: str) -> str:
    """The host of a kubeconfig server URL, lower case, "" when there is none to read."""
    if not server:
        return ""
    try:
        host = urlsplit(server if "://" in server else f"https://{server}").hostname or ""
    except ValueError:
        return ""
    return host.lower().rstrip(".")


def host_is_here(host: str) -> bool:
    if host in THIS_MACHINE_HOSTS:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or address.is_unspecified or bool(mapped and mapped.is_loopback)


def server_here(server: str | None) -> bool:
    """A kubeconfig server URL that reaches this machine (row 3 of the table)."""
    host = server_host(server or "")
    return bool(host) and host_is_here(host)


# --- the rows' tests ---------------------------------------------------------------


def _provider_node(s: Seen) -> str | None:
    for n in s.node_list:
        if n.provider_id and not n.provider_id.startswith(_WORKSTATION_PROVIDERS):
            return f"node {n.name} is run by provider {n.provider_id.partition('://')[0]!r}"
    return None


def _cloud_name(s: Seen) -> str | None:
    name = next((n for n in s.names if _CLOUD_NAME.search(n)), None)
    return f"the kubeconfig names a managed cloud cluster ({name})" if name else None


def _cloud_plugin(s: Seen) -> str | None:
    command = s.target.exec_command if s.target.readable else ""
    return (
        f"the credentials come from the {command!r} plugin of a managed cloud"
        if command in _CLOUD_PLUGINS
        else None
    )


def _cloud_host(s: Seen) -> str | None:
    host = server_host(s.target.server) if s.target.readable else ""
    return f"the API server {host} is a managed cloud's" if host.endswith(_CLOUD_HOSTS) else None


def _server_here(s: Seen) -> str | None:
    if s.target.readable and server_here(s.target.server):
        return f"the API server {s.target.server} is on this machine"
    return None


def _all_nodes(s: Seen, pattern: re.Pattern[str], provider: str = "") -> str | None:
    nodes = s.node_list
    if nodes and all(
        pattern.fullmatch(n.name) or (provider and n.provider_id.startswith(provider))
        for n in nodes
    ):
        return "every node is a local cluster's (" + ", ".join(n.name for n in nodes) + ")"
    return None


def _vm(s: Seen) -> str | None:
    context = s.target.context if s.target.readable else ""
    if context in VM_CONTEXTS:
        return f"context {context!r} is a cluster in a VM of this machine"
    return _all_nodes(s, _VM_NODE)


def _hosted(s: Seen) -> str | None:
    context = s.target.context if s.target.readable else ""
    if context.startswith(HOSTED_PREFIXES) or context in HOSTED_CONTEXTS:
        return f"context {context!r} is a local cluster's"
    return _all_nodes(s, _HOSTED_NODE, "kind://")


def _server_elsewhere(s: Seen) -> str | None:
    host = server_host(s.target.server) if s.target.readable else ""
    return (
        f"the API server {s.target.server} is another address"
        if host and not host_is_here(host)
        else None
    )


def _hosted_elsewhere(s: Seen) -> str | None:
    name, other = _hosted(s), _server_elsewhere(s)
    return f"{name}, but {other}" if name and other else None


def _node_local(s: Seen) -> str | None:
    return (
        "TB_STORAGE_MODE=node-local keeps the volumes inside a local node"
        if s.storage_mode == "node-local"
        else None
    )


EVIDENCE: tuple[Row, ...] = (
    Row(
        "a node with a provider id other than k3s:// or kind://",
        False,
        "the nodes are the cluster itself; a tunnel gives a cloud cluster a loopback address",
        _provider_node,
    ),
    Row(
        "an EKS ARN, an eksctl.io, gke_ or AKS clusterUser_/clusterAdmin_ name",
        False,
        "a managed cloud cluster never runs on this machine; a loopback address is a tunnel",
        _cloud_name,
    ),
    Row(
        "an aws, aws-iam-authenticator, gke-gcloud-auth-plugin, kubelogin, doctl or oci "
        "credential plugin",
        False,
        "only a managed cloud's API server takes those tokens",
        _cloud_plugin,
    ),
    Row(
        "an API host under eks.amazonaws.com, azmk8s.io, gke.goog, …",
        False,
        "the managed cloud's own endpoint",
        _cloud_host,
    ),
    Row(
        "an API server at loopback, 0.0.0.0, ::, localhost or Docker's/k3d's host name",
        True,
        "a connection to it reaches this machine",
        _server_here,
    ),
    Row(
        "a minikube, Docker Desktop, Rancher Desktop, OrbStack or colima context or nodes",
        True,
        "it runs only in a VM of this machine, reached at that VM's private address",
        _vm,
    ),
    Row(
        "a k3d-, kind- or microk8s context or nodes, with an API server on another address",
        None,
        "a remote Docker host or a copied `microk8s config` looks the same as this "
        "machine's LAN address",
        _hosted_elsewhere,
    ),
    Row(
        "an API server on another address",
        False,
        "the kubeconfig reaches another host",
        _server_elsewhere,
    ),
    Row(
        "a k3d-, kind- or microk8s context or nodes, no server address",
        True,
        "those distributions run on a workstation",
        _hosted,
    ),
    Row(
        "TB_STORAGE_MODE=node-local",
        True,
        "the user keeps the volumes inside one local node",
        _node_local,
    ),
)


def where(target: KubeTarget, nodes: NodeRead | None = None, *, storage_mode: str = "") -> Locality:
    """The verdict of the first row of `EVIDENCE` that matches; unknown when none does."""
    seen = Seen(target, nodes, storage_mode)
    for row in EVIDENCE:
        evidence = row.match(seen)
        if evidence is not None:
            return Locality(row.means, evidence, row.why)
    if not target.readable:
        return Locality(
            None, f"the kubeconfig could not be read ({target.reason or 'no reason given'})"
        )
    return Locality(None, "nothing shows where the cluster runs")
