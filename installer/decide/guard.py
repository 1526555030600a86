"""One client per machine: decide, from one read of what is installed, where to install.

Pure. The inputs are the `helm list -A` read and one `helm get values` read of each client
release; the answer is the release to install or upgrade (with its values read, which the
sizing reuses), or `Refused` — never a guess about something that could not be seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from installer.decide import remedy
from installer.decide.errors import Refused
from installer.decide.model import Connection, Installed, ListRead, ReleaseRead, ReleaseState


@dataclass(frozen=True)
class Target:
    name: str
    namespace: str
    release: ReleaseRead  # the read the sizing uses: ABSENT only on the list's positive evidence
    moved: bool = False  # the same client was found in another namespace and is upgraded there


def installed_id(read: ReleaseRead) -> str | None:
    value = read.values.get("clientId")
    return value if isinstance(value, str) and value else None


def decide(
    listing: ListRead,
    reads: Mapping[tuple[str, str], ReleaseRead],
    *,
    name: str,
    namespace: str,
    client_id: str | None,
    conn: Connection | None = None,
) -> Target:
    """`reads` holds the values read of every client release in `listing`, keyed by
    (name, namespace). Raises Refused when installing could overwrite what is installed.
    `conn` is the cluster the run uses: the commands a refusal suggests carry it."""
    conn = conn or Connection()
    if not listing.readable:
        raise Refused(
            f"could not list the installed Helm releases ({listing.reason})",
            "nothing was changed: an install must see what is installed before it changes "
            f"anything. Check access ({remedy.helm(['list', '-A'], conn)}) and run again.",
        )
    here = next((r for r in listing.releases if (r.name, r.namespace) == (name, namespace)), None)
    if here is not None and not here.is_client:
        raise Refused(
            f"release {name!r} in namespace {namespace!r} is chart {here.chart!r}, not the "
            "tracebloc client",
            "nothing was changed; choose another namespace with TB_NAMESPACE or --namespace",
        )
    clients = [r for r in listing.releases if r.is_client]
    for release in clients:
        read = reads.get((release.name, release.namespace))
        if read is None or read.state is not ReleaseState.PRESENT:
            reason = read.reason if read is not None else "not read"
            raise Refused(
                f"could not read the values of client release {release.name!r} in namespace "
                f"{release.namespace!r} ({reason})",
                "nothing was changed: an install never overwrites what it could not see. "
                "Check access to that namespace and run again.",
            )
        if installed_id(read) is None:
            raise Refused(
                f"client release {release.name!r} in namespace {release.namespace!r} has no "
                "clientId in its values, so it cannot be told apart from another client",
                _ways_forward(release, conn),
            )
    # Without an id of our own, every installed client counts as someone else's.
    others = [r for r in clients if installed_id(reads[(r.name, r.namespace)]) != client_id]
    if others:
        first = others[0]
        raise Refused(
            f"another tracebloc client ({installed_id(reads[(first.name, first.namespace)])})"
            f" is installed as release {first.name!r} in namespace {first.namespace!r}; "
            "one machine runs one client",
            _ways_forward(first, conn),
        )
    if here is not None:
        return Target(name, namespace, reads[(name, namespace)])
    if len(clients) == 1:
        found = clients[0]
        return Target(found.name, found.namespace, reads[(found.name, found.namespace)], moved=True)
    if clients:
        where = ", ".join(f"{r.name} in {r.namespace}" for r in clients)
        raise Refused(
            f"this client is installed more than once ({where}) and none is in namespace "
            f"{namespace!r}",
            "nothing was changed; choose the one to keep with --namespace, and remove the others",
        )
    return Target(name, namespace, ReleaseRead(name, namespace, ReleaseState.ABSENT))


def _ways_forward(release: Installed, conn: Connection) -> str:
    uninstall = remedy.helm(["uninstall", release.name], conn, release.namespace)
    return (
        "nothing was changed. Ways forward: (1) repair that client: run again with its client "
        f"id; (2) remove it first: {uninstall}; (3) install this client on another machine"
    )
