"""After `helm upgrade`: wait until the release's workloads run, or say why they do not.

One `kubectl get` per poll, bounded by READY_TIMEOUT. A cause waiting cannot cure, seen on
consecutive polls, ends the wait early. The release is never touched here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from installer.decide import diagnosis, readiness, shellquote
from installer.decide.diagnosis import Diagnosis, Suspect
from installer.decide.errors import InstallerError
from installer.decide.model import Connection, Resolution
from installer.decide.readiness import Snapshot
from installer.edges import poll, workloads
from installer.edges.apply import Tools
from installer.present.ui import Ui

log = logging.getLogger(__name__)

FIRST_POLLS_S = 1.0  # while pods are being created, look often: each look is one call
LATER_POLLS_S = 3.0
QUICK_PHASE_S = 15.0
CONFIRM_POLLS = 3  # a definite cause must be seen this many times in a row to end the wait


def _left_as_it_is(release: str, namespace: str) -> str:
    return (
        f"stopped waiting; release {release} in namespace {namespace} is installed and "
        "left as it is: `tracebloc-installer status` shows whether it comes up"
    )


@dataclass(frozen=True)
class Ready:
    workloads: tuple[str, ...]  # "Deployment tracebloc-jobs-manager 1/1"
    seconds: float


def wait_ready(
    tools: Tools,
    release: str,
    namespace: str,
    conn: Connection,
    *,
    timeout_s: float,
    read_timeout_s: float,
    ui: Ui,
    training: Resolution | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Ready:
    started = clock()
    deadline = started + timeout_s
    last: Snapshot | None = None
    unanswered = ""
    logs: dict[tuple[str, str, int], str] = {}
    streak: tuple[str, int] = ("", 0)

    def look() -> Ready | None:
        nonlocal last, unanswered, streak
        remaining = max(deadline - clock(), 1.0)
        read = workloads.read_snapshot(
            tools.kubectl,
            release,
            namespace,
            conn,
            timeout=min(read_timeout_s, remaining),
            env=tools.env,
            redactor=tools.redactor,
        )
        if read.snapshot is None:
            unanswered = read.reason
            log.info("poll: the cluster did not answer: %s", read.reason)
            ui.progress(f"the cluster is not answering ({read.reason})")
            return None
        unanswered, last = "", read.snapshot
        ui.progress(readiness.progress_text(readiness.progress(last)))
        if last.ready:
            return Ready(_summary(last), clock() - started)
        found = _diagnose(tools, last, namespace, conn, read_timeout_s, training, logs)
        streak = _streak(streak, found)
        if found is not None and found.definite and streak[1] >= CONFIRM_POLLS:
            raise InstallerError(found.message, found.remedy)
        return None

    def interval(elapsed: float) -> float:
        return FIRST_POLLS_S if elapsed < QUICK_PHASE_S else LATER_POLLS_S

    try:
        # at_deadline=False: each look is bounded by the time left, so none is taken at the end.
        ready = poll.until(
            look,
            timeout_s,
            interval,
            done=lambda r: r is not None,
            at_deadline=False,
            clock=clock,
            sleep=sleep,
        ).last
        if ready is not None:
            return ready
    except KeyboardInterrupt as exc:
        # The same interrupt goes on up, saying what it left behind (cli prints `remedy`).
        exc.remedy = _left_as_it_is(release, namespace)  # type: ignore[attr-defined]
        raise
    raise _at_deadline(
        tools, last, unanswered, namespace, conn, timeout_s, read_timeout_s, training, logs
    )


def _streak(streak: tuple[str, int], found: Diagnosis | None) -> tuple[str, int]:
    if found is None:
        return ("", 0)
    return (found.cause, streak[1] + 1 if streak[0] == found.cause else 1)


def _diagnose(
    tools: Tools,
    snapshot: Snapshot,
    namespace: str,
    conn: Connection,
    read_timeout_s: float,
    training: Resolution | None,
    logs: dict[tuple[str, str, int], str],
) -> Diagnosis | None:
    suspect = diagnosis.log_suspect(snapshot)
    text = _log_of(tools, snapshot, suspect, namespace, conn, read_timeout_s, logs)
    return diagnosis.diagnose(
        snapshot,
        namespace=namespace,
        training=training,
        log=text,
        suspect=suspect,
        target=(conn.kubectl_typed, *conn.kubectl_flags()),
    )


def _log_of(
    tools: Tools,
    snapshot: Snapshot,
    suspect: Suspect | None,
    namespace: str,
    conn: Connection,
    read_timeout_s: float,
    logs: dict[tuple[str, str, int], str],
) -> str:
    """The suspect's log, read once per crash (its restart count), not once per poll."""
    if suspect is None:
        return ""
    restarts = next(
        (
            c.restarts
            for p in snapshot.pods
            if p.name == suspect.pod
            for c in p.containers
            if c.name == suspect.container
        ),
        0,
    )
    key = (suspect.pod, suspect.container, restarts)
    if key not in logs:
        logs[key] = workloads.read_log(
            tools.kubectl,
            suspect.pod,
            suspect.container,
            namespace,
            conn,
            timeout=read_timeout_s,
            env=tools.env,
            redactor=tools.redactor,
        )
        log.info(
            "log of %s/%s (last %d lines):\n%s",
            suspect.pod,
            suspect.container,
            workloads.LOG_LINES,
            logs[key],
        )
    return logs[key]


def _at_deadline(
    tools: Tools,
    last: Snapshot | None,
    unanswered: str,
    namespace: str,
    conn: Connection,
    timeout_s: float,
    read_timeout_s: float,
    training: Resolution | None,
    logs: dict[tuple[str, str, int], str],
) -> InstallerError:
    waited = f"{timeout_s:g}s"
    if unanswered:
        seen = (
            f"; last seen: {readiness.progress_text(readiness.progress(last))}"
            if last is not None
            else ""
        )
        return InstallerError(
            f"the cluster stopped answering while the client was starting ({unanswered}){seen}",
            f"check that the cluster runs ({shellquote.join(['kubectl', 'get', 'nodes', *conn.kubectl_flags()])}; "
            f"for a local cluster, that Docker runs)\n{diagnosis.LEFT_IN_PLACE}",
        )
    if last is None:
        return InstallerError(
            f"the client's state could not be read within {waited}", diagnosis.LEFT_IN_PLACE
        )
    found = _diagnose(tools, last, namespace, conn, read_timeout_s, training, logs)
    if found is None:
        found = diagnosis.not_ready(last, namespace, (conn.kubectl_typed, *conn.kubectl_flags()))
    return InstallerError(
        f"the client did not become ready within {waited} (READY_TIMEOUT): {found.message}",
        found.remedy,
    )


def _summary(snapshot: Snapshot) -> tuple[str, ...]:
    return readiness.ready_lines(snapshot)
