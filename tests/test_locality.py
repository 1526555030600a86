"""Is this cluster on this machine: one decision (decide/locality.py) over one table of
evidence, and preflight, SINGLE_NODE and the local-cluster path all give its verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from installer.decide import localcluster as lc
from installer.decide import locality, placement, reachability
from installer.decide.model import Connection, KubeTarget, NodeRead, exec_command
from installer.edges.kubeconfig import read_context
from installer.edges.kubectl import parse_nodes, parse_target
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, node, nodes_json
from tests.test_cli_install import env_for

EKS_ARN = "arn:aws:eks:eu-west-1:123456789012:cluster/ml"
UNREAD = NodeRead(False, reason="exit 1: The connection to the server 127.0.0.1:8443 was refused")


def nodes(*items: dict[str, Any]) -> NodeRead:
    return parse_nodes(nodes_json(*items).encode())


def target(context: str, server: str, **names: str) -> KubeTarget:
    return KubeTarget(True, context, server, **names)


# (kube target, nodes, storage mode, verdict). Every case the three old rules saw, and the
# ones where they disagreed.
CASES = [
    pytest.param(
        target(
            EKS_ARN, "https://127.0.0.1:8443", cluster=EKS_ARN, user=EKS_ARN, exec_command="aws"
        ),
        UNREAD,
        "hostpath",
        False,
        id="eks-through-a-loopback-tunnel-nodes-unread",
    ),
    pytest.param(
        target("tunnel", "https://localhost:8443", exec_command="aws-iam-authenticator"),
        None,
        "hostpath",
        False,
        id="renamed-eks-tunnel-known-by-its-exec-plugin",
    ),
    pytest.param(
        target("dev", "https://127.0.0.1:8443"),
        nodes(node("ip-10-0-1-7.ec2.internal", provider_id="aws:///eu-west-1a/i-0abc")),
        "hostpath",
        False,
        id="tunnel-whose-nodes-a-cloud-runs",
    ),
    pytest.param(
        target("ml.eu-west-1.eksctl.io", "https://AB12.gr7.eu-west-1.eks.amazonaws.com"),
        None,
        "hostpath",
        False,
        id="eksctl",
    ),
    pytest.param(
        target(
            "gke_proj_europe-west1_ml", "https://34.76.1.2", exec_command="gke-gcloud-auth-plugin"
        ),
        None,
        "hostpath",
        False,
        id="gke",
    ),
    pytest.param(
        target(
            "ml-aks",
            "https://ml-dns-1.hcp.westeurope.azmk8s.io:443",
            user="clusterUser_rg_ml-aks",
            exec_command="kubelogin",
        ),
        None,
        "hostpath",
        False,
        id="aks",
    ),
    pytest.param(
        target("k3d-tracebloc", "https://0.0.0.0:6550"), None, "hostpath", True, id="k3d-context"
    ),
    pytest.param(
        target("k3d-tracebloc", "https://10.9.8.7:6443"),
        None,
        "hostpath",
        None,
        id="k3d-context-on-another-address",
    ),
    pytest.param(
        target("k3d-tracebloc", "https://127.0.0.1:6550", exec_command="aws"),
        None,
        "hostpath",
        False,
        id="k3d-named-context-with-a-clouds-credentials",
    ),
    pytest.param(
        target("docker-desktop", "https://kubernetes.docker.internal:6443"),
        None,
        "hostpath",
        True,
        id="docker-desktop",
    ),
    pytest.param(
        target("rancher-desktop", "https://127.0.0.1:6443"),
        None,
        "hostpath",
        True,
        id="rancher-desktop",
    ),
    pytest.param(
        target("minikube", "https://192.168.49.2:8443"),
        None,
        "hostpath",
        True,
        id="minikube-at-its-vm-address",
    ),
    pytest.param(target("kind-dev", "https://127.0.0.1:40125"), None, "hostpath", True, id="kind"),
    pytest.param(
        target("microk8s", "https://127.0.0.1:16443"),
        None,
        "hostpath",
        True,
        id="microk8s-loopback",
    ),
    pytest.param(
        target("microk8s", "https://192.168.1.20:16443"),
        None,
        "hostpath",
        None,
        id="microk8s-config-at-a-lan-address",
    ),
    pytest.param(target("dev", "https://[::1]:6443"), None, "hostpath", True, id="ipv6-loopback"),
    pytest.param(target("dev", "https://[::]:6443"), None, "hostpath", True, id="ipv6-unspecified"),
    pytest.param(
        target("dev", "https://0.0.0.0:6443"), None, "hostpath", True, id="ipv4-unspecified"
    ),
    pytest.param(target("dev", "https://localhost:6443"), None, "hostpath", True, id="localhost"),
    pytest.param(
        target("dev", "https://host.docker.internal:6443"),
        None,
        "hostpath",
        True,
        id="host-docker-internal",
    ),
    pytest.param(
        target("office", "https://192.168.1.20:6443"),
        nodes(node("box")),
        "hostpath",
        False,
        id="lan-ip",
    ),
    pytest.param(
        target("office", "https://192.168.1.20:6443"),
        None,
        "node-local",
        False,
        id="lan-ip-node-local-storage-says-nothing-of-where",
    ),
    pytest.param(
        KubeTarget(False, reason="~/.kube/config: not YAML"),
        UNREAD,
        "hostpath",
        None,
        id="unreadable-kubeconfig",
    ),
    pytest.param(
        KubeTarget(False, reason="no context"),
        nodes(node("k3d-tb-server-0", provider_id="k3s://k3d-tb-server-0")),
        "hostpath",
        True,
        id="unreadable-kubeconfig-k3d-nodes",
    ),
    pytest.param(
        KubeTarget(False, reason="no context"),
        UNREAD,
        "node-local",
        True,
        id="unreadable-kubeconfig-node-local",
    ),
    pytest.param(target("prod", ""), None, "hostpath", None, id="no-server-address"),
]


@pytest.mark.parametrize(("kube", "read", "mode", "local"), CASES)
def test_the_one_decision(
    kube: KubeTarget, read: NodeRead | None, mode: str, local: bool | None
) -> None:
    verdict = locality.where(kube, read, storage_mode=mode)
    assert verdict.local is local, verdict
    assert verdict.evidence


@pytest.mark.parametrize(("kube", "read", "mode", "local"), CASES)
def test_preflight_single_node_and_the_local_cluster_give_the_same_verdict(
    kube: KubeTarget, read: NodeRead | None, mode: str, local: bool | None
) -> None:
    # Preflight checks this machine's floors unless the cluster is shown to be elsewhere.
    assert reachability.is_local(kube, read, storage_mode=mode) is (local is not False)
    # SINGLE_NODE: written only when the cluster is shown to be here.
    seen = read if read is not None else NodeRead(False, reason="not read")
    where = placement.locality(kube, seen, mode)
    assert where.local is local
    assert placement.single_node(where, seen, mode)[0] == ("true" if local else None)
    # The local-cluster path: hostPath directories are made here only when it is here ...
    assert lc.host_dirs_here(False, kube, read, mode) is (local is True)
    # ... and the engine's own k3d context is its cluster only when it is here.
    if kube.readable and kube.context == lc.settings({}).context:
        manage = lc.decide(Connection(), kube, lc.settings({})).manage
        assert manage is (local is True)


def test_every_row_says_what_it_means_and_why() -> None:
    assert {row.means for row in locality.EVIDENCE} == {True, False, None}
    assert all(row.seen and row.why for row in locality.EVIDENCE)


def test_a_cloud_tunnel_says_which_evidence_decided() -> None:
    verdict = locality.where(target(EKS_ARN, "https://127.0.0.1:8443", cluster=EKS_ARN))
    assert verdict.evidence == f"the kubeconfig names a managed cloud cluster ({EKS_ARN})"
    assert "tunnel" in verdict.why


@pytest.mark.parametrize(
    ("user", "command"),
    [
        ({"exec": {"command": "aws", "args": ["eks", "get-token"]}}, "aws"),
        ({"exec": {"command": "/usr/local/bin/gke-gcloud-auth-plugin"}}, "gke-gcloud-auth-plugin"),
        ({"exec": {"command": "C:\\Program Files\\kubelogin\\KUBELOGIN.EXE"}}, "kubelogin"),
        ({"token": "REDACTED"}, ""),
        (None, ""),
        ({"exec": {"command": 7}}, ""),
    ],
)
def test_the_exec_plugin_is_read_by_its_basename(user: Any, command: str) -> None:
    assert exec_command(user) == command


def eks_view(server: str) -> dict[str, Any]:
    """What `aws eks update-kubeconfig` writes, reached through a local tunnel."""
    return {
        "kind": "Config",
        "current-context": EKS_ARN,
        "clusters": [{"name": EKS_ARN, "cluster": {"server": server}}],
        "contexts": [{"name": EKS_ARN, "context": {"cluster": EKS_ARN, "user": EKS_ARN}}],
        "users": [
            {
                "name": EKS_ARN,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "aws",
                        "args": [
                            "--region",
                            "eu-west-1",
                            "eks",
                            "get-token",
                            "--cluster-name",
                            "ml",
                        ],
                    }
                },
            }
        ],
    }


def test_both_kubeconfig_readers_fill_the_one_target(tmp_path: Path) -> None:
    view = eks_view("https://127.0.0.1:8443")
    from_kubectl = parse_target(json.dumps(view).encode())
    config = tmp_path / "config"
    config.write_text(yaml.safe_dump(view), encoding="utf-8")
    from_files = read_context({"KUBECONFIG": str(config)}, "linux")
    assert (
        from_kubectl
        == from_files
        == KubeTarget(
            True,
            EKS_ARN,
            "https://127.0.0.1:8443",
            cluster=EKS_ARN,
            user=EKS_ARN,
            exec_command="aws",
        )
    )
    assert from_files.usable


def test_a_context_naming_a_missing_cluster_is_not_usable(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        yaml.safe_dump(
            {
                "current-context": "gone",
                "contexts": [{"name": "gone", "context": {"cluster": "nowhere", "user": "u"}}],
            }
        ),
        encoding="utf-8",
    )
    read = read_context({"KUBECONFIG": str(config)}, "linux")
    assert (read.readable, read.context, read.cluster, read.usable) == (True, "gone", "", False)


# --- through the CLI ----------------------------------------------------------------------


def test_install_onto_eks_through_a_loopback_tunnel_checks_its_nodes_not_this_machine(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    # Floors no laptop meets: the EKS node meets them. Before the one decision, preflight
    # took the loopback address for this machine and failed on its floors.
    cluster.nodes(node("ip-10-0-1-7", "64", "2000Gi")).installed().installable()
    cluster.on("kubectl", "config", "view", stdout=json.dumps(eks_view("https://127.0.0.1:8443")))
    env = env_for(backend, PF_MIN_MEM_GB="1000", PF_MIN_CPU="32", PF_MIN_DISK_GB="1000000000")
    del env["TRACEBLOC_SKIP_PREFLIGHT"]

    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 0, result.stderr
    assert f"the cluster ({EKS_ARN}) is not on this machine" in result.stderr
    written = yaml.safe_load(
        (cluster.home / ".tracebloc" / "values.yaml").read_text(encoding="utf-8")
    )
    assert "SINGLE_NODE" not in written.get("env", {})
