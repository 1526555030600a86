"""Did this engine create the local k3d cluster? Only then may `uninstall --delete-cluster`
remove it.

The evidence is a marker the local-cluster step writes into the data directory when it
creates a cluster: `k3d-cluster.json`, `{"created_by": "tracebloc-installer", "name": …}`.
A cluster that was adopted, or made by hand, has no marker and is never deleted. (The
marker is the contract with the step that creates clusters; until that step writes it, no
cluster qualifies, which is the safe way round.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from installer.decide.errors import InstallerError
from installer.edges import proc
from installer.present.redact import Redactor

MARKER = "k3d-cluster.json"
CREATOR = "tracebloc-installer"
DELETE_TIMEOUT_S = 180.0


def created_cluster(data_dir: str) -> str | None:
    """The name of the cluster the engine created, or None without positive evidence."""
    try:
        with open(os.path.join(data_dir, MARKER), encoding="utf-8") as handle:
            marker = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("created_by") != CREATOR:
        return None
    name = marker.get("name")
    return name if isinstance(name, str) and name else None


def cluster_names(tool: proc.Tool, *, timeout: float, env: Mapping[str, str],
                  redactor: Redactor) -> set[str]:  # fmt: skip
    """The clusters k3d knows; raises InstallerError when it cannot say."""
    result = proc.run(tool, ["cluster", "list", "-o", "json"], timeout=timeout, env=env,
                      redactor=redactor)  # fmt: skip
    if result.rc != 0:
        raise InstallerError(f"k3d cluster list failed: {proc.last_line(result.stderr, result.rc)}")
    try:
        rows = json.loads(result.stdout or "[]") or []
    except (ValueError, RecursionError):
        raise InstallerError("k3d cluster list printed output that is not JSON") from None
    if not isinstance(rows, list):
        raise InstallerError("k3d cluster list printed JSON that is not a list")
    return {str(row.get("name")) for row in rows if isinstance(row, dict)}


def delete_args(name: str) -> list[str]:
    return ["cluster", "delete", name]
