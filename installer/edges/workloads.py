"""Reads of the release's workloads: one `kubectl get` of the namespace per look, and a
bounded log tail. Workloads are found by helm's release annotation (else the instance
label), their pods by each workload's selector: no workload name is written here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from installer.decide.model import Connection
from installer.decide.readiness import (
    Container,
    DefinedRead,
    Event,
    Pod,
    Snapshot,
    SnapshotRead,
    Workload,
)
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import call, childio

KINDS = "deployments,statefulsets,daemonsets,pods,events"
LOG_LINES = 50
LOG_BYTES = 64 * 1024
RELEASE_ANNOTATION = "meta.helm.sh/release-name"
NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
INSTANCE_LABEL = "app.kubernetes.io/instance"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


def snapshot_args(namespace: str, conn: Connection, timeout: float) -> list[str]:
    return [
        "get",
        KINDS,
        "-n",
        namespace,
        "-o",
        "json",
        *conn.kubectl_flags(),
        Connection.request_timeout(timeout),
    ]


def read_snapshot(
    tool: Tool | None,
    release: str,
    namespace: str,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> SnapshotRead:
    """One look at the namespace. Every expected failure is an unreadable read with a reason."""
    found, why = call.parsed(
        tool,
        snapshot_args(namespace, conn, timeout),
        lambda out: parse_snapshot(out, release, namespace),
        timeout=timeout,
        env=env,
        redactor=redactor,
        missing="kubectl was not found",
    )
    return SnapshotRead(found, why)


def manifest_args(release: str, namespace: str, conn: Connection) -> list[str]:
    return ["get", "manifest", release, "-n", namespace, *conn.helm_flags()]


def read_defined(
    tool: Tool | None,
    release: str,
    namespace: str,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> DefinedRead:
    """The workloads `helm get manifest` names in the release's namespace. The manifest holds
    the release's Secrets: only kinds and names are kept, nothing of it is logged."""
    found, why = call.parsed(
        tool,
        manifest_args(release, namespace, conn),
        lambda out: parse_manifest(out, namespace),
        timeout=timeout,
        env=env,
        redactor=redactor,
        missing="helm was not found",
    )
    return DefinedRead(found, why)


def parse_manifest(out: bytes, namespace: str) -> tuple[tuple[str, str], ...]:
    """(kind, name) of each Deployment, StatefulSet and DaemonSet placed in `namespace` (a
    document without one is the release's). Raises ValueError when it is not YAML."""
    try:
        documents = list(yaml.safe_load_all(childio.decode(out)))
    except (yaml.YAMLError, RecursionError):
        raise ValueError("helm printed a manifest that is not YAML") from None
    found: list[tuple[str, str]] = []
    for doc in documents:
        if not isinstance(doc, dict) or doc.get("kind") not in WORKLOAD_KINDS:
            continue
        meta = _map(doc.get("metadata"))
        if (
            meta.get("namespace") in (None, "", namespace)
            and (doc["kind"], _name(meta)) not in found
        ):
            found.append((str(doc["kind"]), _name(meta)))
    return tuple(found)


def log_args(
    pod: str,
    container: str,
    namespace: str,
    conn: Connection,
    *,
    timeout: float,
    lines: int = LOG_LINES,
    limit: int = LOG_BYTES,
    previous: bool = False,
) -> list[str]:
    return [
        "logs",
        pod,
        "-c",
        container,
        "-n",
        namespace,
        f"--tail={lines}",
        f"--limit-bytes={limit}",
        *(["--previous"] if previous else []),
        *conn.kubectl_flags(),
        Connection.request_timeout(timeout),
    ]


def read_log(
    tool: Tool,
    pod: str,
    container: str,
    namespace: str,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    lines: int = LOG_LINES,
    limit: int = LOG_BYTES,
    previous: bool = False,
) -> str:
    """The container's last lines; "" when they cannot be read (a log is evidence, never a
    reason to fail)."""
    result = call.answer(
        tool,
        log_args(
            pod,
            container,
            namespace,
            conn,
            timeout=timeout,
            lines=lines,
            limit=limit,
            previous=previous,
        ),
        timeout=timeout,
        env=env,
        redactor=redactor,
    )
    if isinstance(result, call.NoAnswer):
        return ""
    return result.stdout[-limit:] if result.rc == 0 else ""


# --- parsing ---------------------------------------------------------------------------


def items_of(out: bytes, what: str = "objects") -> list[dict[str, Any]]:
    """The objects of a `kubectl get … -o json` list; ValueError when the output is not one."""
    try:
        document = json.loads(childio.decode(out))
    except (ValueError, RecursionError):
        raise ValueError("kubectl printed output that is not JSON") from None
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise ValueError(f"kubectl printed JSON without a list of {what}")
    return [item for item in items if isinstance(item, dict)]


def parse_snapshot(out: bytes, release: str, namespace: str) -> Snapshot:
    """Raises ValueError when the output is not the list kubectl prints."""
    items = items_of(out)
    workloads = tuple(
        _workload(i)
        for i in items
        if i.get("kind") in WORKLOAD_KINDS and _belongs(i, release, namespace)
    )
    pods = tuple(_pod(i) for i in items if i.get("kind") == "Pod")
    ours = tuple(
        p
        for p in pods
        if any(
            w.selector and all(p.labels.get(k) == v for k, v in w.selector.items())
            for w in workloads
        )
    )
    names = {p.name for p in ours} | {w.name for w in workloads}
    prefixes = tuple(f"{w.name}-" for w in workloads)  # ReplicaSets, and pods since deleted
    events = [_event(i) for i in items if i.get("kind") == "Event"]
    events = [e for e in events if e.name in names or e.name.startswith(prefixes)]
    events.sort(key=lambda e: e.when)
    return Snapshot(workloads, ours, tuple(events))


def pvc_args(namespace: str, conn: Connection, timeout: float) -> list[str]:
    return [
        "get",
        "persistentvolumeclaims",
        "-n",
        namespace,
        "-o",
        "json",
        *conn.kubectl_flags(),
        Connection.request_timeout(timeout),
    ]


def parse_pvcs(out: bytes, release: str, namespace: str) -> tuple[str, ...]:
    """Names of the release's claims; raises ValueError when the output is not a list."""
    try:
        document = json.loads(childio.decode(out))
    except (ValueError, RecursionError):
        raise ValueError("kubectl printed output that is not JSON") from None
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise ValueError("kubectl printed JSON without a list of claims")
    return tuple(
        _name(_map(i.get("metadata")))
        for i in items
        if isinstance(i, dict) and _belongs(i, release, namespace)
    )


def _belongs(item: dict[str, Any], release: str, namespace: str) -> bool:
    meta = _map(item.get("metadata"))
    annotations, labels = _map(meta.get("annotations")), _map(meta.get("labels"))
    if RELEASE_ANNOTATION in annotations:
        return (
            annotations.get(RELEASE_ANNOTATION) == release
            and annotations.get(NAMESPACE_ANNOTATION, namespace) == namespace
        )
    return labels.get(INSTANCE_LABEL) == release


def _workload(item: dict[str, Any]) -> Workload:
    meta, spec, status = (_map(item.get(k)) for k in ("metadata", "spec", "status"))
    kind = str(item.get("kind"))
    desired = _int(spec.get("replicas"), 1)
    ready = _int(status.get("readyReplicas"))
    selector = {
        str(k): str(v) for k, v in _map(_map(spec.get("selector")).get("matchLabels")).items()
    }
    observed = _int(status.get("observedGeneration")) >= _int(meta.get("generation"))
    failed = ""
    if kind == "DaemonSet":
        desired = _int(status.get("desiredNumberScheduled"))
        ready = _int(status.get("numberReady"))
        rolled_out = (
            observed
            and _int(status.get("updatedNumberScheduled")) >= desired
            and _int(status.get("numberAvailable")) >= desired
        )
    elif kind == "Deployment":
        for condition in status.get("conditions") or []:
            if (
                isinstance(condition, dict)
                and condition.get("reason") == "ProgressDeadlineExceeded"
            ):
                failed = str(condition.get("message") or "progress deadline exceeded")
        updated = _int(status.get("updatedReplicas"))
        rolled_out = (
            observed
            and updated >= desired
            and _int(status.get("replicas")) <= updated
            and _int(status.get("availableReplicas")) >= updated
        )
    else:
        current, update = status.get("currentRevision"), status.get("updateRevision")
        rolled_out = (
            observed
            and _int(status.get("observedGeneration")) > 0
            and ready >= desired
            and (not update or current == update)
        )
    if desired == 0:
        rolled_out = observed
    return Workload(kind, _name(meta), desired, ready, rolled_out, selector, failed)


def _pod(item: dict[str, Any]) -> Pod:
    meta, spec, status = (_map(item.get(k)) for k in ("metadata", "spec", "status"))
    images: dict[str, str] = {}
    order: list[str] = []
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict) and isinstance(c.get("image"), str):
                images[f"{key}/{c.get('name')}"] = c["image"]
                if c["image"] not in order:
                    order.append(c["image"])
    containers = []
    for key, spec_key in (
        ("initContainerStatuses", "initContainers"),
        ("containerStatuses", "containers"),
    ):
        for s in status.get(key) or []:
            if not isinstance(s, dict):
                continue
            waiting = _map(_map(s.get("state")).get("waiting"))
            name = str(s.get("name", ""))
            containers.append(
                Container(
                    name=name,
                    image=images.get(f"{spec_key}/{name}", str(s.get("image", ""))),
                    init=spec_key == "initContainers",
                    ready=s.get("ready") is True,
                    waiting=str(waiting.get("reason") or ""),
                    message=str(waiting.get("message") or ""),
                    restarts=_int(s.get("restartCount")),
                    pulled=bool(s.get("imageID")),
                )
            )
    unschedulable = ""
    for condition in status.get("conditions") or []:
        if (
            isinstance(condition, dict)
            and condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
        ):
            unschedulable = str(
                condition.get("message") or condition.get("reason") or "unschedulable"
            )
    labels = {str(k): str(v) for k, v in _map(meta.get("labels")).items()}
    return Pod(
        _name(meta),
        labels,
        tuple(order),
        tuple(containers),
        phase=str(status.get("phase") or ""),
        unschedulable=unschedulable,
        terminating=bool(meta.get("deletionTimestamp")),
    )


def _event(item: dict[str, Any]) -> Event:
    involved = _map(item.get("involvedObject")) or _map(item.get("regarding"))
    when = item.get("lastTimestamp") or item.get("eventTime") or item.get("firstTimestamp") or ""
    return Event(
        kind=str(involved.get("kind", "")),
        name=str(involved.get("name", "")),
        reason=str(item.get("reason") or ""),
        message=str(item.get("message") or item.get("note") or ""),
        type=str(item.get("type") or "Normal"),
        when=str(when),
    )


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _name(meta: dict[str, Any]) -> str:
    name = meta.get("name")
    return name if isinstance(name, str) and name else "<unnamed>"
