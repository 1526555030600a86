"""Which helm verb unwedges a release, and the commands an operator can run by hand. Pure."""

from __future__ import annotations

from installer.decide import remedy
from installer.decide.model import Connection


def manual_commands(release: str, namespace: str, conn: Connection | None = None) -> str:
    """What an operator can run by hand, on the cluster and namespace this run used."""
    conn = conn or Connection()

    def helm_cmd(verb: str) -> str:
        return remedy.helm([verb, release], conn, namespace)

    return (
        f"to inspect: {helm_cmd('status')}; {helm_cmd('history')}\n"
        f"to unwedge: {helm_cmd('rollback')} (an upgrade), or "
        f"{helm_cmd('uninstall')} (a first install; the data volumes are kept)\n"
        f"then run {remedy.installer(conn, namespace)} again"
    )


ROLLBACK_STATES = ("pending-upgrade", "pending-rollback")


UNINSTALL_STATES = ("pending-install", "uninstalling")


def recovery_for(status: str | None) -> str | None:
    """The helm verb that unwedges a release in `status`, or None when none is needed."""
    if status in ROLLBACK_STATES:
        return "rollback"
    if status in UNINSTALL_STATES:
        return "uninstall"
    return None
