"""What `install` asks helm, and how it reads the answers: list, status, repo list; exact argv."""

from __future__ import annotations

import json
from typing import Any

import pytest

from installer.decide.errors import InstallerError
from installer.decide.model import Connection, Installed, ListRead, chart_name
from installer.edges import helm
from tests.fakes.cluster import HELM_NOT_FOUND, release_row

CONN = Connection(kubeconfig="/home/ana/.kube/config", context="prod-eu")
STATES = ["--deployed", "--failed", "--pending", "--uninstalling"]


def as_json(value: Any) -> bytes:
    return json.dumps(value).encode()


# --- chart_name -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chart", "name"),
    [
        pytest.param("client-1.4.2", "client", id="semver"),
        pytest.param("client-v1.4.2", "client", id="v-prefixed"),
        pytest.param("client-1.4.2-rc.1", "client", id="pre-release"),
        pytest.param("client-1.4.2+build", "client", id="build-metadata"),
        pytest.param("client-1.4.2-rc.1+build.7", "client", id="pre-release-and-build"),
        pytest.param("client-10.20.300", "client", id="multi-digit-parts"),
        pytest.param("my-client-chart-0.1.0", "my-client-chart", id="dashes-in-the-name"),
        pytest.param("client-2-1.0.0", "client-2", id="number-in-the-name"),
        pytest.param("client", "client", id="no-version"),
        pytest.param("client-latest", "client-latest", id="not-a-version"),
        pytest.param("client-1.4", "client-1.4", id="two-part-version-is-not-semver"),
        pytest.param("cert-manager-v1.14.0", "cert-manager", id="another-chart"),
    ],
)
def test_chart_name(chart: str, name: str) -> None:
    assert chart_name(chart) == name


@pytest.mark.parametrize(
    ("chart", "is_client"),
    [
        pytest.param("client-1.4.2", True, id="client"),
        pytest.param("client", True, id="client-without-version"),
        pytest.param("client-chart-1.0.0", False, id="longer-name"),
        pytest.param("my-client-1.0.0", False, id="prefixed-name"),
        pytest.param("Client-1.0.0", False, id="case-differs"),
    ],
)
def test_installed_is_client(chart: str, is_client: bool) -> None:
    assert Installed("r", "ns", chart, "deployed").is_client is is_client


# --- list -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conn", "flags"),
    [
        pytest.param(Connection(), [], id="default-connection"),
        pytest.param(
            CONN,
            ["--kubeconfig", "/home/ana/.kube/config", "--kube-context", "prod-eu"],
            id="kubeconfig-and-context",
        ),
        pytest.param(Connection(context="kind"), ["--kube-context", "kind"], id="context-only"),
        pytest.param(Connection(kubeconfig="/k"), ["--kubeconfig", "/k"], id="kubeconfig-only"),
    ],
)
def test_list_args(conn: Connection, flags: list[str]) -> None:
    assert helm.list_args(conn) == [
        "list",
        "--all-namespaces",
        *STATES,
        "--max",
        "0",
        "-o",
        "json",
        *flags,
    ]


def test_parse_list_good_rows_keep_their_status() -> None:
    rows = [
        release_row("tracebloc", status="deployed"),
        release_row("edge", "tb-old", status="pending-upgrade", chart="client-1.3.0"),
        release_row("cm", "cert-manager", chart="cert-manager-v1.14.0"),
    ]

    read = helm.parse_list(0, as_json(rows), b"")

    assert read == ListRead(
        True,
        (
            Installed("tracebloc", "tracebloc", "client-1.4.2", "deployed"),
            Installed("edge", "tb-old", "client-1.3.0", "pending-upgrade"),
            Installed("cm", "cert-manager", "cert-manager-v1.14.0", "deployed"),
        ),
    )
    assert [r.is_client for r in read.releases] == [True, True, False]


@pytest.mark.parametrize(
    "out",
    [
        pytest.param(b"[]", id="empty-list"),
        pytest.param(b"[]\n", id="trailing-newline"),
    ],
)
def test_parse_list_nothing_installed(out: bytes) -> None:
    assert helm.parse_list(0, out, b"") == ListRead(True, ())


def test_parse_list_row_without_status_is_kept() -> None:
    row = {"name": "r", "namespace": "ns", "chart": "client-1.0.0"}

    assert helm.parse_list(0, as_json([row]), b"").releases == (
        Installed("r", "ns", "client-1.0.0", ""),
    )


@pytest.mark.parametrize(
    ("rc", "out", "err", "reason"),
    [
        pytest.param(
            1,
            b"",
            b"W1101 warning\nError: Kubernetes cluster unreachable\n",
            "exit 1: Error: Kubernetes cluster unreachable",
            id="failed-reason-is-last-line",
        ),
        pytest.param(1, b"[]", b"", "exit 1 with no message", id="failed-silently"),
        pytest.param(0, b"NAME NAMESPACE\n", b"", "not JSON", id="table-not-json"),
        # Only a well-formed empty list says nothing is installed.
        pytest.param(0, b"", b"", "printed nothing", id="exit-0-no-output"),
        pytest.param(0, b"  \n", b"", "printed nothing", id="exit-0-only-whitespace"),
        pytest.param(0, b"null", b"", "not a list", id="json-null"),
        pytest.param(0, b"[", b"", "not JSON", id="output-cut-off"),
        pytest.param(0, b'{"name": "r"}', b"", "not a list", id="json-object-not-a-list"),
        pytest.param(0, b'"client"', b"", "not a list", id="json-string-not-a-list"),
        pytest.param(
            0,
            as_json([{"name": "r", "namespace": "ns"}]),
            b"",
            "did not explain",
            id="row-missing-chart",
        ),
        pytest.param(
            0,
            as_json([{"name": "r", "chart": "client-1.0.0"}]),
            b"",
            "did not explain",
            id="row-missing-namespace",
        ),
        pytest.param(
            0,
            as_json([{"name": 7, "namespace": "ns", "chart": "client-1.0.0"}]),
            b"",
            "did not explain",
            id="row-name-not-a-string",
        ),
        pytest.param(
            0, as_json([release_row(), "tracebloc"]), b"", "did not explain", id="row-not-an-object"
        ),
    ],
)
def test_parse_list_unreadable(rc: int, out: bytes, err: bytes, reason: str) -> None:
    read = helm.parse_list(rc, out, err)

    assert not read.readable
    assert read.releases == ()
    assert reason in read.reason


# --- status ---------------------------------------------------------------------------------


def test_status_args() -> None:
    assert helm.status_args("tracebloc", "tb", CONN) == [
        "status",
        "tracebloc",
        "-n",
        "tb",
        "-o",
        "json",
        "--kubeconfig",
        "/home/ana/.kube/config",
        "--kube-context",
        "prod-eu",
    ]


@pytest.mark.parametrize(
    "status", ["deployed", "pending-upgrade", "pending-install", "failed", "uninstalling"]
)
def test_parse_status_reads_the_state(status: str) -> None:
    out = as_json({"name": "tracebloc", "info": {"status": status, "description": "x"}})

    assert helm.parse_status(0, out, b"", "tb") == status


@pytest.mark.parametrize(
    "err",
    [
        pytest.param(HELM_NOT_FOUND.encode(), id="release-not-found"),
        pytest.param(b'Error: namespaces "tb" not found\n', id="namespace-not-found"),
    ],
)
def test_parse_status_absent(err: bytes) -> None:
    assert helm.parse_status(1, b"", err, "tb") is None


@pytest.mark.parametrize(
    ("rc", "out", "err", "said"),
    [
        pytest.param(
            1,
            b"",
            b"Error: Kubernetes cluster unreachable\n",
            "Kubernetes cluster unreachable",
            id="cluster-unreachable",
        ),
        pytest.param(
            1,
            b"",
            b'Error: namespaces "other" not found\n',
            "other",
            id="another-namespace-missing-is-not-absence",
        ),
        pytest.param(0, b"not json", b"", "without a release state", id="not-json"),
        pytest.param(
            0, as_json({"name": "tracebloc"}), b"", "without a release state", id="missing-info"
        ),
        pytest.param(
            0, as_json({"info": {}}), b"", "without a release state", id="missing-info-status"
        ),
        pytest.param(
            0, as_json({"info": {"status": None}}), b"", "without a release state", id="null-status"
        ),
        pytest.param(
            0,
            as_json({"info": "deployed"}),
            b"",
            "without a release state",
            id="info-not-an-object",
        ),
        pytest.param(0, as_json(["deployed"]), b"", "without a release state", id="json-list"),
        pytest.param(0, b"", b"", "without a release state", id="exit-0-no-output"),
        pytest.param(
            0, as_json({"info": {"status": ""}}), b"", "without a release state", id="empty-status"
        ),
    ],
)
def test_parse_status_unreadable_raises(rc: int, out: bytes, err: bytes, said: str) -> None:
    with pytest.raises(InstallerError) as caught:
        helm.parse_status(rc, out, err, "tb")
    assert said in caught.value.message


# --- recovery argv --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conn", "flags"),
    [
        pytest.param(Connection(), [], id="default-connection"),
        pytest.param(
            CONN,
            ["--kubeconfig", "/home/ana/.kube/config", "--kube-context", "prod-eu"],
            id="kubeconfig-and-context",
        ),
    ],
)
def test_recovery_args(conn: Connection, flags: list[str]) -> None:
    assert helm.rollback_args("tracebloc", "tb", conn) == [
        "rollback",
        "tracebloc",
        "-n",
        "tb",
        "--wait",
        "--timeout",
        "5m",
        *flags,
    ]
    assert helm.uninstall_args("tracebloc", "tb", conn) == [
        "uninstall",
        "tracebloc",
        "-n",
        "tb",
        "--wait",
        "--timeout",
        "5m",
        *flags,
    ]


# --- repositories ---------------------------------------------------------------------------


def test_repo_list_args() -> None:
    assert helm.repo_list_args() == ["repo", "list", "-o", "json"]


@pytest.mark.parametrize(
    ("rc", "out", "err", "repos"),
    [
        pytest.param(1, b"", b"Error: no repositories to show\n", {}, id="helm3-no-repositories"),
        pytest.param(0, b"[]", b"", {}, id="helm4-empty-list"),
        pytest.param(
            0,
            as_json(
                [
                    {"name": "tracebloc", "url": "https://tracebloc.github.io/client"},
                    {"name": "bitnami", "url": "https://charts.bitnami.com/bitnami"},
                ]
            ),
            b"",
            {
                "tracebloc": "https://tracebloc.github.io/client",
                "bitnami": "https://charts.bitnami.com/bitnami",
            },
            id="two-repos",
        ),
    ],
)
def test_parse_repo_list(rc: int, out: bytes, err: bytes, repos: dict[str, str]) -> None:
    assert helm.parse_repo_list(rc, out, err) == repos


@pytest.mark.parametrize(
    ("rc", "out", "err", "said"),
    [
        pytest.param(
            1,
            b"",
            b"Error: couldn't load repositories file: permission denied\n",
            "permission denied",
            id="repositories-file-unreadable",
        ),
        pytest.param(2, b"", b"", "exit 2 with no message", id="failed-silently"),
        pytest.param(0, b"NAME URL\n", b"", "not JSON", id="table-not-json"),
        pytest.param(0, as_json({"name": "tracebloc"}), b"", "not a list", id="object-not-a-list"),
        pytest.param(0, b"", b"", "printed nothing", id="exit-0-no-output"),
        pytest.param(0, b"null", b"", "not a list", id="json-null"),
        pytest.param(
            0, as_json([{"url": "https://x"}]), b"", "without a name", id="row-without-name"
        ),
    ],
)
def test_parse_repo_list_failure_raises(rc: int, out: bytes, err: bytes, said: str) -> None:
    with pytest.raises(InstallerError) as caught:
        helm.parse_repo_list(rc, out, err)
    assert said in caught.value.message


@pytest.mark.parametrize(
    ("ca_file", "argv"),
    [
        pytest.param(
            None,
            ["repo", "add", "tracebloc", "https://tracebloc.github.io/client"],
            id="without-ca",
        ),
        pytest.param(
            "",
            ["repo", "add", "tracebloc", "https://tracebloc.github.io/client"],
            id="empty-ca-is-none",
        ),
        pytest.param(
            "/etc/corp/root ca.pem",
            [
                "repo",
                "add",
                "tracebloc",
                "https://tracebloc.github.io/client",
                "--ca-file",
                "/etc/corp/root ca.pem",
            ],
            id="with-ca-file",
        ),
    ],
)
def test_repo_add_args(ca_file: str | None, argv: list[str]) -> None:
    assert helm.repo_add_args("tracebloc", "https://tracebloc.github.io/client", ca_file) == argv


def test_repo_update_args_names_only_our_repo() -> None:
    assert helm.repo_update_args("tracebloc") == ["repo", "update", "tracebloc"]
