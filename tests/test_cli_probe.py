"""`python -m installer probe` as a process against fake kubectl/helm (issue 2).

Every test drives the real CLI through the `cluster` fixture: PATH holds only the fakes, the
fakes replay a scripted cluster state and log every call, and the tests assert the JSON and
the exact calls (count and argv).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from installer import __version__
from tests.fakes.cluster import FakeCluster, node, nodes_json
from tests.fakes.executables import executable_path
from tests.fakes.mirror import PLATFORM, nothing_to_download
from tests.fakes.processes import gone_soon, kill_if_running

KUBECTL_ARGV = ["get", "nodes", "-o", "json", "--request-timeout=10s"]
HELM_ARGV = ["get", "values", "tracebloc", "-n", "tracebloc", "-o", "json"]
LITERAL = "cpu=2,memory=8Gi"
LAPTOP_SIZE = "cpu=7,memory=13Gi"  # 8 CPU / 16Gi minus 1 core and 3 GiB of overhead
UNREACHABLE = (
    'Error: Kubernetes cluster unreachable: Get "https://127.0.0.1:6443/version": '
    "dial tcp 127.0.0.1:6443: connect: connection refused\n"
)
REFUSED = (
    "The connection to the server 127.0.0.1:6443 was refused - "
    "did you specify the right host or port?\n"
)


def laptop() -> dict[str, Any]:
    return node("laptop", "8", "16Gi")


def run_probe(cluster: FakeCluster, *args: str, **env: str) -> tuple[dict[str, Any], str]:
    """Run `probe --json`; exit 0 and no traceback are required of every probe."""
    result = cluster.run("probe", "--json", *args, **env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return single_json_document(result.stdout), result.stderr


def single_json_document(stdout: str) -> dict[str, Any]:
    document, end = json.JSONDecoder().raw_decode(stdout)
    assert stdout[end:].strip() == "", f"more than one document on stdout: {stdout[end:]!r}"
    assert isinstance(document, dict)
    return document



@pytest.fixture
def reap(cluster: FakeCluster) -> Iterator[FakeCluster]:
    """After the test, kill any fake (or its grandchild) that the probe failed to stop."""
    yield cluster
    pids = [entry["pid"] for entry in cluster.call_log()] + cluster.grandchild_pids()
    for pid in pids:
        kill_if_running(pid)


# --- the happy path -------------------------------------------------------------------------


def test_fresh_install_on_a_laptop_is_sized_from_its_node_with_one_call_each(
    cluster: FakeCluster,
) -> None:
    cluster.nodes(laptop()).release_absent()

    doc, _ = run_probe(cluster)

    assert doc["training"] == {
        "size": LAPTOP_SIZE,
        "provenance": "installer",
        "source": "machine",
        "undersized": False,
        "unschedulable": False,
    }
    assert doc["cluster"]["readable"] is True
    assert doc["cluster"]["anchor"] == "laptop"
    assert doc["cluster"]["nodes"] == [
        {
            "name": "laptop",
            "cpu_millicores": 8000,
            "memory_bytes": 16 * 2**30,
            "schedulable": True,
            "parsed": True,
        }
    ]
    assert doc["release"] == {"name": "tracebloc", "namespace": "tracebloc", "state": "absent"}
    assert doc["tools"]["kubectl"] == {"path": str(cluster.executable("kubectl")),
                                       "version": "v1.37.1", "source": "path"}  # fmt: skip
    assert doc["tools"]["helm"] == {"path": str(cluster.executable("helm")),
                                    "version": "v4.2.3", "source": "path"}  # fmt: skip
    assert doc["warnings"] == []
    machine = doc["machine"]
    assert machine["os"] in ("linux", "darwin", "windows")
    assert machine["arch"]
    assert isinstance(machine["cpu_count"], int) and machine["cpu_count"] >= 1
    assert machine["memory_total_bytes"] >= machine["memory_available_bytes"] > 0
    assert isinstance(machine["wsl"], bool)
    assert cluster.calls("kubectl") == [KUBECTL_ARGV]
    assert cluster.calls("helm") == [HELM_ARGV]


# --- namespace and connection ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "env", "expected"),
    [
        pytest.param(["--namespace", "My Team_NS"], {}, "my-team-ns", id="flag-sanitised"),
        pytest.param([], {"TB_NAMESPACE": "Data Science"}, "data-science", id="env-when-no-flag"),
        pytest.param(["--namespace", "ops"], {"TB_NAMESPACE": "other"}, "ops", id="flag-beats-env"),
        pytest.param(["--namespace", "!!!"], {}, "default", id="nothing-left-is-default"),
        pytest.param([], {}, "tracebloc", id="neither-is-tracebloc"),
    ],
)
def test_namespace_is_sanitised_and_names_the_release(
    cluster: FakeCluster, flags: list[str], env: dict[str, str], expected: str
) -> None:
    cluster.nodes(laptop()).release_absent()

    doc, _ = run_probe(cluster, *flags, **env)

    assert doc["release"]["name"] == expected
    assert doc["release"]["namespace"] == expected
    assert cluster.calls("helm") == [["get", "values", expected, "-n", expected, "-o", "json"]]
    assert cluster.calls("kubectl") == [KUBECTL_ARGV]


def test_kubeconfig_and_context_flags_reach_both_tools(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    kubeconfig = str(tmp_path / "team config.yaml")
    Path(kubeconfig).write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    cluster.nodes(laptop()).release_absent()

    doc, _ = run_probe(cluster, "--kubeconfig", kubeconfig, "--context", "ctx-a")

    assert doc["training"]["size"] == LAPTOP_SIZE
    assert cluster.calls("kubectl") == [
        ["get", "nodes", "-o", "json", "--kubeconfig", kubeconfig, "--context", "ctx-a",
         "--request-timeout=10s"],
    ]  # fmt: skip
    assert cluster.calls("helm") == [
        [*HELM_ARGV, "--kubeconfig", kubeconfig, "--kube-context", "ctx-a"],
    ]


def test_missing_kubeconfig_file_is_bad_input(cluster: FakeCluster, tmp_path: Path) -> None:
    missing = str(tmp_path / "nope" / "config")
    result = cluster.run("probe", "--kubeconfig", missing)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: --kubeconfig {missing!r} is not a file"]
    assert cluster.calls() == []


def test_kubeconfig_env_is_inherited_by_both_tools(cluster: FakeCluster, tmp_path: Path) -> None:
    kubeconfig = str(tmp_path / "kube" / "config")
    cluster.nodes(laptop()).release_absent()

    run_probe(cluster, KUBECONFIG=kubeconfig)

    log = cluster.call_log()
    assert sorted(entry["tool"] for entry in log if entry["argv"][:1] != ["version"]) == [
        "helm", "kubectl"]  # fmt: skip
    assert all(entry["env"].get("KUBECONFIG") == kubeconfig for entry in log), log
    assert cluster.calls("kubectl") == [KUBECTL_ARGV]
    assert cluster.calls("helm") == [HELM_ARGV]


# --- the installed release ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env_values", "expected"),
    [
        pytest.param(
            {"RESOURCE_LIMITS": "cpu=6,memory=24Gi", "RESOURCE_PROVENANCE": "user"},
            ("cpu=6,memory=24Gi", "user", "carried"),
            id="user-choice-carried",
        ),
        pytest.param(
            {"RESOURCE_LIMITS": "cpu=3,memory=10Gi", "RESOURCE_PROVENANCE": "installer"},
            ("cpu=3,memory=10Gi", "installer", "carried"),
            id="installer-choice-carried",
        ),
        pytest.param(
            {"RESOURCE_LIMITS": "cpu=6,memory=24Gi", "RESOURCE_PROVENANCE": "User "},
            ("cpu=6,memory=24Gi", "unknown", "carried"),
            id="junk-marker-is-unknown",
        ),
        pytest.param(
            {"RESOURCE_LIMITS": "cpu=6,memory=24Gi"},
            ("cpu=6,memory=24Gi", "unknown", "carried"),
            id="no-marker-is-unknown",
        ),
        pytest.param(
            {"RESOURCE_LIMITS": LITERAL, "RESOURCE_PROVENANCE": "user"},
            (LAPTOP_SIZE, "installer", "machine"),
            id="historic-literal-with-user-marker-not-carried",
        ),
        pytest.param(
            {"OTHER": "x"},
            (LAPTOP_SIZE, "installer", "machine"),
            id="values-without-resource-limits",
        ),
    ],
)
def test_installed_release_values(
    cluster: FakeCluster, env_values: dict[str, str], expected: tuple[str, str, str]
) -> None:
    cluster.nodes(laptop()).release_values({"env": env_values, "storage": {"size": "10Gi"}})

    doc, _ = run_probe(cluster)

    size, provenance, source = expected
    assert (doc["training"]["size"], doc["training"]["provenance"], doc["training"]["source"]) == (
        size, provenance, source)  # fmt: skip
    assert doc["release"] == {"name": "tracebloc", "namespace": "tracebloc", "state": "present"}
    assert doc["warnings"] == []
    assert cluster.calls("helm") == [HELM_ARGV]
    assert cluster.calls("kubectl") == [KUBECTL_ARGV]


@pytest.mark.parametrize(
    "stderr",
    [
        pytest.param("Error: release: not found\n", id="release-not-found"),
        pytest.param('Error: namespaces "tracebloc" not found\n', id="namespace-not-found"),
    ],
)
def test_release_absent_on_helms_word(cluster: FakeCluster, stderr: str) -> None:
    cluster.nodes(laptop()).on("helm", "get", "values", stderr=stderr, rc=1)

    doc, _ = run_probe(cluster)

    assert doc["release"]["state"] == "absent"
    assert "reason" not in doc["release"]
    assert doc["warnings"] == []


def test_release_unreadable_is_reported_not_fatal(cluster: FakeCluster) -> None:
    cluster.nodes(laptop()).on("helm", "get", "values", stderr=UNREACHABLE, rc=1)

    doc, _ = run_probe(cluster)

    assert doc["release"]["state"] == "unreadable"
    assert "Kubernetes cluster unreachable" in doc["release"]["reason"]
    assert doc["training"]["source"] == "machine"
    assert doc["training"]["size"] == LAPTOP_SIZE
    assert [w for w in doc["warnings"] if "release could not be read" in w]
    assert len(doc["warnings"]) == 1
    assert cluster.calls("helm") == [HELM_ARGV]


# --- the nodes ------------------------------------------------------------------------------


def test_kubectl_failing_falls_back_without_size_claims(cluster: FakeCluster) -> None:
    cluster.on("kubectl", "get", "nodes", stderr=REFUSED, rc=1).release_absent()

    doc, _ = run_probe(cluster)

    assert doc["cluster"]["readable"] is False
    assert "was refused" in doc["cluster"]["reason"]
    assert doc["cluster"]["nodes"] == []
    assert doc["cluster"]["anchor"] is None
    assert doc["training"] == {
        "size": LITERAL,
        "provenance": "installer",
        "source": "fallback",
        "undersized": False,
        "unschedulable": False,
    }
    assert len(doc["warnings"]) == 1
    assert "nodes could not be read" in doc["warnings"][0]
    assert cluster.calls("kubectl") == [KUBECTL_ARGV]


@pytest.mark.parametrize(
    "items",
    [
        pytest.param([], id="empty-node-list"),
        pytest.param([node("big", "16", "64Gi", unschedulable=True)], id="only-node-cordoned"),
        pytest.param([node("odd", "4", "16GB")], id="only-node-unparseable"),
    ],
)
def test_no_usable_node_falls_back(cluster: FakeCluster, items: list[dict[str, Any]]) -> None:
    cluster.nodes(*items).release_absent()

    doc, _ = run_probe(cluster)

    assert doc["cluster"]["readable"] is True
    assert doc["cluster"]["anchor"] is None
    assert doc["training"]["source"] == "fallback"
    assert doc["training"]["size"] == LITERAL
    assert (doc["training"]["undersized"], doc["training"]["unschedulable"]) == (False, False)
    assert len(doc["warnings"]) == 1


# --- the override ---------------------------------------------------------------------------


def test_override_makes_no_cluster_call(cluster: FakeCluster) -> None:
    cluster.nodes(laptop()).release_values(
        {"env": {"RESOURCE_LIMITS": "cpu=6,memory=24Gi", "RESOURCE_PROVENANCE": "user"}}
    )

    doc, _ = run_probe(cluster, TRACEBLOC_TRAINING_RESOURCES="cpu=4,memory=16Gi")

    assert doc["training"] == {
        "size": "cpu=4,memory=16Gi",
        "provenance": "user",
        "source": "override",
        "undersized": False,
        "unschedulable": False,
    }
    assert doc["release"]["state"] == "skipped"
    assert doc["cluster"]["skipped"] is True
    assert doc["warnings"] == []
    assert cluster.calls() == []


@pytest.mark.parametrize(
    "override",
    [
        pytest.param("cpu=4", id="memory-missing"),
        pytest.param("cpu=4,memory=16GB", id="GB-is-not-a-quantity"),
        pytest.param("4 cores, 16 gigs", id="free-text"),
    ],
)
def test_invalid_override_is_bad_input(cluster: FakeCluster, override: str) -> None:
    cluster.nodes(laptop()).release_absent()

    result = cluster.run("probe", "--json", TRACEBLOC_TRAINING_RESOURCES=override)

    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert errors[0].startswith("error: TRACEBLOC_TRAINING_RESOURCES")
    assert result.stderr.splitlines()[0] == errors[0]
    assert cluster.calls() == []


# --- finding the tools ----------------------------------------------------------------------


def test_missing_tools_are_facts_not_crashes(cluster: FakeCluster) -> None:
    cluster.remove("kubectl")
    cluster.remove("helm")

    doc, _ = run_probe(cluster, **nothing_to_download(cluster.root, PLATFORM))

    assert {name: doc["tools"][name]["source"] for name in ("kubectl", "helm")} == {
        "kubectl": None, "helm": None}  # fmt: skip
    assert doc["cluster"]["readable"] is False
    assert doc["release"]["state"] == "unreadable"
    assert doc["training"]["source"] == "fallback"
    assert any(w.startswith("kubectl: kubectl v") and "cannot be downloaded" in w
               for w in doc["warnings"]), doc["warnings"]  # fmt: skip
    assert any(w.startswith("helm: helm v") and "TRACEBLOC_HELM" in w for w in doc["warnings"])
    assert cluster.calls() == []


def test_missing_helm_alone_still_sizes_from_the_nodes(cluster: FakeCluster) -> None:
    cluster.nodes(laptop())
    cluster.remove("helm")

    doc, _ = run_probe(cluster, **nothing_to_download(cluster.root, PLATFORM))

    assert doc["tools"]["helm"]["source"] is None
    assert doc["release"]["state"] == "unreadable"
    assert doc["training"]["size"] == LAPTOP_SIZE
    assert any(w.startswith("helm: ") for w in doc["warnings"])
    assert cluster.calls("kubectl") == [KUBECTL_ARGV]


def test_explicit_binaries_outside_path_are_used(cluster: FakeCluster, tmp_path: Path) -> None:
    elsewhere = tmp_path / "opt tools"
    elsewhere.mkdir()
    kubectl = cluster.executable("kubectl").rename(executable_path(elsewhere / "kubectl-1.30"))
    helm = cluster.executable("helm").rename(executable_path(elsewhere / "helm4"))
    cluster.nodes(laptop()).release_absent()

    doc, _ = run_probe(cluster, TRACEBLOC_KUBECTL=str(kubectl), TRACEBLOC_HELM=str(helm))

    assert {n: (t["path"], t["source"]) for n, t in doc["tools"].items() if n != "k3d"} == {
        "kubectl": (str(kubectl), "env"), "helm": (str(helm), "env")}  # fmt: skip
    assert doc["training"]["size"] == LAPTOP_SIZE
    assert doc["warnings"] == []
    assert cluster.calls("kubectl") == [KUBECTL_ARGV]
    assert cluster.calls("helm") == [HELM_ARGV]


def test_explicit_binary_that_does_not_exist_is_reported(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-helm")
    cluster.nodes(laptop()).release_absent()

    doc, _ = run_probe(cluster, TRACEBLOC_HELM=missing)

    assert doc["tools"]["helm"]["source"] is None
    assert doc["release"]["state"] == "unreadable"
    assert any("TRACEBLOC_HELM" in w and missing in w for w in doc["warnings"]), doc["warnings"]
    # The named binary is the user's choice: no silent fallback to the helm on PATH.
    assert cluster.calls("helm") == []
    assert cluster.calls("kubectl") == [KUBECTL_ARGV]
    assert doc["training"]["size"] == LAPTOP_SIZE


# --- deadlines ------------------------------------------------------------------------------


def test_wedged_tools_are_stopped_at_the_deadline(reap: FakeCluster) -> None:
    cluster = reap
    cluster.nodes(laptop(), sleep=600).release_absent()
    cluster.on("helm", "get", "values", stdout="{}", sleep=600)

    started = time.monotonic()
    result = cluster.run("probe", "--json", timeout=60, TB_PROBE_TIMEOUT_S="1")
    wall = time.monotonic() - started

    assert result.returncode == 0, result.stderr
    assert wall < 8, f"probe took {wall:.1f}s with a 1s deadline"
    doc = single_json_document(result.stdout)
    assert doc["release"]["state"] == "unreadable"
    assert "1s" in doc["release"]["reason"]
    assert doc["cluster"]["readable"] is False
    assert "1s" in doc["cluster"]["reason"]
    assert doc["training"]["source"] == "fallback"
    # Both reads were started (they run concurrently), and neither fake outlived the probe.
    assert cluster.calls("kubectl") == [["get", "nodes", "-o", "json", "--request-timeout=1s"]]
    assert cluster.calls("helm") == [HELM_ARGV]
    for entry in cluster.call_log():
        assert gone_soon(entry["pid"]), f"fake {entry['tool']} (pid {entry['pid']}) survived"


@pytest.mark.parametrize("tool", ["kubectl", "helm"])
def test_wedged_tools_grandchild_does_not_survive(reap: FakeCluster, tool: str) -> None:
    cluster = reap
    cluster.nodes(laptop()).release_absent()
    match = ("get", "nodes") if tool == "kubectl" else ("get", "values")
    cluster.on(tool, *match, sleep=600, grandchild=True)

    started = time.monotonic()
    result = cluster.run("probe", "--json", timeout=60, TB_PROBE_TIMEOUT_S="1")
    wall = time.monotonic() - started

    assert result.returncode == 0, result.stderr
    assert wall < 8, f"probe took {wall:.1f}s with a 1s deadline"
    single_json_document(result.stdout)
    grandchildren = cluster.grandchild_pids()
    assert len(grandchildren) == 1
    assert gone_soon(grandchildren[0]), f"grandchild {grandchildren[0]} of {tool} survived"


def test_reads_run_concurrently(cluster: FakeCluster) -> None:
    # The one timing check: sequential reads would take at least 4 s (the tools' version
    # queries come first, and take their own fraction of a second).
    cluster.nodes(laptop(), sleep=2.0).release_absent()
    cluster.on("helm", "get", "values", stderr="Error: release: not found\n", rc=1, sleep=2.0)

    started = time.monotonic()
    doc, _ = run_probe(cluster)
    wall = time.monotonic() - started

    assert doc["training"]["size"] == LAPTOP_SIZE
    assert doc["release"]["state"] == "absent"
    assert wall < 3.8, f"probe took {wall:.2f}s: the reads look sequential"


# --- defensive decoding ---------------------------------------------------------------------


def _huge_nodes_json() -> str:
    padded = node("laptop", "8", "16Gi")
    padded["metadata"]["annotations"] = {"example.com/blob": "x" * (20 * 2**20)}
    return nodes_json(node("small", "2", "4Gi"), padded)


@pytest.mark.parametrize(
    ("stdout", "reason"),
    [
        pytest.param(b"\xff\xfe\x00garbage\x80\n", "not JSON", id="invalid-utf8"),
        pytest.param(b"", "not JSON", id="empty-output"),
        pytest.param(nodes_json(laptop())[:40].encode(), "not JSON", id="truncated-json"),
        pytest.param(b"[" * 200_000, "not JSON", id="deeply-nested-json"),
        pytest.param(b'{"kind": "Status"}', "list of nodes", id="json-without-items"),
    ],
)
def test_kubectl_output_that_cannot_be_read(
    cluster: FakeCluster, stdout: bytes, reason: str
) -> None:
    cluster.on("kubectl", "get", "nodes", stdout=stdout).release_absent()

    doc, _ = run_probe(cluster)

    assert doc["cluster"]["readable"] is False
    assert reason in doc["cluster"]["reason"]
    assert doc["training"]["source"] == "fallback"
    assert doc["training"]["size"] == LITERAL


@pytest.mark.parametrize(
    ("stdout", "name"),
    [
        pytest.param(nodes_json(node("node-NAME", "8", "16Gi")).encode().replace(b"NAME", b"\xff"),
                     "node-\ufffd", id="invalid-utf8-in-a-node-name"),
        pytest.param(b"\xef\xbb\xbf" + nodes_json(laptop()).encode(), "laptop", id="utf8-bom"),
        pytest.param(_huge_nodes_json().encode(), "laptop", id="20MB-of-json"),
    ],
)  # fmt: skip
def test_kubectl_output_decoded_defensively(cluster: FakeCluster, stdout: bytes, name: str) -> None:
    cluster.on("kubectl", "get", "nodes", stdout=stdout).release_absent()

    doc, _ = run_probe(cluster)

    assert doc["cluster"]["readable"] is True
    assert doc["cluster"]["anchor"] == name
    assert doc["training"]["size"] == LAPTOP_SIZE
    assert doc["training"]["source"] == "machine"


@pytest.mark.parametrize(
    ("stdout", "state", "reason"),
    [
        pytest.param(b"\xff\xfe{\x80", "unreadable", "not JSON", id="invalid-utf8"),
        pytest.param(b"", "unreadable", "not JSON", id="empty-output"),
        pytest.param(b'{"env": {"RESOURCE_LIMITS": "cpu=6,', "unreadable", "not JSON",
                     id="truncated-json"),
        pytest.param(b'["env"]', "unreadable", "not a map", id="json-list"),
        pytest.param(b"null", "present", None, id="installed-without-values"),
    ],
)  # fmt: skip
def test_helm_output_decoded_defensively(
    cluster: FakeCluster, stdout: bytes, state: str, reason: str | None
) -> None:
    cluster.nodes(laptop()).on("helm", "get", "values", stdout=stdout)

    doc, _ = run_probe(cluster)

    assert doc["release"]["state"] == state
    if reason is None:
        assert "reason" not in doc["release"]
    else:
        assert reason in doc["release"]["reason"]
    # Nothing was carried, so the node decides.
    assert doc["training"]["source"] == "machine"
    assert doc["training"]["size"] == LAPTOP_SIZE


# --- the CLI surface ------------------------------------------------------------------------


def test_version(cluster: FakeCluster) -> None:
    result = cluster.run("--version")

    assert result.returncode == 0
    assert result.stdout.strip() == f"tracebloc-installer {__version__}"
    assert cluster.calls() == []


@pytest.mark.parametrize(
    ("scenario", "size", "warning"),
    [
        pytest.param(
            lambda c: c.nodes(laptop()).on("helm", "get", "values", stderr=UNREACHABLE, rc=1),
            LAPTOP_SIZE, "installed release could not be read", id="release-unreadable",
        ),
        pytest.param(
            lambda c: c.nodes(node("small", "2", "4Gi")).release_absent(),
            "cpu=1,memory=1Gi", "node small (2 CPU, 4.0 GiB allocatable) is small",
            id="undersized-node",
        ),
        pytest.param(
            lambda c: c.on("kubectl", "get", "nodes", stderr=REFUSED, rc=1).release_absent(),
            LITERAL, "nodes could not be read", id="cluster-unreachable",
        ),
    ],
)  # fmt: skip
def test_human_output_shows_size_and_warnings(
    cluster: FakeCluster, scenario: Any, size: str, warning: str
) -> None:
    scenario(cluster)

    result = cluster.run("probe")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    training = [line for line in lines if line.startswith("training:")]
    assert len(training) == 1 and size in training[0]
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len(warnings) == 1 and warning in warnings[0], lines
    assert not result.stdout.lstrip().startswith("{")


def test_json_output_is_one_document_even_with_warnings(cluster: FakeCluster) -> None:
    cluster.remove("helm")
    cluster.on("kubectl", "get", "nodes", stderr=REFUSED, rc=1)

    result = cluster.run("probe", "--json", "--verbose")

    assert result.returncode == 0, result.stderr
    doc = single_json_document(result.stdout)
    assert set(doc) >= {"machine", "cluster", "release", "training", "warnings"}
    # helm missing, nodes unreadable, release unreadable; the --verbose log went to stderr.
    assert len(doc["warnings"]) == 3
    assert "run: kubectl get nodes" in result.stderr
