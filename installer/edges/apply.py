"""Changing the cluster: recover a wedged release, make the chart repo available, wait for
the metrics API, run the planned `helm upgrade --install`, point the kube context.

Each function runs its tool through `proc` with a deadline and turns failure into an
`InstallerError` whose remedy names the commands an operator can run by hand.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from installer.decide import remedy
from installer.decide.errors import InstallerError, Refused, ToolTimeout
from installer.decide.model import Connection
from installer.decide.recovery import manual_commands
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import childio, helm, poll, proc
from installer.edges.call import Caller, NoAnswer

log = logging.getLogger(__name__)

READ_TIMEOUT_S = 30.0  # when the caller names none; install passes TB_PROBE_TIMEOUT_S
REPO_TIMEOUT_S = 120.0
RECOVERY_TIMEOUT_S = 330.0  # helm's own --timeout 5m, plus time to start and report
STOP_GRACE_S = 10.0  # after SIGTERM/CTRL_BREAK, how long helm gets to mark the release failed
METRICS_APISERVICE = "v1beta1.metrics.k8s.io"
METRICS_POLL_S = 5.0
TAIL_LINES = 15


@dataclass(frozen=True)
class Tools:
    helm: Tool
    kubectl: Tool
    env: Mapping[str, str]
    redactor: Redactor
    read_timeout: float = READ_TIMEOUT_S  # every read: status, repo list, APIService, context

    @property
    def caller(self) -> Caller:
        return Caller(self.env, self.redactor, self.read_timeout)

    def run(
        self, tool: Tool, args: Sequence[str], timeout: float, grace: float = 0.0
    ) -> proc.Result:
        return self.caller.run(tool, args, timeout=timeout, grace=grace)


def tail(text: str, lines: int = TAIL_LINES) -> str:
    """The last `lines` non-empty lines, each cut to proc.LINE_CAP characters: a tool's
    10 MB line reaches neither the terminal nor the log whole."""
    kept: list[str] = []
    for line in reversed(text.splitlines()):
        if line.strip():
            kept.append(childio.cap(line.rstrip()))
            if len(kept) == lines:
                break
    return "\n".join(reversed(kept))


# --- recovery --------------------------------------------------------------------------


def release_status(tools: Tools, release: str, namespace: str, conn: Connection) -> str | None:
    result = tools.caller.answer(tools.helm, helm.status_args(release, namespace, conn))
    try:
        if not isinstance(result, NoAnswer):
            return helm.parse_status(result.rc, result.out, result.err, namespace)
        said = result.reason
    except InstallerError as exc:
        said = exc.message
    # A state that cannot be seen is never guessed at: recovering or upgrading blind could
    # undo someone's half-finished change.
    raise Refused(said, "nothing was changed\n" + manual_commands(release, namespace, conn))


def recover(tools: Tools, release: str, namespace: str, conn: Connection, verb: str) -> None:
    args = (helm.rollback_args if verb == "rollback" else helm.uninstall_args)(
        release, namespace, conn
    )
    try:
        result = tools.run(tools.helm, args, RECOVERY_TIMEOUT_S, grace=STOP_GRACE_S)
    except ToolTimeout as exc:
        raise InstallerError(
            f"helm {verb} of the wedged release did not finish in time",
            manual_commands(release, namespace, conn),
        ) from exc
    if result.rc != 0:
        raise InstallerError(
            f"helm {verb} of the wedged release failed: "
            f"{childio.last_line(result.stderr, result.rc)}",
            manual_commands(release, namespace, conn),
        )


# --- the chart repository --------------------------------------------------------------


def read_repos(tools: Tools) -> dict[str, str]:
    result = tools.run(tools.helm, helm.repo_list_args(), tools.read_timeout)
    return helm.parse_repo_list(result.rc, result.out, result.err)


def ensure_repo(
    tools: Tools,
    name: str,
    url: str,
    ca_file: str | None,
    repos: dict[str, str] | None = None,
    *,
    fresh: bool = False,
) -> str:
    """Add the repo when missing, else update it, unless `fresh` (this run already did); returns
    what was done. `repos` is a `read_repos` already made."""
    if repos is None:
        repos = read_repos(tools)
    done = f"repo {name} already configured"
    if name not in repos:
        added = tools.run(tools.helm, helm.repo_add_args(name, url, ca_file), REPO_TIMEOUT_S)
        if added.rc != 0:
            raise InstallerError(
                f"could not add the chart repository {url}: "
                f"{childio.last_line(added.stderr, added.rc)}",
                _repo_remedy(),
            )
        return f"added repo {name} ({url})"
    if repos[name].rstrip("/") != url.rstrip("/"):
        done = f"repo {name} is configured as {repos[name]} (kept)"
    if not fresh:
        update_index(tools, name)
    return done


def update_index(tools: Tools, name: str) -> None:
    """`helm repo update <name>`: the local copy of that repository's index, refreshed."""
    updated = tools.run(tools.helm, helm.repo_update_args(name), REPO_TIMEOUT_S)
    if updated.rc != 0:
        raise InstallerError(
            f"could not update the chart repository {name}: "
            f"{childio.last_line(updated.stderr, updated.rc)}",
            _repo_remedy(),
        )


def search_index(tools: Tools, chart: str) -> object:
    """The rows `helm search repo <chart>` finds in the local index (a local read)."""
    result = tools.run(tools.helm, helm.search_args(chart), tools.read_timeout)
    return helm.parse_search(result.rc, result.out, result.err)


def _repo_remedy() -> str:
    return (
        "check network access to the repository (HTTPS_PROXY/NO_PROXY behind a proxy; "
        "TRACEBLOC_CA_BUNDLE for a TLS-inspecting proxy), or set TRACEBLOC_CHART_PATH to "
        "a local copy of the chart"
    )


# --- the metrics API -------------------------------------------------------------------


def metrics_state(tools: Tools, conn: Connection) -> tuple[str, str]:
    """("available" | "registered" | "not-registered" | "unreadable", detail). Not registered
    is a state to wait out: metrics-server registers a while after the API answers."""
    args = ["get", "apiservice", METRICS_APISERVICE, "-o", "json", *conn.kubectl_flags()]
    result = tools.caller.answer(tools.kubectl, args)
    if isinstance(result, NoAnswer):
        return "unreadable", result.reason
    if result.rc != 0:
        if "NotFound" in result.stderr or "not found" in result.stderr:
            return "not-registered", ""
        return "unreadable", childio.last_line(result.stderr, result.rc)
    try:
        conditions = json.loads(result.stdout).get("status", {}).get("conditions", [])
        available = any(
            c.get("type") == "Available" and c.get("status") == "True" for c in conditions
        )
    except (ValueError, AttributeError, TypeError, RecursionError):
        return "unreadable", "kubectl printed an APIService that could not be read"
    return ("available", "") if available else ("registered", "")


def metrics_available(tools: Tools, conn: Connection) -> bool | None:
    """True/False from the APIService's Available condition; None when it is not
    registered or could not be read."""
    state, _ = metrics_state(tools, conn)
    return {"available": True, "registered": False}.get(state)


def wait_for_metrics(
    tools: Tools,
    conn: Connection,
    seconds: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Until the APIService is registered and Available, at most `seconds`
    (TB_METRICS_WAIT_S); returns one line saying what was seen last, and for how long it was
    waited for (measured, not the setting). Never fails the install: when metrics-server is
    really missing, the chart says so at render time."""
    polled = poll.until(
        lambda: metrics_state(tools, conn),
        seconds,
        METRICS_POLL_S,
        done=lambda seen: seen[0] == "available",
        clock=clock,
        sleep=sleep,
    )
    state, detail = polled.last
    if polled.done:
        return "the metrics API is available"
    seen = {
        "registered": "is registered but not Available",
        "not-registered": "is not registered",
        "unreadable": f"could not be read ({detail})",
    }[state]
    return (
        f"the metrics API ({METRICS_APISERVICE}) {seen} after "
        f"{polled.waited:.0f}s of waiting; continuing (raise "
        "TB_METRICS_WAIT_S on a slow cluster)"
    )


# --- the install itself ----------------------------------------------------------------


def upgrade_install(
    tools: Tools,
    argv: Sequence[str],
    release: str,
    namespace: str,
    timeout_s: float,
    conn: Connection | None = None,
) -> proc.Result:
    """Run the planned helm command (argv[0] is "helm"). Raises InstallerError on failure,
    with the tail of helm's output and the commands that unwedge the release."""
    try:
        result = tools.run(tools.helm, list(argv[1:]), timeout_s, grace=STOP_GRACE_S)
    except ToolTimeout as exc:
        said = tail(exc.output)
        log.info("helm output before it was stopped:\n%s", said)
        raise InstallerError(
            f"helm did not finish within {timeout_s / 60:g} min and was stopped"
            + (f"; it said:\n{said}" if said else ""),
            "raise TB_HELM_TIMEOUT_MIN for a slow cluster or image registry\n"
            + manual_commands(release, namespace, conn),
        ) from None
    if result.rc != 0:
        # stderr last: helm's own "Error: …" line is the one that must survive the tail.
        said = tail(result.stdout + "\n" + result.stderr)
        log.info("helm output:\n%s", said)
        raise InstallerError(
            f"helm upgrade --install failed (exit {result.rc})" + (f":\n{said}" if said else ""),
            _after_failure(tools, release, namespace, conn),
        )
    log.info("helm output:\n%s", tail(result.stdout))
    return result


def _after_failure(tools: Tools, release: str, namespace: str, conn: Connection | None) -> str:
    """The remedy after a failed upgrade: helm's own word that no release exists (a first
    install refused before anything was created) means nothing to roll back or uninstall."""
    conn = conn or Connection()
    result = tools.caller.answer(tools.helm, helm.status_args(release, namespace, conn))
    try:
        absent = (
            not isinstance(result, NoAnswer)
            and helm.parse_status(result.rc, result.out, result.err, namespace) is None
        )
    except InstallerError:
        absent = False  # not seen: the full set of commands, as for any failure
    if not absent:
        return manual_commands(release, namespace, conn)
    return (
        f"no release {release} was created in namespace {namespace}: nothing to roll "
        "back or uninstall; fix what helm names above, then run "
        f"{remedy.installer(conn, namespace)} again"
    )


def point_context(tools: Tools, conn: Connection, namespace: str) -> bool:
    """Make kubectl default to the namespace (best effort)."""
    target = [conn.context] if conn.context else ["--current"]
    args = [
        "config",
        "set-context",
        *target,
        "--namespace",
        namespace,
        *(["--kubeconfig", conn.kubeconfig] if conn.kubeconfig else []),
    ]
    result = tools.caller.answer(tools.kubectl, args)
    return not isinstance(result, NoAnswer) and result.rc == 0
