"""Can the cluster be reached, and whose floors does preflight check? Pure: reads in, answers out.

Unreachable is decided on positive evidence only: every cluster read failed, and each
failure says it could not connect (or ran out of time). A read that reached the API server
and was refused (RBAC, a broken release) is not "unreachable": the guard refuses (exit 3).
"""

from __future__ import annotations

from installer.decide import locality
from installer.decide.model import KubeTarget, NodeRead

# What kubectl and helm say when no API server answered. Lower case; matched as substrings.
_NO_CONNECTION = (
    "cluster unreachable",
    "unable to connect to the server",
    "the connection to the server",  # kubectl: "… localhost:8080 was refused"
    "connection refused",
    "connect: no route to host",
    "network is unreachable",
    "no such host",
    "i/o timeout",
    "tls handshake timeout",
    "context deadline exceeded",
    "did not finish within",  # our own deadline
    "current-context must exist",
    "no configuration has been provided",
    "context was not found",
)


def says_no_connection(reason: str) -> bool:
    text = reason.lower()
    return any(marker in text for marker in _NO_CONNECTION)


def unreachable(list_reason: str | None, nodes: NodeRead) -> bool:
    """`list_reason` is why `helm list` failed (None: it answered). With the node read
    skipped (an override), helm's word alone decides."""
    if list_reason is None or not says_no_connection(list_reason):
        return False
    if nodes.skipped:
        return True
    return not nodes.readable and says_no_connection(nodes.reason)


def is_local(target: KubeTarget, nodes: NodeRead | None = None, *, storage_mode: str = "") -> bool:
    """Whose floors preflight checks: this machine's unless the one decision
    (decide/locality.py) says the cluster is elsewhere. Unknown counts as local: the machine's
    own floors are then checked, as before anything about the cluster was known."""
    return locality.where(target, nodes, storage_mode=storage_mode).local is not False
