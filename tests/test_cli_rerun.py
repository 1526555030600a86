"""A re-run on a healthy, up-to-date client changes nothing and says so; anything that
would change still changes (issue 26). The CLI as a process against fakes that log every
call; "nothing changed" is asserted on that log, on the values file and on the backend."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.fakes import workloads
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, release_row
from tests.fakes.healthy import (
    make_healthy,
    mutating_calls,
    search_answer,
    values_path,
    without_jobs_manager,
)
from tests.fakes.localcluster import docker_running, existing, kubeconfig_of_k3d

CLIENT_ID = "client-rerun"
PASSWORD = "Re-run:P4ss#word"
UPGRADE = ["helm", "upgrade", "--install"]


def env_for(backend: BackendServer, **extra: str) -> dict[str, str]:
    base = {
        "TRACEBLOC_CLIENT_ID": CLIENT_ID,
        "TRACEBLOC_CLIENT_PASSWORD": PASSWORD,
        "TRACEBLOC_BACKEND_URL": backend.url,
        "TRACEBLOC_SKIP_PREFLIGHT": "1",
        "TB_METRICS_WAIT_S": "5",
        "TB_PLAIN": "1",
        "READY_TIMEOUT": "30",
    }
    base.update(extra)
    return base


@pytest.fixture
def healthy(cluster: FakeCluster, backend: BackendServer) -> FakeCluster:
    make_healthy(cluster, env_for(backend))
    backend.requests.clear()
    return cluster


def stored_without(cluster: FakeCluster, key: str) -> None:
    values = yaml.safe_load(values_path(cluster).read_bytes())
    del values[key]
    cluster.values_of("tracebloc", "tracebloc", values)


def upgraded(cluster: FakeCluster) -> bool:
    return any(call[:3] == UPGRADE for call in mutating_calls(cluster))


def with_cli(cluster: FakeCluster, version: str) -> None:
    cluster.install("tracebloc")
    cluster.on(
        "tracebloc",
        "version",
        stdout=f"tracebloc {version} (0a1b2c3, built 2026-01-01, go1.22 on linux/amd64)\n",
    )


def test_healthy_rerun_changes_nothing_and_says_so_in_one_line(
    healthy: FakeCluster, backend: BackendServer
) -> None:
    with_cli(healthy, "0.10.9")
    path = values_path(healthy)
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    result = healthy.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines == [
        "already installed and connected — nothing to change: release tracebloc in namespace "
        "tracebloc, chart client-1.4.2, ready: Deployment mysql-client 1/1, Deployment "
        "tracebloc-jobs-manager 1/1, Deployment tracebloc-requests-proxy 1/1"
    ]
    assert mutating_calls(healthy) == []
    assert (path.read_bytes(), path.stat().st_mtime_ns) == (before, mtime)
    assert backend.requests == []  # no sign-in
    assert PASSWORD not in result.stdout + result.stderr
    # The repository's index, once; the readiness, once.
    calls = [" ".join(c) for c in healthy.calls()]
    assert sum(c.startswith("repo update tracebloc") for c in calls) == 1
    assert sum(c.startswith("search repo tracebloc/client") for c in calls) == 1
    assert sum(c.startswith("get " + workloads.KINDS) for c in calls) == 1


@pytest.mark.parametrize("argv", [["--yes"], []], ids=["yes", "interactive"])
def test_healthy_rerun_with_saved_credentials_only_neither_asks_nor_signs_in(
    healthy: FakeCluster, backend: BackendServer, argv: list[str]
) -> None:
    env = env_for(backend)
    del env["TRACEBLOC_CLIENT_ID"], env["TRACEBLOC_CLIENT_PASSWORD"]
    result = healthy.run("install", *argv, "--json", **env)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["action"] == "nothing-to-change"
    assert document["values_changed"] is False
    assert mutating_calls(healthy) == []
    assert backend.requests == []


def test_plan_shows_the_same_verdict(healthy: FakeCluster, backend: BackendServer) -> None:
    document = healthy.run_json("plan", **env_for(backend))
    assert document["verdict"]["action"] == "nothing-to-change"
    assert "already installed and connected" in document["verdict"]["reason"]
    text = healthy.run("plan", **env_for(backend))
    assert text.returncode == 0, text.stderr
    assert "nothing-to-change" in text.stdout
    assert mutating_calls(healthy) == []


@pytest.mark.parametrize(
    ("change", "extra", "said"),
    [
        pytest.param(
            lambda c: None,
            {"TRACEBLOC_TRAINING_RESOURCES": "cpu=2,memory=4Gi"},
            "env.RESOURCE_LIMITS",
            id="a-different-size",
        ),
        pytest.param(
            lambda c: None, {"CLIENT_ENV": "dev"}, "env.CLIENT_ENV", id="a-different-setting"
        ),
        pytest.param(
            lambda c: c.on("helm", "search", "repo", stdout=search_answer("1.5.0")),
            {},
            "this run installs version 1.5.0",
            id="a-newer-chart",
        ),
        pytest.param(
            lambda c: stored_without(c, "clusterScope"),
            {},
            "differ from the release's (clusterScope)",
            id="a-stored-value-missing",
        ),
        pytest.param(
            lambda c: values_path(c).unlink(),
            {},
            "the values file does not hold",
            id="values-file-missing",
        ),
        pytest.param(
            lambda c: c.on("helm", "search", "repo", rc=1, stderr="Error: no repo\n"),
            {},
            "version this run would install is not known",
            id="index-unreadable",
        ),
    ],
)
def test_anything_that_would_change_still_changes(
    healthy: FakeCluster,
    backend: BackendServer,
    change: object,
    extra: dict[str, str],
    said: str,
) -> None:
    change(healthy)  # type: ignore[operator]
    result = healthy.run("install", "--yes", **env_for(backend, **extra))
    assert result.returncode == 0, result.stderr
    assert "nothing to change" not in result.stdout
    assert "re-applying: " in result.stderr and said in result.stderr
    assert upgraded(healthy)
    # The index was refreshed once, by the check or by the repository step, never twice.
    calls = [" ".join(c) for c in healthy.calls("helm")]
    assert sum(c.startswith("repo update") for c in calls) <= 1


def test_a_release_not_deployed_is_recovered_as_today(
    healthy: FakeCluster, backend: BackendServer
) -> None:
    healthy.installed(release_row(status="pending-upgrade"))
    healthy.status_of("tracebloc", "pending-upgrade")
    result = healthy.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    helm_calls = [c[:2] for c in mutating_calls(healthy) if c[0] == "helm"]
    assert ["helm", "rollback"] in helm_calls
    assert upgraded(healthy)


def test_workloads_not_ready_are_re_applied_and_waited_for(
    healthy: FakeCluster, backend: BackendServer
) -> None:
    healthy.workloads(*workloads.client(ready=1), times=1)  # the check's look: not ready
    result = healthy.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    assert (
        "the client is not healthy (Deployment tracebloc-jobs-manager is not ready (0 of 1)"
        in result.stderr
    )
    assert upgraded(healthy)
    assert "installed and connected" in result.stdout


@pytest.mark.parametrize(
    ("break_it", "said"),
    [
        pytest.param(
            lambda c: c.workloads(*workloads.scaled_to_zero(workloads.client()), times=1),
            "Deployment tracebloc-jobs-manager is scaled to 0 replicas",
            id="scaled-to-0",
        ),
        pytest.param(
            lambda c: without_jobs_manager(c, times=1),
            "Deployment tracebloc-jobs-manager is missing",
            id="jobs-manager-deleted",
        ),
    ],
)
def test_a_client_without_positive_evidence_of_health_is_re_applied(
    healthy: FakeCluster, backend: BackendServer, break_it: object, said: str
) -> None:
    break_it(healthy)  # type: ignore[operator]
    result = healthy.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    assert "nothing to change" not in result.stdout
    assert "re-applying: the client is not healthy" in result.stderr and said in result.stderr
    assert upgraded(healthy)


def test_a_client_that_stays_unhealthy_is_never_reported_healthy(
    healthy: FakeCluster, backend: BackendServer
) -> None:
    healthy.workloads(*workloads.client(ready=1))
    result = healthy.run("install", "--yes", **env_for(backend, READY_TIMEOUT="2"))
    assert result.returncode != 0
    assert "nothing to change" not in result.stdout + result.stderr
    assert "connected" not in result.stdout
    assert upgraded(healthy)


@pytest.mark.parametrize(
    ("argv", "extra"),
    [
        pytest.param(["--force"], {}, id="force-flag"),
        pytest.param(["--reinstall"], {}, id="reinstall-flag"),
        pytest.param([], {"TRACEBLOC_FORCE_REINSTALL": "1"}, id="TRACEBLOC_FORCE_REINSTALL"),
        pytest.param([], {"TB_FORCE_REINSTALL": "true"}, id="TB_FORCE_REINSTALL"),
    ],
)
def test_force_re_applies_a_healthy_client(
    healthy: FakeCluster, backend: BackendServer, argv: list[str], extra: dict[str, str]
) -> None:
    result = healthy.run("install", "--yes", *argv, **env_for(backend, **extra))
    assert result.returncode == 0, result.stderr
    assert "re-applying regardless" in result.stderr
    assert upgraded(healthy)


def test_a_force_variable_that_is_not_a_yes_or_no_is_bad_input(
    healthy: FakeCluster, backend: BackendServer
) -> None:
    result = healthy.run("install", "--yes", **env_for(backend, TB_FORCE_REINSTALL="maybe"))
    assert result.returncode == 2
    assert "TB_FORCE_REINSTALL" in result.stderr
    assert mutating_calls(healthy) == []


def test_healthy_rerun_on_the_engines_own_local_cluster_touches_neither_docker_nor_kubeconfig(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cluster.kubeconfig.write_text(kubeconfig_of_k3d("https://127.0.0.1:6550"), encoding="utf-8")
    cluster.install("docker")
    cluster.install("k3d")
    existing(docker_running(cluster), "running")
    make_healthy(cluster, env_for(backend))
    backend.requests.clear()
    kubeconfig = cluster.kubeconfig.read_bytes()

    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    assert "nothing to change" in result.stdout
    local_reads = (
        ["docker", "info"],
        ["docker", "inspect"],
        ["k3d", "cluster", "list"],
        ["k3d", "version"],
        ["docker", "version"],
    )
    changed = [c for c in mutating_calls(cluster) if not any(c[: len(r)] == r for r in local_reads)]
    assert changed == []
    assert cluster.kubeconfig.read_bytes() == kubeconfig
    assert backend.requests == []


@pytest.mark.parametrize(
    ("version", "said"),
    [
        pytest.param(
            None,
            "to add your data, get the tracebloc CLI: curl -fsSL "
            "https://github.com/tracebloc/cli/releases/latest/download/install.sh | sh",
            id="cli-missing",
        ),
        pytest.param(
            "0.5.1",
            "is 0.5.1, older than 0.10.0 (from 0.10.0 it tells you about its own "
            "updates): update it with: curl -fsSL",
            id="cli-below-the-floor",
        ),
        pytest.param("0.10.0", None, id="cli-at-the-floor"),
    ],
)
def test_a_healthy_rerun_checks_the_tracebloc_cli_is_there_and_recent_enough(
    healthy: FakeCluster, backend: BackendServer, version: str | None, said: str | None
) -> None:
    if version is not None:
        with_cli(healthy, version)
    result = healthy.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    assert "nothing to change" in result.stdout and mutating_calls(healthy) == []
    notes = [line for line in result.stdout.splitlines() if line.startswith("  note: ")]
    if said is None:
        assert notes == []
    else:
        assert len(notes) == 1 and said in notes[0]
