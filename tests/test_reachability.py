"""reach: unreachable only on positive evidence; which clusters run on this machine."""

from __future__ import annotations

import pytest

from installer.decide.model import KubeTarget, NodeRead
from installer.decide.preflight import check_cluster
from installer.decide.reachability import is_local, unreachable
from installer.decide.settings import Thresholds
from installer.edges.kubectl import parse_node
from tests.fakes.cluster import node

REFUSED = "exit 1: The connection to the server 10.0.0.1:6443 was refused"
HELM_DOWN = "exit 1: Error: Kubernetes cluster unreachable: dial tcp: connection refused"


@pytest.mark.parametrize(
    ("listed", "nodes", "expected"),
    [
        pytest.param(HELM_DOWN, NodeRead(False, reason=REFUSED), True, id="both-say-no-connection"),
        pytest.param(
            HELM_DOWN,
            NodeRead(False, reason="exit 1: forbidden"),
            False,
            id="nodes-answered-forbidden",
        ),
        pytest.param(HELM_DOWN, NodeRead(True), False, id="nodes-were-read"),
        pytest.param(
            "exit 1: Error: secrets is forbidden",
            NodeRead(False, reason=REFUSED),
            False,
            id="helm-reached-the-api-server",
        ),
        pytest.param(HELM_DOWN, NodeRead(False, skipped=True), True, id="override-helm-alone"),
        pytest.param(None, NodeRead(False, reason=REFUSED), False, id="list-answered"),
        pytest.param(
            "`helm list` did not finish within 10s and was stopped",
            NodeRead(False, reason="`kubectl get nodes` did not finish within 10s"),
            True,
            id="both-ran-out-of-time",
        ),
    ],
)
def test_unreachable(listed: str | None, nodes: NodeRead, expected: bool) -> None:
    assert unreachable(listed, nodes) is expected


@pytest.mark.parametrize(
    ("target", "local"),
    [
        pytest.param(KubeTarget(True, "k3d-tracebloc", "https://0.0.0.0:40915"), True, id="k3d"),
        pytest.param(
            KubeTarget(True, "default", "https://127.0.0.1:6443"), True, id="k3s-loopback"
        ),
        pytest.param(
            KubeTarget(True, "docker-desktop", "https://kubernetes.docker.internal:6443"),
            True,
            id="docker-desktop",
        ),
        pytest.param(
            KubeTarget(True, "minikube", "https://192.168.49.2:8443"), True, id="minikube"
        ),
        pytest.param(KubeTarget(True, "dev", "https://[::1]:6443"), True, id="ipv6-loopback"),
        pytest.param(
            KubeTarget(True, "prod-eu", "https://k8s.prod.example.com"), False, id="remote"
        ),
        pytest.param(KubeTarget(True, "eks", "https://10.0.0.1:443"), False, id="remote-ip"),
        pytest.param(KubeTarget(False, reason="no context"), True, id="unknown-counts-as-local"),
    ],
)
def test_is_local(target: KubeTarget, local: bool) -> None:
    assert is_local(target) is local


def test_remote_floors_use_the_largest_schedulable_node() -> None:
    nodes = NodeRead(
        True,
        nodes=(
            parse_node(node("big", "64", "3Gi", unschedulable=True)),  # cordoned: not counted
            parse_node(node("mid", "8", "4Gi")),
        ),
    )
    findings = check_cluster(nodes, Thresholds())
    assert [f.level for f in findings] == ["fail"]
    assert "the largest node (mid)" in findings[0].message


def test_remote_nodes_not_read_are_a_note_not_a_pass() -> None:
    findings = check_cluster(NodeRead(False, skipped=True), Thresholds())
    assert [f.level for f in findings] == ["note"]
    assert "not checked" in findings[0].message


@pytest.mark.parametrize("part", ["plain", "/home/ana/my kube/config", "it's", "", "a$b", "ü"])
def test_remedy_quoting_is_shlex_quote_on_posix(part: str) -> None:
    import shlex

    from installer.decide import shellquote

    assert shellquote.join([part], windows=False) == shlex.quote(part)


@pytest.mark.parametrize(
    ("part", "quoted"),
    [
        pytest.param("plain", "plain", id="plain-word"),
        pytest.param(r"C:\Users\Jo\kube", r"C:\Users\Jo\kube", id="windows-path"),
        pytest.param("it's", "'it''s'", id="quote-doubled-not-sh-style"),
        pytest.param("a$b", "'a$b'", id="no-variable-expansion"),
        pytest.param("", "''", id="empty"),
        pytest.param("-n", "-n", id="a-flag-as-it-is"),
        pytest.param("@args", "'@args'", id="not-splatted"),
    ],
)
def test_remedy_quoting_for_powershell(part: str, quoted: str) -> None:
    from installer.decide import shellquote

    assert shellquote.join([part], windows=True) == quoted
