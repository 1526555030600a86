"""k3d: where the binary comes from, and what `k3d cluster list -o json` says.

The binary comes from the verified-tools path (commands.localcluster_survey.find_k3d). The commands themselves are built in decide.localcluster and run by
commands.localcluster through proc.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from installer.decide.localcluster import ClusterRead, list_args
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import call


def read_cluster(
    tool: Tool,
    name: str,
    *,
    env: Mapping[str, str],
    timeout: float,
    redactor: Redactor | None = None,
) -> ClusterRead:
    result = call.answer(tool, list_args(), timeout=timeout, env=env, redactor=redactor)
    if isinstance(result, call.NoAnswer):
        return ClusterRead(False, reason=result.reason)
    if result.rc != 0:
        return ClusterRead(False, reason=call.reason(result))
    return parse_list(result.stdout, name)


def parse_list(out: str, name: str) -> ClusterRead:
    try:
        items = json.loads(out) if out.strip() else []
    except ValueError:
        return ClusterRead(False, reason="k3d printed output that is not JSON")
    if not isinstance(items, list):
        return ClusterRead(False, reason="k3d printed JSON without a list of clusters")
    # An exact name match: "tracebloc" is not "tracebloc2".
    entry: dict[str, Any] | None = next(
        (i for i in items if isinstance(i, dict) and i.get("name") == name), None
    )
    if entry is None:
        return ClusterRead(True, present=False)
    running = entry.get("serversRunning")
    listed = entry.get("nodes")
    nodes: list[Any] = listed if isinstance(listed, list) else []
    return ClusterRead(
        True,
        present=True,
        servers_running=running if isinstance(running, int) else 0,
        # Node containers only: k3d's transient tools container is not part of the cluster.
        nodes=tuple(
            str(n["name"])
            for n in nodes
            if isinstance(n, dict)
            and n.get("name")
            and n.get("role", "server") in ("server", "agent", "loadbalancer")
        ),
    )
