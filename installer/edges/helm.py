"""helm: one read of the installed release's user values, and the install argv.

The argv is built here and nowhere else, so `plan` shows exactly what `install` runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from installer.decide.errors import InstallerError
from installer.decide.model import (
    Connection,
    Installed,
    ListRead,
    ReleaseRead,
    ReleaseState,
)
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import call, childio


def get_values_args(release: str, namespace: str, conn: Connection) -> list[str]:
    return ["get", "values", release, "-n", namespace, "-o", "json", *conn.helm_flags()]


def read_release(
    tool: Tool | None,
    release: str,
    namespace: str,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> ReleaseRead:
    def unreadable(reason: str) -> ReleaseRead:
        return ReleaseRead(release, namespace, ReleaseState.UNREADABLE, reason=reason)

    result = call.answer(
        tool,
        get_values_args(release, namespace, conn),
        timeout=timeout,
        env=env,
        redactor=redactor,
        missing="helm was not found",
    )
    if isinstance(result, call.NoAnswer):
        return unreadable(result.reason)
    return parse_release(release, namespace, result.rc, result.out, result.err)


def parse_release(release: str, namespace: str, rc: int, out: bytes, err: bytes) -> ReleaseRead:
    """Absent only on helm's own word for it; every other failure is unreadable."""
    stderr = childio.decode(err)
    if rc != 0:
        if _says_absent(stderr, namespace):
            return ReleaseRead(release, namespace, ReleaseState.ABSENT)
        return ReleaseRead(
            release, namespace, ReleaseState.UNREADABLE, reason=childio.last_line(stderr, rc)
        )
    try:
        values = json.loads(childio.decode(out))  # no output at all is not JSON: unreadable
    except (ValueError, RecursionError):
        return ReleaseRead(
            release,
            namespace,
            ReleaseState.UNREADABLE,
            reason="helm printed output that is not JSON",
        )
    if values is None:  # helm prints `null` for a release installed with no user values
        values = {}
    if not isinstance(values, dict):
        return ReleaseRead(
            release,
            namespace,
            ReleaseState.UNREADABLE,
            reason="helm printed JSON that is not a map of values",
        )
    return ReleaseRead(release, namespace, ReleaseState.PRESENT, values=values)


def _says_absent(stderr: str, namespace: str) -> bool:
    if re.search(r"release: not found", stderr):
        return True
    return f'namespaces "{namespace}" not found' in stderr


def upgrade_install_args(
    release: str, chart: str, namespace: str, values_path: str, conn: Connection
) -> list[str]:
    """The install invocation, identical on every OS. Secrets live in the values file only."""
    return [
        "upgrade",
        "--install",
        release,
        chart,
        "--namespace",
        namespace,
        "--create-namespace",
        "--cleanup-on-fail",
        "--values",
        values_path,
        *conn.helm_flags(),
    ]


# --- what is installed: one list, then each client release's values once ---------------

# Every state a release can be in while it still exists. Helm 3 lists only deployed and
# failed by default, helm 4 everything; naming the filters means the same on both.
LIST_STATES = ("--deployed", "--failed", "--pending", "--uninstalling")


def list_args(conn: Connection) -> list[str]:
    # --max 0: no page limit (the default stops at 256 releases).
    return [
        "list",
        "--all-namespaces",
        *LIST_STATES,
        "--max",
        "0",
        "-o",
        "json",
        *conn.helm_flags(),
    ]


def parse_list(rc: int, out: bytes, err: bytes) -> ListRead:
    """Nothing is installed only on a well-formed empty list (`[]`). No output at all, `null`
    or a cut-off document is an answer nobody gave: unreadable, like a failure."""
    if rc != 0:
        return ListRead(False, reason=childio.last_line(childio.decode(err), rc))
    text = childio.decode(out)
    if not text.strip():
        return ListRead(False, reason="helm list exited 0 but printed nothing")
    try:
        rows = json.loads(text)
    except (ValueError, RecursionError):
        return ListRead(False, reason="helm list printed output that is not JSON")
    if not isinstance(rows, list):
        return ListRead(False, reason="helm list printed JSON that is not a list")
    releases = []
    for row in rows:
        if not isinstance(row, dict) or not all(
            isinstance(row.get(key), str) for key in ("name", "namespace", "chart")
        ):
            return ListRead(
                False, reason=f"helm list printed a row it did not explain: {row!r:.120}"
            )
        releases.append(
            Installed(row["name"], row["namespace"], row["chart"], str(row.get("status", "")))
        )
    return ListRead(True, tuple(releases))


def status_args(release: str, namespace: str, conn: Connection) -> list[str]:
    return ["status", release, "-n", namespace, "-o", "json", *conn.helm_flags()]


def parse_status(rc: int, out: bytes, err: bytes, namespace: str) -> str | None:
    """The release's state (`deployed`, `pending-upgrade`, …); None when it does not exist.

    Raises InstallerError when the state could not be read."""
    stderr = childio.decode(err)
    if rc != 0:
        if _says_absent(stderr, namespace):
            return None
        raise InstallerError(f"could not read the release's state: {childio.last_line(stderr, rc)}")
    try:
        document = json.loads(childio.decode(out))
        status = document["info"]["status"]
    except (ValueError, RecursionError, KeyError, TypeError):
        raise InstallerError("helm status printed output without a release state") from None
    if not isinstance(status, str) or not status.strip():
        raise InstallerError("helm status printed output without a release state")
    return status


RECOVERY_TIMEOUT = "5m"


def rollback_args(release: str, namespace: str, conn: Connection) -> list[str]:
    return [
        "rollback",
        release,
        "-n",
        namespace,
        "--wait",
        "--timeout",
        RECOVERY_TIMEOUT,
        *conn.helm_flags(),
    ]


def uninstall_args(release: str, namespace: str, conn: Connection) -> list[str]:
    return [
        "uninstall",
        release,
        "-n",
        namespace,
        "--wait",
        "--timeout",
        RECOVERY_TIMEOUT,
        *conn.helm_flags(),
    ]


def repo_list_args() -> list[str]:
    return ["repo", "list", "-o", "json"]


def parse_repo_list(rc: int, out: bytes, err: bytes) -> dict[str, str]:
    """name → URL. Helm answers "no repositories to show" with exit 1: that is an empty list."""
    stderr = childio.decode(err)
    if rc != 0:
        if "no repositories" in stderr:
            return {}
        raise InstallerError(f"could not list helm repositories: {childio.last_line(stderr, rc)}")
    text = childio.decode(out)
    if not text.strip():  # helm says "no repositories" with exit 1; silence is not that
        raise InstallerError("helm repo list exited 0 but printed nothing")
    try:
        rows = json.loads(text)
    except (ValueError, RecursionError):
        raise InstallerError("helm repo list printed output that is not JSON") from None
    if not isinstance(rows, list):
        raise InstallerError("helm repo list printed JSON that is not a list")
    if not all(isinstance(row, dict) and isinstance(row.get("name"), str) for row in rows):
        raise InstallerError("helm repo list printed a row without a name")
    return {row["name"]: str(row.get("url", "")) for row in rows}


def repo_add_args(name: str, url: str, ca_file: str | None) -> list[str]:
    return ["repo", "add", name, url, *(["--ca-file", ca_file] if ca_file else [])]


def repo_update_args(name: str) -> list[str]:
    return ["repo", "update", name]


def release_list_args(release: str, namespace: str, conn: Connection) -> list[str]:
    """`helm list` of one release, in every state: its status, chart and revision."""
    return [
        "list",
        "-n",
        namespace,
        "--filter",
        f"^{re.escape(release)}$",
        *LIST_STATES,
        "--max",
        "0",
        "-o",
        "json",
        *conn.helm_flags(),
    ]


def history_args(release: str, namespace: str, conn: Connection, last: int = 20) -> list[str]:
    return ["history", release, "-n", namespace, "--max", str(last), *conn.helm_flags()]


def status_text_args(release: str, namespace: str, conn: Connection) -> list[str]:
    # Text, not `-o json`: the JSON form carries the release's values and manifest, secrets
    # included.
    return ["status", release, "-n", namespace, *conn.helm_flags()]


def search_args(chart: str) -> list[str]:
    """The newest version of `chart` in the local copy of its repository's index."""
    return ["search", "repo", chart, "-o", "json"]


def parse_search(rc: int, out: bytes, err: bytes) -> Any:
    """The rows `helm search repo -o json` printed. Raises InstallerError when it failed or
    printed no JSON list."""
    if rc != 0:
        raise InstallerError(
            f"helm search repo failed: {childio.last_line(childio.decode(err), rc)}"
        )
    try:
        rows = json.loads(childio.decode(out))
    except (ValueError, RecursionError):
        raise InstallerError("helm search repo printed output that is not JSON") from None
    if not isinstance(rows, list):
        raise InstallerError("helm search repo printed JSON that is not a list")
    return rows
