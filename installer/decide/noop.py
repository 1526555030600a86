"""Would this run change anything? Pure: what one read showed in, a verdict out.

Nothing to change only on positive evidence of all of it: the release `deployed`, its
stored values equal to what this run would write (and the file holds those bytes), the same
chart version, and every workload seen ready. Anything not seen is a change. In stages, the
cheap evidence first: `release_settled`, `values_settled`, then `decide`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

NOTHING_TO_CHANGE = "nothing-to-change"


@dataclass(frozen=True)
class Check:
    """`nothing` True: leave everything as it is. Otherwise `why` says what would change."""

    nothing: bool
    why: tuple[str, ...] = ()
    release: str = ""
    namespace: str = ""
    chart: str = ""  # the installed chart, "client-1.4.2"
    ready: tuple[str, ...] = ()  # "Deployment tracebloc-jobs-manager 1/1", as seen

    @property
    def line(self) -> str:
        """The one line a healthy re-run prints."""
        seen = ", ".join(self.ready) if self.ready else "no workloads seen"
        return (
            f"already installed and connected — nothing to change: release {self.release} "
            f"in namespace {self.namespace}, chart {self.chart}, ready: {seen}"
        )


def change(*why: str) -> Check:
    return Check(False, tuple(why))


def installed_version(chart: str | None) -> str | None:
    """`client-1.4.2` → `1.4.2`; None when the row names no SemVer version."""
    if not chart:
        return None
    match = re.fullmatch(r".+?-v?(?P<version>\d+\.\d+\.\d+(?:[-+].*)?)", chart)
    return match["version"] if match else None


def same_version(installed: str | None, wanted: str | None) -> bool:
    if not installed or not wanted:
        return False
    return installed.removeprefix("v") == wanted.removeprefix("v")


def as_stored(document: Mapping[str, Any]) -> Any:
    """The document as helm hands it back (`helm get values -o json`): JSON types only."""
    return json.loads(json.dumps(document))


def differing_keys(stored: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    """Dotted paths whose values differ, or that one side has and the other lacks. Names
    only: values hold passwords and are never put in a message."""
    out: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                walk(
                    a.get(key, _MISSING),
                    b.get(key, _MISSING),
                    f"{path}.{key}" if path else str(key),
                )
        elif a != b or type(a) is not type(b):
            out.append(path or "(the whole document)")

    walk(as_stored(stored), as_stored(wanted), "")
    return out


_MISSING = object()


def release_settled(
    *, force: bool, action: str, recovery: str | None, status: str | None
) -> Check | None:
    """From the guard's verdict alone: a change, or None when the values come next."""
    if force:
        return change(
            "a re-install was asked for (--force, TRACEBLOC_FORCE_REINSTALL or "
            "TB_FORCE_REINSTALL): re-applying regardless"
        )
    if action != "upgrade":
        return change(f"the verdict is {action}")
    if recovery is not None or status != "deployed":
        return change(f"the release is {status or 'in no known state'}, not deployed")
    return None


def values_settled(
    stored: Mapping[str, Any] | None,
    wanted: Mapping[str, Any],
    *,
    file_bytes: bytes | None,
    data: bytes | None,
) -> Check | None:
    """A change, or None when only the chart version and the readiness remain to be seen.
    `data` is what the run would write to the values file (None: the caller's
    TRACEBLOC_VALUES_FILE, used as it is); `file_bytes` what that file holds now."""
    if stored is None:
        return change("the release's stored values were not read")
    keys = differing_keys(stored, wanted)
    if keys:
        shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
        return change(f"the values this run would write differ from the release's ({shown})")
    if data is not None and file_bytes != data:
        return change("the values file does not hold what this run would write")
    return None


def decide(
    first: Check | None,
    *,
    release: str,
    namespace: str,
    installed_chart: str | None,
    wanted_version: str | None,
    version_reason: str,
    ready: bool | None,
    workloads: tuple[str, ...],
    readiness_reason: str,
    problems: tuple[str, ...],
) -> Check:
    """`wanted_version` None: the version this run would install is not known
    (`version_reason` says why), and that is never taken for "the same". `ready` None: the
    readiness read failed (`readiness_reason`). `problems`: readiness.health_problems, each
    naming a workload that is missing, scaled to zero or not ready."""
    if first is not None:
        return first
    have = installed_version(installed_chart)
    if wanted_version is None:
        return change(f"the chart version this run would install is not known ({version_reason})")
    if not same_version(have, wanted_version):
        return change(
            f"chart {installed_chart or 'unknown'} is installed; this run installs "
            f"version {wanted_version}"
        )
    if ready is None:
        return change(f"the workloads' readiness could not be read ({readiness_reason})")
    if problems:
        return change(f"the client is not healthy ({'; '.join(problems)}): re-applying and waiting")
    if not ready:
        return change("the workloads are not all ready: re-applying and waiting")
    return Check(True, (), release, namespace, installed_chart or "", workloads)


def newest_version(rows: Any, chart: str) -> str | None:
    """From `helm search repo <chart> -o json`: the version of the row named `chart` (helm
    lists the newest only, unless --versions is given). None when no row names it."""
    if not isinstance(rows, list):
        return None
    for row in rows:
        if (
            isinstance(row, dict)
            and row.get("name") == chart
            and isinstance(row.get("version"), str)
        ):
            version = row["version"].strip()
            return version or None
    return None
