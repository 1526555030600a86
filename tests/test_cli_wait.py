"""`install` after helm: exit 0 only when the client runs; otherwise the cause and its remedy.

The fake kubectl replays the namespace over successive polls (`times=N`: a state seen N
times, then the one scripted before it), so each test is a rollout as the engine sees it.
"""

from __future__ import annotations

import signal
import sys
import time

import pytest

from tests.fakes import workloads
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.workloads import event, pod
from tests.test_cli_install import env_for, fresh, upgrade_calls

JM_IMAGE = "tracebloc/jobs-manager:1.4.2"


def polls(cluster: FakeCluster) -> list[list[str]]:
    return [a for a in cluster.calls("kubectl") if a[:2] == ["get", workloads.KINDS]]


def never_changed_after_helm(cluster: FakeCluster) -> None:
    """The release is left as helm made it: no uninstall, rollback or second upgrade."""
    helm = cluster.calls("helm")
    assert len(upgrade_calls(cluster)) == 1
    assert not [a for a in helm if a and a[0] in ("uninstall", "rollback", "delete")]


def test_ready_after_three_polls_exits_0_connected(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    starting = workloads.client(
        ready=0, manager=pod("tracebloc-jobs-manager-1", "manager", JM_IMAGE)
    )
    cluster.workloads(*workloads.client(ready=2), times=1)
    cluster.workloads(
        *starting,
        event("tracebloc-jobs-manager-1", "Pulling", f'Pulling image "{JM_IMAGE}"'),
        times=2,
    )
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    assert len(polls(cluster)) == 4
    assert all(a[2:4] == ["-n", "tracebloc"] and "-o" in a for a in polls(cluster))
    assert "installed and connected" in result.stdout
    assert "ready:          Deployment tracebloc-jobs-manager 1/1" in result.stdout
    # Plain progress lines (not a terminal), each written once when it changes.
    assert f"0 of 3 ready · pulling {JM_IMAGE} (0 of 2 images)" in result.stderr
    assert result.stderr.count("0 of 3 ready") == 1
    assert "2 of 3 ready" in result.stderr


def test_x509_image_pull_stops_early_with_the_ca_remedy(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    failing = pod(
        "tracebloc-jobs-manager-1",
        "manager",
        JM_IMAGE,
        waiting="ImagePullBackOff",
        message=f'Back-off pulling image "{JM_IMAGE}"',
    )
    x509 = event(
        "tracebloc-jobs-manager-1",
        "Failed",
        f'Failed to pull image "{JM_IMAGE}": '
        'failed to do request: Head "https://registry-1.docker.io/v2/": tls: failed to '
        "verify certificate: x509: certificate signed by unknown authority",
        type="Warning",
    )
    fresh(cluster).workloads(*workloads.client(manager=failing), x509)
    started = time.monotonic()
    result = cluster.run("install", "--yes", **env_for(backend, READY_TIMEOUT="120"))

    assert result.returncode == 1
    assert time.monotonic() - started < 60  # definite: not waited out to the deadline
    assert "does not trust the certificate" in result.stderr and JM_IMAGE in result.stderr
    assert "TRACEBLOC_CA_BUNDLE" in result.stderr
    assert "release is left in place" in result.stderr
    never_changed_after_helm(cluster)


def test_unauthorized_pull_names_the_registry_credentials(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    failing = pod(
        "tracebloc-jobs-manager-1",
        "manager",
        JM_IMAGE,
        waiting="ErrImagePull",
        message=f'failed to pull and unpack image "{JM_IMAGE}": 401 Unauthorized',
    )
    fresh(cluster).workloads(*workloads.client(manager=failing))
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 1
    assert "the registry refused to serve" in result.stderr
    assert "TRACEBLOC_REGISTRY_USERNAME" in result.stderr


def test_crash_loop_with_rejected_credentials_names_the_credentials(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    crashing = pod(
        "tracebloc-jobs-manager-1",
        "manager",
        JM_IMAGE,
        waiting="CrashLoopBackOff",
        message="back-off 40s restarting failed container",
        restarts=4,
        pulled=True,
        container="jobs-manager",
    )
    fresh(cluster).workloads(*workloads.client(manager=crashing))
    cluster.on(
        "kubectl",
        "logs",
        "tracebloc-jobs-manager-1",
        stdout=(
            "INFO starting jobs-manager\nERROR Authentication failed: invalid client id or password\n"
        ),
    )
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 1
    assert "rejected the client's credentials" in result.stderr
    assert "Authentication failed" in result.stderr
    assert "TRACEBLOC_CLIENT_PASSWORD" in result.stderr
    # One bounded tail of the crashing container, read once for its one crash count.
    logs = [a for a in cluster.calls("kubectl") if a[:1] == ["logs"]]
    assert len(logs) == 1
    assert logs[0][:4] == ["logs", "tracebloc-jobs-manager-1", "-c", "jobs-manager"]
    assert "--tail=50" in logs[0] and any(a.startswith("--limit-bytes=") for a in logs[0])
    never_changed_after_helm(cluster)


def test_pending_for_memory_names_the_size_and_the_override(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    said = "0/1 nodes are available: 1 Insufficient memory. preemption: 0/1 nodes are available"
    pending = pod("mysql-client-5f4-0", "mysql-client", "mysql:5.7", unschedulable=said)
    fresh(cluster).workloads(
        *workloads.client(ready=0, mysql_client=pending),
        event("mysql-client-5f4-0", "FailedScheduling", said, type="Warning"),
    )
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 1
    assert "does not fit on any node" in result.stderr and "Insufficient memory" in result.stderr
    assert "TRACEBLOC_TRAINING_RESOURCES" in result.stderr
    assert (
        "the training size is cpu=" in result.stderr and "(provenance installer)" in result.stderr
    )


def test_pending_for_a_gpu_says_no_node_offers_one(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    said = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    pending = pod("tracebloc-jobs-manager-1", "manager", JM_IMAGE, unschedulable=said)
    fresh(cluster).workloads(*workloads.client(manager=pending))
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 1
    assert "asks for a GPU that no node offers" in result.stderr


def test_still_starting_at_the_deadline_names_the_pod_and_its_events(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    slow = pod("tracebloc-jobs-manager-1", "manager", JM_IMAGE, waiting="ContainerCreating")
    fresh(cluster).workloads(
        *workloads.client(manager=slow),
        event(
            "tracebloc-jobs-manager-1",
            "FailedMount",
            'MountVolume.SetUp failed for volume "data"',
            type="Warning",
        ),
    )
    result = cluster.run("install", "--yes", **env_for(backend, READY_TIMEOUT="3"))

    assert result.returncode == 1
    assert "did not become ready within 3s (READY_TIMEOUT)" in result.stderr
    assert "tracebloc-jobs-manager is not ready (0 of 1)" in result.stderr, result.stderr
    assert "FailedMount" in result.stderr
    assert "kubectl describe pod tracebloc-jobs-manager-1 -n tracebloc" in result.stderr


def test_the_printed_inspect_commands_name_the_cluster_installed_into(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """Installed with --context, the remedy's kubectl commands carry that context: pasted as
    printed, they look at the cluster the client went to, not at the current context."""
    slow = pod("tracebloc-jobs-manager-1", "manager", JM_IMAGE, waiting="ContainerCreating")
    fresh(cluster).kube_target("prod-eu", "https://k8s.prod.example.com:6443")
    cluster.workloads(*workloads.client(manager=slow))
    result = cluster.run(
        "install", "--yes", "--context", "prod-eu", **env_for(backend, READY_TIMEOUT="3")
    )

    assert result.returncode == 1
    assert (
        "kubectl describe pod tracebloc-jobs-manager-1 -n tracebloc --context prod-eu; "
        "kubectl get events -n tracebloc --context prod-eu"
    ) in result.stderr, result.stderr


def test_cluster_that_stops_answering_mid_wait(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    cluster.on(
        "kubectl",
        "get",
        workloads.KINDS,
        rc=1,
        stderr="Unable to connect to the server: dial tcp 127.0.0.1:6443: connect: connection refused\n",
    )
    cluster.workloads(*workloads.client(ready=1), times=2)
    result = cluster.run("install", "--yes", **env_for(backend, READY_TIMEOUT="4"))

    assert result.returncode == 1
    assert "the cluster stopped answering" in result.stderr
    assert "connection refused" in result.stderr
    assert "last seen: 1 of 3 ready" in result.stderr
    assert len(polls(cluster)) >= 3
    never_changed_after_helm(cluster)


@pytest.mark.parametrize("value", ["0", "-5", "soon", "inf"])
def test_bad_ready_timeout_is_bad_input_before_anything_runs(
    cluster: FakeCluster, backend: BackendServer, value: str
) -> None:
    fresh(cluster)
    result = cluster.run("install", "--yes", **env_for(backend, READY_TIMEOUT=value))
    assert result.returncode == 2
    assert "READY_TIMEOUT" in result.stderr
    assert upgrade_calls(cluster) == []


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_interrupt_during_the_wait_leaves_the_release_and_says_so(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).workloads(*workloads.client(ready=1))
    child = cluster.start("install", "--yes", **env_for(backend, READY_TIMEOUT="120"))
    deadline = time.monotonic() + 60
    while not polls(cluster) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert polls(cluster), "the wait never started"
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)

    assert child.returncode == 130, err
    assert "stopped waiting" in err and "left as it is" in err
    assert "tracebloc-installer status" in err
    never_changed_after_helm(cluster)


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_progress_on_a_terminal_rides_the_spinner(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    from tests.fakes.terminal import Pty

    fresh(cluster)
    image = "tracebloc/egress:2.0"  # one no other pod has pulled
    starting = workloads.client(
        ready=2, requests_proxy=pod("tracebloc-requests-proxy-1", "requests-proxy", image)
    )
    cluster.workloads(
        *starting,
        event("tracebloc-requests-proxy-1", "Pulling", f'Pulling image "{image}"'),
        times=3,
    )
    env = cluster.env(**env_for(backend))
    del env["TB_PLAIN"]
    with Pty.spawn(["install", "--yes"], env=env, cwd=cluster.root) as term:
        code = term.wait(timeout=90)
        screen = term.screen()

    assert code == 0, screen
    # The line is cut to the terminal's 80 columns: a wrapped spinner line cannot be redrawn.
    assert f"Waiting for the client to connect: 2 of 3 ready · pulling {image}"[:76] in screen
    assert "✓\x1b[0m Waiting for the client to connect" in screen
