"""`python -m installer probe` as a process against fake kubectl/helm (issue 2).

Every test drives the real CLI through the `cluster` fixture: PATH holds only the fakes, the
fakes replay a scripted cluster state and log every call, and the tests assert the JSON and
the exact calls (count and argv).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from installer import __version__
from tests.fakes.cluster import REPO, FakeCluster, node, nodes_json
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


def errors_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


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
    assert doc["tools"]["kubectl"] == {
        "path": str(cluster.executable("kubectl")),
        "version": "v1.37.1",
        "source": "path",
    }
    assert doc["tools"]["helm"] == {
        "path": str(cluster.executable("helm")),
        "version": "v4.2.3",
        "source": "path",
    }
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
        pytest.param(["--namespace", "team-ns"], {}, "team-ns", id="flag"),
        pytest.param([], {"TB_NAMESPACE": "Data Science"}, "data-science", id="env-sanitised"),
        pytest.param(["--namespace", "ops"], {"TB_NAMESPACE": "other"}, "ops", id="flag-beats-env"),
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


def test_a_tb_namespace_with_nothing_left_is_default_and_refused(cluster: FakeCluster) -> None:
    cluster.nodes(laptop()).release_absent()
    result = cluster.run("probe", "--json", TB_NAMESPACE="!!!")
    assert result.returncode == 2
    assert (
        "TB_NAMESPACE 'default' is a namespace the tracebloc client may not use"
        in result.stdout + result.stderr
    )
    assert cluster.calls() == []


@pytest.mark.parametrize("command", ["probe", "plan", "install"])
@pytest.mark.parametrize(
    ("flag", "said"),
    [
        pytest.param("", "is empty", id="empty"),
        pytest.param("n" * 54, "is 54 characters long", id="longer-than-53"),
        pytest.param("My Team_NS", "is not a DNS-1123 label", id="not-dns-1123"),
    ],
)
def test_a_namespace_flag_that_is_not_a_release_name_is_bad_input(
    cluster: FakeCluster, command: str, flag: str, said: str
) -> None:
    cluster.nodes(laptop()).release_absent()

    result = cluster.run(command, "--namespace", flag, "--json")

    assert result.returncode == 2, result.stderr
    assert said in result.stderr and "53 characters" in result.stderr
    assert json.loads(result.stdout)["exit"] == 2
    assert cluster.calls() == []


def test_kubeconfig_and_context_flags_reach_both_tools(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    kubeconfig = str(tmp_path / "team config.yaml")
    Path(kubeconfig).write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    cluster.nodes(laptop()).release_absent()

    doc, _ = run_probe(cluster, "--kubeconfig", kubeconfig, "--context", "ctx-a")

    assert doc["training"]["size"] == LAPTOP_SIZE
    assert cluster.calls("kubectl") == [
        [
            "get",
            "nodes",
            "-o",
            "json",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "ctx-a",
            "--request-timeout=10s",
        ],
    ]
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
    Path(kubeconfig).parent.mkdir()
    Path(kubeconfig).write_text(cluster.kubeconfig.read_text(encoding="utf-8"), encoding="utf-8")
    cluster.nodes(laptop()).release_absent()

    run_probe(cluster, KUBECONFIG=kubeconfig)

    log = cluster.call_log()
    assert sorted(entry["tool"] for entry in log if entry["argv"][:1] != ["version"]) == [
        "helm",
        "kubectl",
    ]
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
        size,
        provenance,
        source,
    )
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
    # --json: the failure is the one JSON object on stdout, and one line on stderr.
    assert json.loads(result.stdout) == {
        "ok": False,
        "exit": 2,
        "reason": errors_of(result.stderr)[0].removeprefix("error: "),
        "remedy": "use the form cpu=<quantity>,memory=<quantity>, e.g. cpu=4,memory=16Gi",
    }
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
        "kubectl": None,
        "helm": None,
    }
    assert doc["cluster"]["readable"] is False
    assert doc["release"]["state"] == "unreadable"
    assert doc["training"]["source"] == "fallback"
    assert any(
        w.startswith("kubectl: kubectl v") and "cannot be downloaded" in w for w in doc["warnings"]
    ), doc["warnings"]
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
        "kubectl": (str(kubectl), "env"),
        "helm": (str(helm), "env"),
    }
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
        pytest.param(
            nodes_json(node("node-NAME", "8", "16Gi")).encode().replace(b"NAME", b"\xff"),
            "node-\ufffd",
            id="invalid-utf8-in-a-node-name",
        ),
        pytest.param(b"\xef\xbb\xbf" + nodes_json(laptop()).encode(), "laptop", id="utf8-bom"),
        pytest.param(_huge_nodes_json().encode(), "laptop", id="20MB-of-json"),
    ],
)
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
        pytest.param(
            b'{"env": {"RESOURCE_LIMITS": "cpu=6,', "unreadable", "not JSON", id="truncated-json"
        ),
        pytest.param(b'["env"]', "unreadable", "not a map", id="json-list"),
        pytest.param(b"null", "present", None, id="installed-without-values"),
    ],
)
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


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["version"]])
def test_version(cluster: FakeCluster, args: list[str]) -> None:
    result = cluster.run(*args)

    assert result.returncode == 0
    # From source there is no build stamp; the frozen binary carries its commit and date.
    assert result.stdout.startswith(f"tracebloc-installer {__version__} (commit ")
    assert ", built " in result.stdout
    if os.environ.get("TB_INSTALLER_BIN"):  # build/freeze.py stamped the binary
        assert "commit unknown" not in result.stdout and "built unknown" not in result.stdout
    assert cluster.calls() == []


@pytest.mark.parametrize("args", [["--version", "--json"], ["version", "--json"]])
def test_version_json(cluster: FakeCluster, args: list[str]) -> None:
    doc = json.loads(cluster.run(*args).stdout)

    assert doc["version"] == __version__
    assert {"commit", "date", "python", "platform"} <= set(doc)


@pytest.mark.skipif(bool(os.environ.get("TB_INSTALLER_BIN")), reason="a copy of the source tree")
def test_version_reads_the_build_stamp(cluster: FakeCluster) -> None:
    stamp_dir = cluster.root / "stamp" / "installer"
    stamp_dir.mkdir(parents=True)
    (stamp_dir / "_stamp.py").write_text('COMMIT = "0123456789abcdef"\nDATE = "2026-11-29"\n')
    # A copy of the package beside the stamp, as build/freeze.py bundles it.
    import shutil

    shutil.copytree(
        REPO / "installer",
        stamp_dir,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "_stamp.py"),
    )
    result = cluster.run("version", PYTHONPATH=str(stamp_dir.parent))

    assert result.stdout.strip() == (
        f"tracebloc-installer {__version__} (commit 0123456789ab, built 2026-11-29)"
    )


@pytest.mark.parametrize(
    ("args", "command"),
    [
        pytest.param(["--yes"], "install", id="yes-means-install"),
        pytest.param(["--json", "-n", "team-a"], "install", id="json-and-namespace"),
        pytest.param(["--verbose", "--chart", "./chart"], "install", id="verbose-and-chart"),
        pytest.param(["--context", "prod", "--kubeconfig", "k"], "install", id="cluster-flags"),
        pytest.param(["plan", "--json"], "plan", id="explicit-command"),
    ],
)
def test_options_without_a_command_mean_install(args: list[str], command: str) -> None:
    from installer import cli

    parsed = cli.build_parser().parse_args(cli.with_default_command(args))
    assert parsed.command == command


def test_yes_alone_runs_an_install(cluster: FakeCluster) -> None:
    # The documented one-liner: `curl … | sh -s -- --yes` runs `tracebloc-installer --yes`.
    cluster.nodes(laptop()).installed()
    result = cluster.run("--yes", TRACEBLOC_SKIP_PREFLIGHT="1")

    assert result.returncode == 2, result.stderr  # no credentials: the install's own answer
    assert "the following arguments are required" not in result.stderr
    assert "--yes never prompts" in result.stderr


def test_help_shows_examples_variables_exit_codes_and_the_log(cluster: FakeCluster) -> None:
    result = cluster.run("--help")

    assert result.returncode == 0
    for text in (
        "examples:",
        "tracebloc-installer --yes",
        "TRACEBLOC_CLIENT_ID",
        "TRACEBLOC_TRAINING_RESOURCES",
        "HOST_DATA_DIR",
        "exit codes:",
        "130",
        "install.log",
    ):
        assert text in result.stdout
    # Said once, at the top level; each command's help points there.
    install_help = cluster.run("install", "--help").stdout
    assert install_help.count("exit codes:") == 0 and "tracebloc-installer --help" in install_help


@pytest.mark.parametrize(
    ("scenario", "size", "warning"),
    [
        pytest.param(
            lambda c: c.nodes(laptop()).on("helm", "get", "values", stderr=UNREACHABLE, rc=1),
            LAPTOP_SIZE,
            "installed release could not be read",
            id="release-unreadable",
        ),
        pytest.param(
            lambda c: c.nodes(node("small", "2", "4Gi")).release_absent(),
            "cpu=1,memory=1Gi",
            "node small (2 CPU, 4.0 GiB allocatable) is small",
            id="undersized-node",
        ),
        pytest.param(
            lambda c: c.on("kubectl", "get", "nodes", stderr=REFUSED, rc=1).release_absent(),
            LITERAL,
            "nodes could not be read",
            id="cluster-unreachable",
        ),
    ],
)
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

    # helm not to be had either (a downloadable one would be no warning)
    result = cluster.run(
        "probe", "--json", "--verbose", **nothing_to_download(cluster.root, PLATFORM)
    )

    assert result.returncode == 0, result.stderr
    doc = single_json_document(result.stdout)
    assert set(doc) >= {"machine", "cluster", "release", "training", "warnings"}
    # helm missing, nodes unreadable, release unreadable; the --verbose log went to stderr.
    assert len(doc["warnings"]) == 3
    assert "run: kubectl get nodes" in result.stderr
