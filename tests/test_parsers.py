"""kubectl/helm output parsed from raw bytes, and the exact argv each module builds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from installer.decide.model import Connection, Node, ReleaseState
from installer.edges.helm import get_values_args, parse_release, upgrade_install_args
from installer.edges.kubectl import get_nodes_args, parse_nodes
from tests.fakes.cluster import node, nodes_json

GiB = 2**30
CONN = Connection(kubeconfig="/home/ana/.kube/config", context="prod-eu")


def doc(*items: Any) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)}).encode()


# --- kubectl: nodes -------------------------------------------------------------------------


def test_parse_nodes_valid() -> None:
    read = parse_nodes(
        nodes_json(node("a", "3920m", "16302572Ki"), node("b", "8", "32Gi")).encode()
    )
    assert read.readable
    assert read.nodes == (
        Node("a", 3920, 16302572 * 1024, schedulable=True, parsed=True),
        Node("b", 8000, 32 * GiB, schedulable=True, parsed=True),
    )


def test_parse_nodes_cordoned() -> None:
    read = parse_nodes(doc(node("a", unschedulable=True), node("b", unschedulable=False)))
    assert [(n.name, n.schedulable, n.parsed) for n in read.nodes] == [
        ("a", False, True),
        ("b", True, True),
    ]
    assert read.schedulable_count == 1


@pytest.mark.parametrize(
    ("item", "reason_part"),
    [
        pytest.param(node("n", "4", "16GB"), "16GB", id="invalid-memory-quantity"),
        pytest.param(node("n", "four", "16Gi"), "four", id="invalid-cpu-quantity"),
        pytest.param(node("n", "4", None), "memory", id="memory-missing"),
        pytest.param(node("n", None, "16Gi"), "cpu", id="cpu-missing"),
        pytest.param(node("n", 4, "16Gi"), "cpu", id="cpu-is-a-number-not-a-string"),
        pytest.param(node("n", "4", 17179869184), "memory", id="memory-is-a-number"),
        pytest.param(node("n", "4", None) | {"status": {}}, "", id="allocatable-missing"),
        pytest.param(node("n") | {"status": {"allocatable": None}}, "", id="allocatable-null"),
        pytest.param(node("n") | {"status": None}, "", id="status-null"),
    ],
)
def test_parse_nodes_unparseable_node(item: dict[str, Any], reason_part: str) -> None:
    read = parse_nodes(doc(item))
    assert read.readable
    (parsed,) = read.nodes
    assert parsed.name == "n"
    assert not parsed.parsed
    assert not parsed.usable
    assert reason_part in parsed.reason


def test_parse_nodes_unicode_digits_are_unparseable() -> None:
    (parsed,) = parse_nodes(doc(node("n", "4", "\u0663Gi"))).nodes
    assert not parsed.parsed


def test_parse_nodes_absurdly_long_quantity_is_an_unparseable_node() -> None:
    read = parse_nodes(doc(node("n", "1" * 5000, "16Gi"), node("ok", "4", "16Gi")))
    assert read.readable
    assert [n.parsed for n in read.nodes] == [False, True]


def test_parse_nodes_unparseable_beside_valid() -> None:
    read = parse_nodes(doc(node("bad", "4", "16GB"), node("good", "4", "16Gi")))
    assert [(n.name, n.parsed) for n in read.nodes] == [("bad", False), ("good", True)]


@pytest.mark.parametrize(
    ("item", "name"),
    [
        pytest.param(
            {"status": {"allocatable": {"cpu": "4", "memory": "1Gi"}}},
            "<unnamed>",
            id="no-metadata",
        ),
        pytest.param(
            {"metadata": None, "status": {"allocatable": {"cpu": "4", "memory": "1Gi"}}},
            "<unnamed>",
            id="metadata-null",
        ),
        pytest.param(
            {"metadata": {"name": 7}, "status": {"allocatable": {"cpu": "4", "memory": "1Gi"}}},
            "<unnamed>",
            id="name-not-a-string",
        ),
        pytest.param(
            {
                "metadata": {"name": "x"},
                "spec": None,
                "status": {"allocatable": {"cpu": "4", "memory": "1Gi"}},
            },
            "x",
            id="spec-null-is-schedulable",
        ),
    ],
)
def test_parse_nodes_odd_but_usable_items(item: dict[str, Any], name: str) -> None:
    (parsed,) = parse_nodes(doc(item)).nodes
    assert parsed.name == name
    assert parsed.usable


@pytest.mark.parametrize(
    "item",
    [
        pytest.param(None, id="null-item"),
        pytest.param("node", id="string-item"),
        pytest.param([1, 2], id="list-item"),
    ],
)
def test_parse_nodes_item_that_is_not_an_object(item: Any) -> None:
    read = parse_nodes(doc(item))
    assert read.readable
    (parsed,) = read.nodes
    assert not parsed.usable


def test_parse_nodes_unschedulable_must_be_true_not_truthy() -> None:
    item = node("n") | {"spec": {"unschedulable": "true"}}
    (parsed,) = parse_nodes(doc(item)).nodes
    assert parsed.schedulable


@pytest.mark.parametrize(
    "out",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"   \n", id="whitespace"),
        pytest.param(doc(node("a"))[:-7], id="truncated-json"),
        pytest.param(b"\xff\xfe{not json", id="invalid-utf8-not-json"),
        pytest.param(
            b"error: You must be logged in to the server (Unauthorized)\n", id="plain-text"
        ),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="pathologically-nested"),
        pytest.param(b"null", id="null-document"),
        pytest.param(b"[]", id="list-document"),
        pytest.param(b'"items"', id="string-document"),
        pytest.param(b"42", id="number-document"),
        pytest.param(b"{}", id="object-without-items"),
        pytest.param(b'{"items": null}', id="items-null"),
        pytest.param(b'{"items": {"a": 1}}', id="items-not-a-list"),
    ],
)
def test_parse_nodes_unreadable(out: bytes) -> None:
    read = parse_nodes(out)
    assert not read.readable
    assert read.nodes == ()
    assert read.reason.startswith("kubectl printed")


def test_parse_nodes_empty_list_is_readable() -> None:
    read = parse_nodes(doc())
    assert read.readable
    assert read.nodes == ()


def test_parse_nodes_bom_prefixed() -> None:
    read = parse_nodes(b"\xef\xbb\xbf" + doc(node("a", "4", "16Gi")))
    assert read.readable
    assert [n.name for n in read.nodes] == ["a"]


def test_parse_nodes_invalid_utf8_inside_a_string_is_replaced() -> None:
    out = doc(node("NAME", "4", "16Gi")).replace(b"NAME", b"node-\xff")
    read = parse_nodes(out)
    assert read.readable
    (parsed,) = read.nodes
    assert parsed.name == "node-\ufffd"
    assert parsed.usable


def test_parse_nodes_huge_list() -> None:
    items = [node(f"n{i:04d}", f"{(i % 64) + 1}", f"{(i % 256) + 1}Gi") for i in range(5000)]
    read = parse_nodes(doc(*items))
    assert read.readable
    assert len(read.nodes) == 5000
    assert all(n.usable for n in read.nodes)
    assert read.nodes[4999] == Node(
        "n4999", (4999 % 64 + 1) * 1000, (4999 % 256 + 1) * GiB, schedulable=True, parsed=True
    )


# --- helm: release values -------------------------------------------------------------------


def release(rc: int, out: bytes = b"", err: bytes = b"", namespace: str = "tracebloc") -> Any:
    return parse_release("tracebloc", namespace, rc, out, err)


@pytest.mark.parametrize(
    ("err", "namespace"),
    [
        pytest.param(b"Error: release: not found\n", "tracebloc", id="release-not-found"),
        pytest.param(b'Error: namespaces "team-a" not found\n', "team-a", id="namespace-not-found"),
        pytest.param(
            b"WARNING: kubeconfig is group-readable\nError: release: not found\n",
            "tracebloc",
            id="not-found-after-a-warning",
        ),
    ],
)
def test_parse_release_absent(err: bytes, namespace: str) -> None:
    read = release(1, err=err, namespace=namespace)
    assert read.state is ReleaseState.ABSENT
    assert dict(read.values) == {}
    assert read.namespace == namespace


@pytest.mark.parametrize(
    ("rc", "err", "reason"),
    [
        pytest.param(
            1,
            b'Error: Kubernetes cluster unreachable: Get "https://127.0.0.1:6443/version": '
            b"dial tcp 127.0.0.1:6443: connect: connection refused\n",
            'exit 1: Error: Kubernetes cluster unreachable: Get "https://127.0.0.1:6443/version": '
            "dial tcp 127.0.0.1:6443: connect: connection refused",
            id="connection-refused",
        ),
        pytest.param(
            1,
            b"Error: query: failed to query with labels: secrets is forbidden: User "
            b'"ana" cannot list resource "secrets" in API group "" in the namespace '
            b'"tracebloc"\n',
            "exit 1: Error: query: failed to query with labels: secrets is forbidden: User "
            '"ana" cannot list resource "secrets" in API group "" in the namespace '
            '"tracebloc"',
            id="forbidden",
        ),
        pytest.param(2, b"", "exit 2 with no message", id="failure-without-a-message"),
        pytest.param(
            1,
            b'Error: namespaces "other" not found\n',
            'exit 1: Error: namespaces "other" not found',
            id="a-different-namespace-not-found",
        ),
        pytest.param(
            1, b"\xffError: boom\n", "exit 1: \ufffdError: boom", id="invalid-utf8-stderr"
        ),
    ],
)
def test_parse_release_unreadable_failures(rc: int, err: bytes, reason: str) -> None:
    read = release(rc, err=err)
    assert read.state is ReleaseState.UNREADABLE
    assert read.reason == reason
    assert dict(read.values) == {}


@pytest.mark.parametrize(
    "out",
    [
        pytest.param(b"", id="empty-output"),
        pytest.param(b"USER-SUPPLIED VALUES:\nenv: {}\n", id="yaml-not-json"),
        pytest.param(b'{"env": {"RESOURCE_LIMITS": "cpu=4', id="truncated-json"),
        pytest.param(b"\xff\xfe\x00", id="binary-garbage"),
        pytest.param(b'["env"]', id="json-list"),
        pytest.param(b'"env"', id="json-string"),
        pytest.param(b"{" * 100_000, id="pathologically-nested"),
    ],
)
def test_parse_release_rc0_but_unreadable(out: bytes) -> None:
    read = release(0, out=out)
    assert read.state is ReleaseState.UNREADABLE
    assert read.reason.startswith("helm printed")


@pytest.mark.parametrize(
    ("out", "values"),
    [
        pytest.param(b"null", {}, id="null-is-no-values"),
        pytest.param(b"null\n", {}, id="null-with-newline"),
        pytest.param(b"{}", {}, id="empty-map"),
        pytest.param(
            b'{"env": {"RESOURCE_LIMITS": "cpu=4,memory=16Gi", "RESOURCE_PROVENANCE": "user"}}',
            {"env": {"RESOURCE_LIMITS": "cpu=4,memory=16Gi", "RESOURCE_PROVENANCE": "user"}},
            id="values",
        ),
        pytest.param(b'\xef\xbb\xbf{"clientId": "x"}', {"clientId": "x"}, id="bom-prefixed"),
        pytest.param(
            '{"clientPassword": "pä:ss#@"}'.encode(),
            {"clientPassword": "pä:ss#@"},
            id="unicode-values",
        ),
    ],
)
def test_parse_release_present(out: bytes, values: dict[str, Any]) -> None:
    read = release(0, out=out, err=b"WARNING: something harmless\n")
    assert read.state is ReleaseState.PRESENT
    assert dict(read.values) == values
    assert (read.name, read.namespace) == ("tracebloc", "tracebloc")


# --- argv -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conn", "timeout", "argv"),
    [
        pytest.param(
            Connection(),
            10.0,
            ["get", "nodes", "-o", "json", "--request-timeout=10s"],
            id="default",
        ),
        pytest.param(
            CONN,
            10.0,
            [
                "get",
                "nodes",
                "-o",
                "json",
                "--kubeconfig",
                "/home/ana/.kube/config",
                "--context",
                "prod-eu",
                "--request-timeout=10s",
            ],
            id="with-connection",
        ),
        pytest.param(
            Connection(context="kind-kind"),
            10.0,
            ["get", "nodes", "-o", "json", "--context", "kind-kind", "--request-timeout=10s"],
            id="context-only",
        ),
        pytest.param(
            Connection(kubeconfig="C:\\Users\\ana\\.kube\\config"),
            10.0,
            [
                "get",
                "nodes",
                "-o",
                "json",
                "--kubeconfig",
                "C:\\Users\\ana\\.kube\\config",
                "--request-timeout=10s",
            ],
            id="kubeconfig-only-windows-path",
        ),
        pytest.param(
            Connection(),
            2.1,
            ["get", "nodes", "-o", "json", "--request-timeout=3s"],
            id="fractional-timeout-rounds-up",
        ),
        pytest.param(
            Connection(),
            0.2,
            ["get", "nodes", "-o", "json", "--request-timeout=1s"],
            id="sub-second-timeout-is-at-least-1s",
        ),
    ],
)
def test_get_nodes_args(conn: Connection, timeout: float, argv: list[str]) -> None:
    assert get_nodes_args(conn, timeout) == argv


@pytest.mark.parametrize(
    ("conn", "argv"),
    [
        pytest.param(
            Connection(), ["get", "values", "team-a", "-n", "team-a", "-o", "json"], id="default"
        ),
        pytest.param(
            CONN,
            [
                "get",
                "values",
                "team-a",
                "-n",
                "team-a",
                "-o",
                "json",
                "--kubeconfig",
                "/home/ana/.kube/config",
                "--kube-context",
                "prod-eu",
            ],
            id="with-connection",
        ),
        pytest.param(
            Connection(context="kind-kind"),
            [
                "get",
                "values",
                "team-a",
                "-n",
                "team-a",
                "-o",
                "json",
                "--kube-context",
                "kind-kind",
            ],
            id="context-only",
        ),
    ],
)
def test_get_values_args(conn: Connection, argv: list[str]) -> None:
    assert get_values_args("team-a", "team-a", conn) == argv


@pytest.mark.parametrize(
    ("conn", "values_path", "argv"),
    [
        pytest.param(
            Connection(),
            "/home/ana/.tracebloc/values.yaml",
            [
                "upgrade",
                "--install",
                "team-a",
                "tracebloc/client",
                "--namespace",
                "team-a",
                "--create-namespace",
                "--cleanup-on-fail",
                "--values",
                "/home/ana/.tracebloc/values.yaml",
            ],
            id="default",
        ),
        pytest.param(
            CONN,
            "C:\\Users\\ana\\.tracebloc\\values.yaml",
            [
                "upgrade",
                "--install",
                "team-a",
                "tracebloc/client",
                "--namespace",
                "team-a",
                "--create-namespace",
                "--cleanup-on-fail",
                "--values",
                "C:\\Users\\ana\\.tracebloc\\values.yaml",
                "--kubeconfig",
                "/home/ana/.kube/config",
                "--kube-context",
                "prod-eu",
            ],
            id="with-connection-windows-path",
        ),
    ],
)
def test_upgrade_install_args(conn: Connection, values_path: str, argv: list[str]) -> None:
    assert upgrade_install_args("team-a", "tracebloc/client", "team-a", values_path, conn) == argv
