"""The release's volumes at uninstall: its PersistentVolumes, and deleting claims and volumes
so that every wait ends, and one that expires names what it waited for.

The chart keeps its claims on `helm uninstall`, and a volume Bound to a claim stays
Terminating while the claim exists: so claims go first, then volumes, each wait bounded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from installer.decide import remedy
from installer.decide.errors import InstallerError
from installer.decide.model import Connection
from installer.edges import childio, helm, poll, proc
from installer.edges.workloads import (
    INSTANCE_LABEL,
    NAMESPACE_ANNOTATION,
    RELEASE_ANNOTATION,
    items_of,
)

Run = Callable[[list[str], float], proc.Result]

DELETE_TIMEOUT_S = 120.0  # per kind: claims, then volumes
POLL_S = 1.0
CLAIMS = "persistentvolumeclaims"
VOLUMES = "persistentvolumes"
SINGULAR = {CLAIMS: "volume claim", VOLUMES: "volume"}


def uninstall_args(release: str, namespace: str, conn: Connection) -> list[str]:
    """`helm uninstall` that waits for its hooks only (helm 4's default; helm 3 waits for
    nothing): the kept claims hold their volumes, which cannot go while they are bound."""
    return [
        "uninstall",
        release,
        "-n",
        namespace,
        "--timeout",
        helm.RECOVERY_TIMEOUT,
        *conn.helm_flags(),
    ]


def volume_args(conn: Connection, timeout: float) -> list[str]:
    return [
        "get",
        VOLUMES,
        "-o",
        "json",
        *conn.kubectl_flags(),
        Connection.request_timeout(timeout),
    ]


def parse_volumes(out: bytes, release: str, namespace: str) -> tuple[str, ...]:
    """Names of the release's PersistentVolumes (helm's release annotations, else the chart's
    instance label with a claim in the namespace); ValueError when not a list."""
    return tuple(
        str(_map(i.get("metadata")).get("name", ""))
        for i in items_of(out, "volumes")
        if _ours(i, release, namespace)
    )


def _ours(item: dict[str, Any], release: str, namespace: str) -> bool:
    meta = _map(item.get("metadata"))
    annotations, labels = _map(meta.get("annotations")), _map(meta.get("labels"))
    if not meta.get("name"):
        return False
    if RELEASE_ANNOTATION in annotations:
        return (
            annotations.get(RELEASE_ANNOTATION) == release
            and annotations.get(NAMESPACE_ANNOTATION) == namespace
        )
    claim = _map(_map(item.get("spec")).get("claimRef"))
    return labels.get(INSTANCE_LABEL) == release and claim.get("namespace") == namespace


def read_volumes(
    run: Run, release: str, namespace: str, conn: Connection, timeout: float
) -> tuple[tuple[str, ...], str]:
    """(the release's volumes, "") or ((), why they could not be listed)."""
    try:
        result = run(volume_args(conn, timeout), timeout)
    except InstallerError as exc:
        return (), exc.message
    if result.rc != 0:
        return (), childio.last_line(result.stderr, result.rc)
    try:
        return parse_volumes(result.out, release, namespace), ""
    except ValueError as exc:
        return (), str(exc)


def delete(
    run: Run,
    kind: str,
    names: Sequence[str],
    namespace: str | None,
    conn: Connection,
    *,
    timeout: float = DELETE_TIMEOUT_S,
    read_timeout: float = 30.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Ask for `names` of `kind` to be deleted, then wait until each is gone, at most
    `timeout`. Raises InstallerError naming each object still there, with its finalizers."""
    if not names:
        return
    scope = ["-n", namespace] if namespace else []
    asked = run(
        [
            "delete",
            kind,
            *names,
            *scope,
            "--ignore-not-found",
            "--wait=false",
            *conn.kubectl_flags(),
        ],
        read_timeout,
    )
    what = SINGULAR[kind]
    if asked.rc != 0:
        raise InstallerError(
            f"deleting the {what}s {', '.join(names)} failed: "
            f"{childio.last_line(asked.stderr, asked.rc)}",
            _by_hand(kind, names, namespace, conn),
        )
    polled = poll.until(
        lambda: _still_there(run, kind, names, scope, conn, read_timeout),
        timeout,
        POLL_S,
        done=lambda left: not left,
        clock=clock,
        sleep=sleep,
    )
    if polled.done:
        return
    where = f" in namespace {namespace}" if namespace else ""
    raise InstallerError(
        f"waited {timeout:g}s for the {what}s to be deleted; still there{where}: "
        + "; ".join(polled.last),
        _by_hand(kind, names, namespace, conn),
    )


def _still_there(
    run: Run,
    kind: str,
    names: Sequence[str],
    scope: list[str],
    conn: Connection,
    read_timeout: float,
) -> list[str]:
    """Each object of `names` that exists, described; unreadable is not gone."""
    got = run(
        ["get", kind, *names, *scope, "--ignore-not-found", "-o", "json", *conn.kubectl_flags()],
        read_timeout,
    )
    if got.rc != 0:
        return [
            f"{kind} {', '.join(names)} (could not be read: "
            f"{childio.last_line(got.stderr, got.rc)})"
        ]
    text = childio.decode(got.out).strip()
    if not text:
        return []  # --ignore-not-found prints nothing when none of them exists
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return [f"{kind} {', '.join(names)} (kubectl printed output that is not JSON)"]
    items = document.get("items", [document]) if isinstance(document, dict) else []
    return [_describe(kind, item) for item in items if isinstance(item, dict)]


def _describe(kind: str, item: dict[str, Any]) -> str:
    meta = _map(item.get("metadata"))
    state = "Terminating" if meta.get("deletionTimestamp") else "not being deleted"
    finalizers = [str(f) for f in meta.get("finalizers") or []]
    held = f", held by finalizer {', '.join(finalizers)}" if finalizers else ""
    phase = _map(item.get("status")).get("phase")
    return f"{SINGULAR[kind]} {meta.get('name')} ({state}{held}" + (f"; {phase})" if phase else ")")


def _by_hand(kind: str, names: Sequence[str], namespace: str | None, conn: Connection) -> str:
    listed = remedy.kubectl(["get", kind, *names], conn, namespace)
    return (
        f"the helm release is removed; see what holds them: {listed}, then run the "
        "uninstall again with --delete-data"
    )


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
