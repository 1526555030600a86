"""What `uninstall` may delete: the data of the release it removes, on the cluster it names.
Pure: the data directory's entries, helm's releases and the kube target are passed in.

`--delete-data` deletes `<dir>/<release>/`, and the shared files (values file, log, record)
only when nothing else is in the directory. Lock files are never deleted (a held lock must
stay the same file); links are never followed, only kept and named.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Files an install writes beside the releases' directories (edges/datadir.py).
SHARED = (
    "values.yaml",
    "values.yaml.bak",
    "install.log",
    "install.log.*",
    "tracebloc-diagnose-*",
    ".k3d",
    ".tracebloc-trash-*",
    "install.json",  # the install record (decide/record.py)
    ".tracebloc-signin",  # the sign-in's own directory (edges/tbcli.SIGNIN_DIR)
)
LOCKS = ("install.lock", "locks")


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "dir", "file", "link" (a symbolic link or junction: never followed), "other"


@dataclass(frozen=True)
class DataPlan:
    delete: tuple[str, ...]  # names inside the data directory
    keep: tuple[tuple[str, str], ...]  # (name, why it stays)


def _shared(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SHARED)


def data_to_delete(entries: Iterable[Entry], release: str) -> DataPlan:
    delete: list[str] = []
    keep: list[tuple[str, str]] = []
    shared: list[Entry] = []
    others: list[Entry] = []
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.name in LOCKS:
            keep.append((entry.name, "a lock file: another run may hold it"))
        elif entry.name == release:
            if entry.kind == "dir":
                delete.append(entry.name)
            else:
                keep.append((entry.name, f"a {entry.kind}, not a directory: never followed"))
        elif _shared(entry.name) and entry.kind in ("file", "dir"):
            shared.append(entry)
        else:
            others.append(entry)
    if others:
        why = f"the directory also holds {', '.join(e.name for e in others[:5])}" + (
            f" and {len(others) - 5} more" if len(others) > 5 else ""
        )
        keep += [(e.name, "not the release's: " + why) for e in shared]
        keep += [(e.name, "not the release's") for e in others]
    else:
        delete += [e.name for e in shared]
    return DataPlan(tuple(delete), tuple(keep))


def size_text(size: int | None) -> str:
    if size is None:
        return "size unknown"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def client_releases(rows: Sequence[tuple[str, str]]) -> str:
    """`(name, namespace)` rows of the tracebloc client, in words."""
    if not rows:
        return "no tracebloc client release was seen in any namespace"
    seen = ", ".join(f"{name} in namespace {namespace}" for name, namespace in rows)
    return f"client releases seen: {seen}"
