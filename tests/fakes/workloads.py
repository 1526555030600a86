"""Kubernetes objects as `kubectl get deployments,statefulsets,daemonsets,pods,events -o json`
prints them:
the release's workloads, their pods and events, for the fake kubectl to replay.

The shapes follow the client chart: Deployments labelled `app.kubernetes.io/instance:
<release>` and annotated by helm, selecting pods by `app: <x>` (pods carry no release label).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

KINDS = "deployments,statefulsets,daemonsets,pods,events"
# The client chart's three workloads today, as (name, app label, image).
CLIENT = (
    ("mysql-client", "mysql-client", "mysql:5.7"),
    ("tracebloc-jobs-manager", "manager", "tracebloc/jobs-manager:1.4.2"),
    ("tracebloc-requests-proxy", "requests-proxy", "tracebloc/jobs-manager:1.4.2"),
)


def deployment(
    name: str,
    app: str,
    *,
    release: str = "tracebloc",
    namespace: str = "tracebloc",
    ready: bool = True,
    replicas: int = 1,
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "observedGeneration": 2,
        "replicas": replicas,
        "updatedReplicas": replicas,
    }
    if ready:
        status.update(readyReplicas=replicas, availableReplicas=replicas)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "generation": 2,
            "labels": {
                "app.kubernetes.io/instance": release,
                "app.kubernetes.io/managed-by": "Helm",
            },
            "annotations": {
                "meta.helm.sh/release-name": release,
                "meta.helm.sh/release-namespace": namespace,
            },
        },
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}}},
        "status": status,
    }


def pod(
    name: str,
    app: str,
    image: str,
    *,
    ready: bool = False,
    waiting: str | None = None,
    message: str = "",
    restarts: int = 0,
    pulled: bool | None = None,
    unschedulable: str | None = None,
    container: str = "main",
) -> dict[str, Any]:
    state: dict[str, Any] = (
        {"running": {}} if ready else {"waiting": {"reason": waiting or "ContainerCreating"}}
    )
    if message and not ready:
        state["waiting"]["message"] = message
    statuses = (
        []
        if unschedulable
        else [
            {
                "name": container,
                "image": image,
                "ready": ready,
                "restartCount": restarts,
                "imageID": f"sha256:{abs(hash(image)):x}"
                if (ready if pulled is None else pulled)
                else "",
                "state": state,
            }
        ]
    )
    conditions = (
        [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable,
            }
        ]
        if unschedulable
        else [{"type": "PodScheduled", "status": "True"}]
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "tracebloc", "labels": {"app": app}},
        "spec": {"containers": [{"name": container, "image": image}]},
        "status": {
            "phase": "Running" if ready else "Pending",
            "conditions": conditions,
            "containerStatuses": statuses,
        },
    }


def event(
    name: str,
    reason: str,
    message: str,
    *,
    kind: str = "Pod",
    type: str = "Normal",
    when: str = "2026-11-01T10:00:00Z",
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.1"},
        "involvedObject": {"kind": kind, "name": name},
        "reason": reason,
        "message": message,
        "type": type,
        "lastTimestamp": when,
    }


def client(
    *,
    ready: int = 3,
    release: str = "tracebloc",
    namespace: str = "tracebloc",
    **pods: dict[str, Any],
) -> list[dict[str, Any]]:
    """The chart's three Deployments, each with one pod, the first `ready` of them ready;
    `pods` replaces the pod of a workload by its app label (`manager=pod(…)`), and that
    workload is ready when the given pod is."""
    items: list[dict[str, Any]] = []
    for index, (name, app, image) in enumerate(CLIENT):
        name = name.replace("tracebloc", release, 1)
        given = pods.get(app.replace("-", "_"))
        # A workload is ready exactly when its pod is.
        up = _pod_ready(given) if given else index < ready
        items.append(deployment(name, app, ready=up, release=release, namespace=namespace))
        items.append(given or pod(f"{name}-7d9f-{index}", app, image, ready=up))
    return items


def _pod_ready(item: dict[str, Any]) -> bool:
    statuses = item["status"]["containerStatuses"]
    return bool(statuses) and all(s["ready"] for s in statuses)


def manifest(*items: dict[str, Any]) -> str:
    """`helm get manifest` of a release defining these workloads (other items are left out),
    with a Secret beside them as the chart renders one."""
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "client-secret"},
            "data": {"password": "c2VjcmV0"},
        }
    ]
    for item in items:
        if item.get("kind") in ("Deployment", "StatefulSet", "DaemonSet"):
            meta = item["metadata"]
            docs.append(
                {
                    "apiVersion": item["apiVersion"],
                    "kind": item["kind"],
                    "metadata": {"name": meta["name"]},
                    "spec": item.get("spec", {}),
                }
            )
    return "".join("---\n# Source: client/templates/x.yaml\n" + yaml.safe_dump(d) for d in docs)


def releases_of(*items: dict[str, Any]) -> list[str]:
    """The releases whose workloads these are (helm's release annotation)."""
    out: list[str] = []
    for item in items:
        name = item.get("metadata", {}).get("annotations", {}).get("meta.helm.sh/release-name")
        if (
            item.get("kind") in ("Deployment", "StatefulSet", "DaemonSet")
            and name
            and name not in out
        ):
            out.append(name)
    return out


def daemonset(
    name: str,
    app: str,
    *,
    release: str = "tracebloc",
    namespace: str = "tracebloc",
    scheduled: int = 1,
    ready: int | None = None,
) -> dict[str, Any]:
    up = scheduled if ready is None else ready
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "generation": 1,
            "labels": {"app.kubernetes.io/instance": release},
            "annotations": {
                "meta.helm.sh/release-name": release,
                "meta.helm.sh/release-namespace": namespace,
            },
        },
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {
            "observedGeneration": 1,
            "desiredNumberScheduled": scheduled,
            "currentNumberScheduled": scheduled,
            "updatedNumberScheduled": scheduled,
            "numberReady": up,
            "numberAvailable": up,
        },
    }


def scaled_to_zero(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every Deployment scaled to 0/0, and so no pods."""
    for item in items:
        if item["kind"] == "Deployment":
            item["spec"]["replicas"] = 0
            item["status"] = {"observedGeneration": 2}
    return [i for i in items if i["kind"] != "Pod"]


def listing(*items: dict[str, Any]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)})
