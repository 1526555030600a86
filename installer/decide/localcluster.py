"""The local k3d cluster: its settings, when the engine manages it, and the exact argv. Pure.

Every k3d/docker command an install runs is built here, so `plan` can show it exactly. A
cluster the engine creates carries a runtime label, so `uninstall --delete-cluster` never
removes one it did not make.
"""

from __future__ import annotations

import math
import ntpath
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from installer.decide import locality
from installer.decide.localcluster_given import local_cluster_given
from installer.decide.model import Connection, KubeTarget, NodeRead
from installer.decide.settings import (
    MAX_WAIT_S,
    PROXY_VARIABLES,
    ca_variable,
    env_number,
    proxy_environment,
)
from installer.decide.yesno import flag

DEFAULT_CREATE_TIMEOUT_MIN = 15.0
DEFAULT_API_WAIT_S = 180.0
START_TIMEOUT_S = 5 * 60.0  # bound on `k3d cluster start`
MERGE_TIMEOUT_S = 60.0
DELETE_TIMEOUT_S = 120.0
# k3d's own --timeout should end a stuck create; this backstop kills k3d if it wedges past it.
CREATE_BACKSTOP_S = 5 * 60.0
API_PORT = "127.0.0.1:6550"
NODE_DATA = "/tracebloc"
NODE_DATASET = "/tracebloc-data"
NODE_CA = "/etc/ssl/certs/tracebloc-mitm-ca.crt"
# Registries a TLS-inspecting proxy re-signs: containerd trusts the corporate CA for each.
CA_REGISTRIES = ("docker.io", "registry-1.docker.io", "auth.docker.io", "ghcr.io")
CREATED_LABEL = "tracebloc.io/created-by"
CREATED_VALUE = "tracebloc-installer"
# Cluster-internal destinations never proxied: loopback, private ranges, in-cluster DNS.
NO_PROXY_DEFAULTS = (
    "localhost",
    "127.0.0.1",
    "0.0.0.0",
    "169.254.169.254",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    ".svc",
    ".svc.cluster.local",
    ".cluster.local",
    "host.k3d.internal",
)
# hostPath modes as init-writable-data sets: data 2777 (deletes run as another uid), logs +t.
DATA_DIR_MODE = 0o2777
LOGS_DIR_MODE = 0o3777
MYSQL_DIR_MODE = 0o777


@dataclass(frozen=True)
class Settings:
    name: str
    servers: int
    agents: int
    k3s_version: str  # "latest": no --image, k3d's own default
    create_timeout_s: float
    api_wait_s: float
    storage_mode: str
    dataset_dir: str | None
    ca_bundle: str | None  # the path as given; the command layer checks it is a file
    ca_variable: str | None
    autostart: bool
    leftover_action: str | None
    leftover_guard: bool
    # TRACEBLOC_RECREATE_CLUSTER: one of ours made without GPU access may be recreated for it.
    recreate: bool = False
    # The proxy variables present, as given (decide/settings.proxy_environment): carried
    # into the nodes (proxy_config) and compared with an existing cluster's (drift).
    proxy: Mapping[str, str] = field(default_factory=dict)

    @property
    def context(self) -> str:
        return f"k3d-{self.name}"

    @property
    def server0(self) -> str:
        return f"k3d-{self.name}-server-0"

    @property
    def serverlb(self) -> str:
        return f"k3d-{self.name}-serverlb"


def _flag(env: Mapping[str, str], name: str) -> bool:
    return flag(env, name, False)


def settings(env: Mapping[str, str]) -> Settings:
    """The local cluster's settings; its shape (name, nodes, storage, dataset, leftover
    action) is read and checked by decide/localcluster_given.local_cluster_given."""
    given = local_cluster_given(env)
    ca_name, ca_bundle = ca_variable(env) or (None, None)  # the one CA rule
    minutes = env_number(
        env,
        "TB_CREATE_TIMEOUT_MIN",
        DEFAULT_CREATE_TIMEOUT_MIN,
        zero_ok=False,
        most=MAX_WAIT_S / 60,
    )
    return Settings(
        name=given.name,
        servers=given.servers,
        agents=given.agents,
        k3s_version=given.k3s_version,
        create_timeout_s=minutes * 60,
        api_wait_s=env_number(
            env, "TB_API_WAIT_S", DEFAULT_API_WAIT_S, zero_ok=False, most=MAX_WAIT_S
        ),
        storage_mode=given.storage_mode,
        dataset_dir=given.dataset_dir,
        ca_bundle=ca_bundle,
        ca_variable=ca_name,
        autostart=not _flag(env, "TRACEBLOC_NO_AUTOSTART"),
        leftover_action=given.leftover_action,
        leftover_guard=not _flag(env, "TRACEBLOC_SKIP_LEFTOVER_GUARD"),
        recreate=_flag(env, "TRACEBLOC_RECREATE_CLUSTER"),
        proxy=proxy_environment(env),
    )


# --- when ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    manage: bool | None  # None: cannot tell (the kubeconfig could not be read)
    reason: str


def decide(conn: Connection, context: KubeTarget, s: Settings) -> Decision:
    """The engine manages the local cluster only when nobody pointed it elsewhere (no
    --kubeconfig/--context, no usable current context but ours). `context`: merged kubeconfig."""
    if conn.kubeconfig or conn.context:
        return Decision(False, "a cluster was named with --kubeconfig/--context")
    if not context.readable:
        return Decision(None, f"the kubeconfig could not be read: {context.reason}")
    if context.context == s.context:
        where = locality.where(context)
        if where.local is not True:
            # Named like ours but not shown to be here: no k3d, docker or merge over that entry.
            return Decision(
                False,
                f"the current context {s.context} is not shown to be on "
                f"this machine ({where.evidence}): used as it is",
            )
        return Decision(True, f"the current context is the engine's own {s.context}")
    if context.context and context.usable:
        return Decision(False, f"the current context {context.context} is used as it is")
    if context.context:
        return Decision(True, f"the current context {context.context} names no cluster")
    return Decision(True, "no current kube context")


def host_dirs_here(
    managed: bool, target: KubeTarget | None, nodes: NodeRead | None = None, storage_mode: str = ""
) -> bool:
    """Whether the hostPath directories are made on this machine: our own cluster, or one
    decide/locality.py shows to be here. Unknown is not here."""
    if managed:
        return True
    return (
        target is not None
        and locality.where(target, nodes, storage_mode=storage_mode).local is True
    )


# --- argv ----------------------------------------------------------------------------


def duration(seconds: float) -> str:
    """A Go duration for k3d's --timeout: whole minutes as `Nm`, else seconds."""
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{math.ceil(seconds)}s"


@dataclass(frozen=True)
class CreateFiles:
    """Paths of the k3d config files the create reads (written by the command layer)."""

    proxy_config: str | None
    registries: str | None


def create_args(
    s: Settings, data_dir: str, *, gpu: bool, files: CreateFiles, ca_path: str | None
) -> list[str]:
    args = [
        "cluster",
        "create",
        s.name,
        "--servers",
        str(s.servers),
        "--agents",
        str(s.agents),
        "--api-port",
        API_PORT,
    ]
    disable = ["traefik", "servicelb"]
    if s.storage_mode == "hostpath":
        # The chart brings its own storage class for the hostPath volumes.
        args += ["-v", f"{data_dir}:{NODE_DATA}@all"]
        disable.append("local-storage")
    for component in disable:
        args += ["--k3s-arg", f"--disable={component}@server:*"]
    args += ["--wait", "--timeout", duration(s.create_timeout_s)]
    if s.dataset_dir:
        args += ["-v", f"{s.dataset_dir}:{NODE_DATASET}@all"]
    if s.k3s_version != "latest":
        args += ["--image", f"rancher/k3s:{s.k3s_version}"]
    if gpu:
        args.append("--gpus=all")
    if files.proxy_config:
        args += ["--config", files.proxy_config]
    if ca_path and files.registries:
        args += ["-v", f"{ca_path}:{NODE_CA}@all", "--registry-config", files.registries]
    args += ["--runtime-label", f"{CREATED_LABEL}={CREATED_VALUE}@server:*"]
    return args


def start_args(s: Settings) -> list[str]:
    return ["cluster", "start", s.name, "--wait", "--timeout", duration(START_TIMEOUT_S)]


def delete_args(s: Settings) -> list[str]:
    return ["cluster", "delete", s.name]


def list_args() -> list[str]:
    return ["cluster", "list", "-o", "json"]


def merge_args(s: Settings) -> list[str]:
    return [
        "kubeconfig",
        "merge",
        s.name,
        "--kubeconfig-merge-default",
        "--kubeconfig-switch-context",
    ]


def node_names(s: Settings) -> list[str]:
    """The containers a fresh create makes (k3d's own naming), for the restart policy."""
    return (
        [f"k3d-{s.name}-server-{i}" for i in range(s.servers)]
        + [f"k3d-{s.name}-agent-{i}" for i in range(s.agents)]
        + [s.serverlb]
    )


def restart_args(nodes: list[str]) -> list[str]:
    return ["update", "--restart", "unless-stopped", *nodes]


def api_wait_args() -> list[str]:
    return ["cluster-info", "--request-timeout=5s"]


# --- proxies and the CA, carried into the nodes --------------------------------------


def no_proxy(proxy: Mapping[str, str]) -> str:
    """The host's NO_PROXY (or no_proxy) ∪ the cluster ranges; host entries first, no repeats.
    `proxy`: the proxy variables as given (Settings.proxy)."""
    host = proxy.get("NO_PROXY") or proxy.get("no_proxy") or ""
    seen: list[str] = []
    for entry in [*host.split(","), *NO_PROXY_DEFAULTS]:
        entry = "".join(entry.split())
        if entry and entry not in seen:
            seen.append(entry)
    return ",".join(seen)


def proxy_config(proxy: Mapping[str, str]) -> dict[str, object] | None:
    """A k3d config carrying the proxy variables into every node, or None without a proxy
    (not --env: k3d splits it on '@', which breaks `user:pass@host`)."""
    entries = []
    for name in PROXY_VARIABLES:
        if proxy.get(name, "").strip():
            entries.append(f"{name}={proxy.get(name, '')}")
    if not entries:
        return None
    augmented = no_proxy(proxy)
    entries += [f"NO_PROXY={augmented}", f"no_proxy={augmented}"]
    return {
        "apiVersion": "k3d.io/v1alpha5",
        "kind": "Simple",
        "env": [{"envVar": entry, "nodeFilters": ["all"]} for entry in entries],
    }


def registries_config() -> dict[str, object]:
    return {"configs": {host: {"tls": {"ca_file": NODE_CA}} for host in CA_REGISTRIES}}


# --- the per-release host directories ------------------------------------------------


def release_dirs(
    data_dir: str, dataset_dir: str | None, release: str, *, windows: bool = False
) -> list[tuple[str, int]]:
    """(host path, mode) of each hostPath directory, made before the first pod (kubelet would
    make it root-owned 0755). Data follows HOST_DATASET_DIR; logs and mysql never do."""
    j = ntpath.join if windows else posixpath.join
    data_base = j(dataset_dir, release) if dataset_dir else j(data_dir, release)
    return [
        (j(data_dir, release, "mysql"), MYSQL_DIR_MODE),
        (j(data_base, "data"), DATA_DIR_MODE),
        (j(data_dir, release, "logs"), LOGS_DIR_MODE),
    ]


def node_release_dirs(release: str, dataset: bool) -> list[tuple[str, int]]:
    """The same directories as the node sees them (for the in-node chmod on Windows)."""
    data_base = NODE_DATASET if dataset else NODE_DATA
    return [
        (f"{data_base}/{release}/data", DATA_DIR_MODE),
        (f"{NODE_DATA}/{release}/logs", LOGS_DIR_MODE),
    ]


def chmod_script(dirs: list[tuple[str, int]]) -> str:
    return "; ".join(f"mkdir -p {path} && chmod {mode:o} {path}" for path, mode in dirs)


# `k3d cluster list`, as data.


@dataclass(frozen=True)
class ClusterRead:
    """Our cluster as k3d lists it. `readable` False: k3d could not say."""

    readable: bool
    present: bool = False
    servers_running: int = 0
    nodes: tuple[str, ...] = ()
    reason: str = ""

    @property
    def running(self) -> bool:
        return self.present and self.servers_running > 0


def port_taken(os_: str) -> tuple[str, str]:
    """The API port is held by something else, before the cluster is created or started
    (the PowerShell scripts checked it on Windows only; k3d's own error comes late)."""
    host, port = API_PORT.split(":")
    find = {
        "windows": f"Get-NetTCPConnection -LocalPort {port} -State Listen",
        "darwin": f"lsof -nP -iTCP:{port} -sTCP:LISTEN",
    }.get(os_, f"sudo ss -ltnp 'sport = :{port}'")
    return (
        f"port {port} on {host} is already in use: the local cluster's API server needs it",
        f"stop what holds it (`{find}` shows it; `k3d cluster list` when it is another "
        "k3d cluster), then run the installer again",
    )
