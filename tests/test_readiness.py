"""Readiness: parsing one namespace read, rollout rules, progress and the diagnosis. Pure."""

from __future__ import annotations

import json
from typing import Any

import pytest

from installer.decide import diagnosis, readiness
from installer.decide.model import Provenance, Resolution, Source
from installer.edges.workloads import parse_manifest, parse_pvcs, parse_snapshot
from tests.fakes import workloads
from tests.fakes.workloads import deployment, event, pod

IMAGE = "tracebloc/jobs-manager:1.4.2"


def read(*items: dict[str, Any], release: str = "tracebloc") -> readiness.Snapshot:
    return parse_snapshot(workloads.listing(*items).encode(), release, "tracebloc")


def test_workloads_are_found_from_the_release_not_by_name() -> None:
    theirs = deployment("tracebloc-jobs-manager", "manager", release="other")
    unannotated = deployment("by-label", "lbl")
    del unannotated["metadata"]["annotations"]
    snapshot = read(*workloads.client(), theirs, unannotated, pod("stray", "nobody", IMAGE))

    names = [w.name for w in snapshot.workloads]
    assert names == [
        "mysql-client",
        "tracebloc-jobs-manager",
        "tracebloc-requests-proxy",
        "by-label",
    ]
    assert "stray" not in [p.name for p in snapshot.pods]
    assert snapshot.ready


@pytest.mark.parametrize(
    ("change", "rolled_out"),
    [
        pytest.param({}, True, id="current-and-available"),
        pytest.param({"observedGeneration": 1}, False, id="controller-has-not-seen-the-new-spec"),
        pytest.param({"replicas": 2}, False, id="an-old-replica-is-still-there"),
        pytest.param({"availableReplicas": 0}, False, id="new-replica-not-available"),
        pytest.param({"updatedReplicas": 0}, False, id="not-yet-updated"),
    ],
)
def test_deployment_rollout(change: dict[str, int], rolled_out: bool) -> None:
    item = deployment("d", "a")
    item["status"].update(change)
    [workload] = read(item).workloads
    assert workload.rolled_out is rolled_out


@pytest.mark.parametrize(
    ("status", "rolled_out"),
    [
        pytest.param(
            {
                "observedGeneration": 2,
                "readyReplicas": 1,
                "currentRevision": "r2",
                "updateRevision": "r2",
            },
            True,
            id="ready-on-the-new-revision",
        ),
        pytest.param(
            {
                "observedGeneration": 2,
                "readyReplicas": 1,
                "currentRevision": "r1",
                "updateRevision": "r2",
            },
            False,
            id="still-on-the-old-revision",
        ),
        pytest.param({"observedGeneration": 2, "readyReplicas": 0}, False, id="not-ready"),
    ],
)
def test_statefulset_rollout(status: dict[str, Any], rolled_out: bool) -> None:
    item = deployment("db", "db")
    item["kind"] = "StatefulSet"
    item["status"] = status
    [workload] = read(item).workloads
    assert workload.rolled_out is rolled_out


def test_unreadable_output_is_an_error_not_an_empty_namespace() -> None:
    with pytest.raises(ValueError):
        parse_snapshot(b"<html>proxy error</html>", "tracebloc", "tracebloc")
    with pytest.raises(ValueError):
        parse_snapshot(json.dumps({"kind": "Status"}).encode(), "tracebloc", "tracebloc")


def test_progress_counts_workloads_and_images() -> None:
    pulling = pod("proxy-1", "requests-proxy", "egress:2", waiting="ContainerCreating")
    snapshot = read(
        *workloads.client(ready=2, requests_proxy=pulling),
        event("proxy-1", "Pulling", 'Pulling image "egress:2"'),
    )
    p = readiness.progress(snapshot)
    assert readiness.progress_text(p) == "2 of 3 ready · pulling egress:2 (2 of 3 images)"


def test_a_pulled_event_ends_pulling() -> None:
    pulling = pod("proxy-1", "requests-proxy", "egress:2", waiting="ContainerCreating")
    snapshot = read(
        *workloads.client(requests_proxy=pulling),
        event("proxy-1", "Pulling", 'Pulling image "egress:2"'),
        event(
            "proxy-1",
            "Pulled",
            'Successfully pulled image "egress:2" in 3s',
            when="2026-11-01T10:00:05Z",
        ),
    )
    assert readiness.progress(snapshot).pulling is None


TRAINING = Resolution("cpu=6,memory=12Gi", Provenance.USER, Source.OVERRIDE)


@pytest.mark.parametrize(
    ("pods", "cause", "definite"),
    [
        pytest.param(
            {
                "manager": pod(
                    "m",
                    "manager",
                    IMAGE,
                    waiting="ImagePullBackOff",
                    message="x509: certificate signed by unknown authority",
                )
            },
            diagnosis.TLS,
            True,
            id="x509-pull",
        ),
        pytest.param(
            {
                "manager": pod(
                    "m",
                    "manager",
                    IMAGE,
                    waiting="ErrImagePull",
                    message="pull access denied, authorization failed",
                )
            },
            diagnosis.UNAUTHORIZED,
            True,
            id="denied-pull",
        ),
        pytest.param(
            {
                "manager": pod(
                    "m", "manager", IMAGE, waiting="ErrImagePull", message="dial tcp: i/o timeout"
                )
            },
            diagnosis.IMAGE_PULL,
            False,
            id="network-pull-may-heal",
        ),
        pytest.param(
            {
                "manager": pod(
                    "m",
                    "manager",
                    IMAGE,
                    unschedulable="0/1 nodes are available: 1 Insufficient cpu.",
                )
            },
            diagnosis.INSUFFICIENT,
            True,
            id="insufficient-cpu",
        ),
        pytest.param(
            {
                "manager": pod(
                    "m",
                    "manager",
                    IMAGE,
                    unschedulable="0/1 nodes are available: 1 Insufficient amd.com/gpu.",
                )
            },
            diagnosis.NO_GPU,
            True,
            id="no-amd-gpu",
        ),
        pytest.param(
            {
                "manager": pod(
                    "m",
                    "manager",
                    IMAGE,
                    unschedulable=(
                        "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready}"
                    ),
                )
            },
            None,
            False,
            id="node-not-ready-yet-is-not-a-cause",
        ),
        pytest.param(
            {"manager": pod("m", "manager", IMAGE, waiting="CrashLoopBackOff", restarts=3)},
            diagnosis.CRASH,
            False,
            id="crash-without-a-telling-log",
        ),
    ],
)
def test_diagnosis(pods: dict[str, Any], cause: str | None, definite: bool) -> None:
    snapshot = read(*workloads.client(**pods))
    found = diagnosis.diagnose(snapshot, namespace="tracebloc", training=TRAINING)
    assert (found.cause if found else None) == cause
    assert (found.definite if found else False) is definite


def test_the_size_remedy_names_the_size_and_its_provenance() -> None:
    snapshot = read(
        *workloads.client(manager=pod("m", "manager", IMAGE, unschedulable="1 Insufficient memory"))
    )
    found = diagnosis.diagnose(snapshot, namespace="tracebloc", training=TRAINING)
    assert found is not None
    assert "cpu=6,memory=12Gi (provenance user)" in found.remedy
    assert "TRACEBLOC_TRAINING_RESOURCES" in found.remedy


def test_a_crash_log_rejecting_the_credentials_wins() -> None:
    snapshot = read(
        *workloads.client(
            manager=pod("m", "manager", IMAGE, waiting="CrashLoopBackOff", restarts=2)
        )
    )
    suspect = diagnosis.log_suspect(snapshot)
    assert suspect == diagnosis.Suspect("m", "main")
    found = diagnosis.diagnose(
        snapshot,
        namespace="tracebloc",
        suspect=suspect,
        log="boot\nERROR Unable to log in: 401 from backend\n",
    )
    assert found is not None and found.cause == diagnosis.CREDENTIALS and found.definite
    assert "Unable to log in" in found.message


def test_a_terminating_pod_says_nothing_about_the_new_one() -> None:
    old = pod("m-old", "manager", IMAGE, waiting="ImagePullBackOff", message="x509: bad")
    old["metadata"]["deletionTimestamp"] = "2026-11-01T10:00:00Z"
    snapshot = read(*workloads.client(ready=3), old)
    assert diagnosis.diagnose(snapshot, namespace="tracebloc") is None


def test_a_release_without_workloads_is_definite() -> None:
    found = diagnosis.diagnose(read(), namespace="tracebloc")
    assert found is not None and found.cause == diagnosis.NO_WORKLOADS and found.definite


def test_claims_of_the_release_only() -> None:
    claim = {
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "client-pvc",
            "annotations": {
                "meta.helm.sh/release-name": "tracebloc",
                "meta.helm.sh/release-namespace": "tracebloc",
            },
        },
    }
    other = {"kind": "PersistentVolumeClaim", "metadata": {"name": "x", "labels": {}}}
    assert parse_pvcs(workloads.listing(claim, other).encode(), "tracebloc", "tracebloc") == (
        "client-pvc",
    )


def test_a_workload_with_no_pod_is_described_as_the_workload() -> None:
    """No pod was created: the remedy describes the Deployment (an object that exists),
    never `kubectl describe pod <deployment name>`."""
    snapshot = read(deployment("tracebloc-jobs-manager", "manager", ready=False))
    found = diagnosis.not_ready(snapshot, "tracebloc")
    assert "no pod was created" in found.message
    assert "kubectl describe deployment tracebloc-jobs-manager -n tracebloc" in found.remedy
    assert "describe pod" not in found.remedy


def test_a_workload_with_a_pod_is_described_by_the_pods_real_name() -> None:
    snapshot = read(
        deployment("tracebloc-jobs-manager", "manager", ready=False),
        pod("tracebloc-jobs-manager-5d8f-x2", "manager", IMAGE),
    )
    found = diagnosis.not_ready(snapshot, "tracebloc")
    assert "kubectl describe pod tracebloc-jobs-manager-5d8f-x2 -n tracebloc" in found.remedy


ALL = readiness.DefinedRead(tuple(("Deployment", n) for n, _, _ in workloads.CLIENT))


@pytest.mark.parametrize(
    ("items", "defined", "problems"),
    [
        pytest.param(workloads.client(), ALL, (), id="all-defined-up"),
        pytest.param(
            workloads.scaled_to_zero(workloads.client()),
            ALL,
            tuple(f"Deployment {n} is scaled to 0 replicas" for n, _, _ in workloads.CLIENT),
            id="scaled-to-0-of-0",
        ),
        pytest.param(
            [i for i in workloads.client() if "jobs" not in i["metadata"]["name"]],
            ALL,
            ("Deployment tracebloc-jobs-manager is missing (the release defines it)",),
            id="jobs-manager-deleted",
        ),
        pytest.param(
            [*workloads.client(), workloads.daemonset("mon", "mon", scheduled=0)],
            ALL,
            ("DaemonSet mon schedules no pod",),
            id="daemonset-schedules-nothing",
        ),
        pytest.param(
            [*workloads.client(), workloads.daemonset("mon", "mon", scheduled=2, ready=1)],
            ALL,
            ("DaemonSet mon is not ready (1 of 2)",),
            id="daemonset-half-ready",
        ),
        pytest.param(
            [*workloads.client(), workloads.daemonset("mon", "mon", scheduled=2)],
            ALL,
            (),
            id="daemonset-ready",
        ),
        pytest.param(
            [],
            readiness.DefinedRead(()),
            ("the release defines no workloads",),
            id="nothing-at-all",
        ),
        pytest.param(
            workloads.client(),
            readiness.DefinedRead(None, "exit 1"),
            ("the workloads the release defines could not be read (exit 1)",),
            id="manifest-unread",
        ),
    ],
)
def test_health_needs_positive_evidence(
    items: list[dict[str, Any]], defined: readiness.DefinedRead, problems: tuple[str, ...]
) -> None:
    assert readiness.health_problems(read(*items), defined) == problems


def test_the_manifest_names_the_workloads_in_the_releases_namespace_only() -> None:
    text = workloads.manifest(*workloads.client(), workloads.daemonset("mon", "mon"))
    plugin = (
        "---\nkind: DaemonSet\nmetadata: {name: nvidia-device-plugin, namespace: kube-system}\n"
    )
    assert parse_manifest((text + plugin + "---\n").encode(), "tracebloc") == (
        *(("Deployment", n) for n, _, _ in workloads.CLIENT),
        ("DaemonSet", "mon"),
    )
    with pytest.raises(ValueError, match="not YAML"):
        parse_manifest(b"kind: [unclosed", "tracebloc")
