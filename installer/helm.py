"""helm: one read of the installed release's user values, and the install argv.

The argv is built here and nowhere else, so `plan` shows exactly what `install` runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from installer import proc
from installer.errors import InstallerError
from installer.model import Connection, ReleaseRead, ReleaseState
from installer.redact import Redactor


def get_values_args(release: str, namespace: str, conn: Connection) -> list[str]:
    return ["get", "values", release, "-n", namespace, "-o", "json", *conn.helm_flags()]


def read_release(
    tool: proc.Tool | None,
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

    if tool is None:
        return unreadable("helm was not found")
    try:
        result = proc.run(tool, get_values_args(release, namespace, conn), timeout=timeout,
                          env=env, redactor=redactor)  # fmt: skip
    except InstallerError as exc:
        return unreadable(exc.message)
    return parse_release(release, namespace, result.rc, result.out, result.err)


def parse_release(release: str, namespace: str, rc: int, out: bytes, err: bytes) -> ReleaseRead:
    """Absent only on helm's own word for it; every other failure is unreadable."""
    stderr = proc.decode(err)
    if rc != 0:
        if _says_absent(stderr, namespace):
            return ReleaseRead(release, namespace, ReleaseState.ABSENT)
        return ReleaseRead(release, namespace, ReleaseState.UNREADABLE,
                           reason=proc.last_line(stderr, rc))  # fmt: skip
    try:
        values = json.loads(proc.decode(out))
    except (ValueError, RecursionError):
        return ReleaseRead(release, namespace, ReleaseState.UNREADABLE,
                           reason="helm printed output that is not JSON")  # fmt: skip
    if values is None:  # helm prints `null` for a release installed with no user values
        values = {}
    if not isinstance(values, dict):
        return ReleaseRead(release, namespace, ReleaseState.UNREADABLE,
                           reason="helm printed JSON that is not a map of values")  # fmt: skip
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
        "upgrade", "--install", release, chart,
        "--namespace", namespace, "--create-namespace", "--cleanup-on-fail",
        "--values", values_path, *conn.helm_flags(),
    ]  # fmt: skip
