"""What `status` prints, and the workload states `diagnose` bundles. Pure."""

from __future__ import annotations

from typing import Any

from installer.decide import readiness
from installer.decide.readiness import Snapshot
from installer.decide.status import Status


def status_json(status: Status) -> dict[str, Any]:
    snapshot = status.snapshot
    return {
        "healthy": status.healthy,
        "problems": status.problems,
        "release": {
            "name": status.release,
            "namespace": status.namespace,
            "state": status.state,
            "chart": status.row.chart if status.row else None,
            "chart_version": status.chart_version,
            **({"reason": status.listed.reason} if status.listed.reason else {}),
        },
        "training": (
            {"size": status.training[0], "provenance": status.training[1]}
            if status.training
            else None
        ),
        "workloads": {
            "readable": snapshot is not None,
            **({"reason": status.workloads.reason} if snapshot is None else {}),
            "ready": sum(1 for w in snapshot.workloads if w.rolled_out) if snapshot else None,
            "total": len(snapshot.workloads) if snapshot else None,
            "items": [
                {
                    "kind": w.kind,
                    "name": w.name,
                    "ready": w.ready,
                    "desired": w.desired,
                    "rolled_out": w.rolled_out,
                }
                for w in snapshot.workloads
            ]
            if snapshot
            else [],
        },
        "cluster": {
            "reachable": status.nodes.readable,
            "nodes": len(status.nodes.nodes) if status.nodes.readable else None,
            **({"reason": status.nodes.reason} if status.nodes.reason else {}),
        },
        "tools": dict(status.tools),
    }


def status_text(status: Status) -> str:
    chart = f" (chart {status.row.chart})" if status.row else ""
    lines = [f"release:   {status.release} in namespace {status.namespace}: {status.state}{chart}"]
    if status.training:
        lines.append(f"training:  {status.training[0]} (provenance {status.training[1]})")
    snapshot = status.snapshot
    if snapshot is not None:
        ready = sum(1 for w in snapshot.workloads if w.rolled_out)
        lines.append(f"workloads: {ready} of {len(snapshot.workloads)} ready")
        lines += [
            f"           {w.kind} {w.name} {w.ready}/{w.desired}"
            + ("" if w.rolled_out else " (not ready)")
            for w in snapshot.workloads
        ]
    else:
        lines.append(f"workloads: unreadable: {status.workloads.reason}")
    if status.nodes.readable:
        lines.append(f"cluster:   reachable, {len(status.nodes.nodes)} node(s)")
    else:
        lines.append(f"cluster:   not reachable: {status.nodes.reason}")
    tools = ", ".join(f"{name} {path or 'not found'}" for name, path in status.tools.items())
    lines.append(f"tools:     {tools}")
    if status.healthy:
        lines.append("healthy")
    else:
        lines.append("not healthy:")
        lines += [f"  {problem}" for problem in status.problems]
    return "\n".join(lines)


def snapshot_json(snapshot: Snapshot) -> dict[str, Any]:
    """Pod states and events, without the specs (a pod's environment may hold a secret)."""
    return {
        "ready": snapshot.ready,
        "progress": readiness.progress_text(readiness.progress(snapshot)),
        "workloads": [
            {
                "kind": w.kind,
                "name": w.name,
                "ready": w.ready,
                "desired": w.desired,
                "rolled_out": w.rolled_out,
                "failed": w.failed,
            }
            for w in snapshot.workloads
        ],
        "pods": [
            {
                "name": p.name,
                "phase": p.phase,
                "terminating": p.terminating,
                "unschedulable": p.unschedulable,
                "containers": [
                    {
                        "name": c.name,
                        "image": c.image,
                        "init": c.init,
                        "ready": c.ready,
                        "waiting": c.waiting,
                        "message": c.message,
                        "restarts": c.restarts,
                    }
                    for c in p.containers
                ],
            }
            for p in snapshot.pods
        ],
        "events": [
            {
                "when": e.when,
                "type": e.type,
                "object": f"{e.kind}/{e.name}",
                "reason": e.reason,
                "message": e.message,
            }
            for e in snapshot.events
        ],
    }
