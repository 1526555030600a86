"""Which build this is: the version, and the commit and date build/freeze.py stamps into the
frozen binary (the generated module `installer._stamp`; absent when run from source)."""

from __future__ import annotations

import importlib
import platform
import sys

from installer import __version__

STAMP_MODULE = "installer._stamp"
UNKNOWN = "unknown"


def build_info() -> dict[str, str]:
    try:
        stamp = importlib.import_module(STAMP_MODULE)
    except ImportError:
        commit, date = UNKNOWN, UNKNOWN
    else:
        commit = str(getattr(stamp, "COMMIT", UNKNOWN) or UNKNOWN)
        date = str(getattr(stamp, "DATE", UNKNOWN) or UNKNOWN)
    return {
        "version": __version__,
        "commit": commit,
        "date": date,
        "python": platform.python_version(),
        "platform": sys.platform,
        "frozen": "yes" if getattr(sys, "frozen", False) else "no",
    }


def version_line(info: dict[str, str]) -> str:
    """`tracebloc-installer 1.2.0 (commit 54dd3d00f, built 2026-11-29)`, as rustup and
    cargo print theirs; from source: `(commit unknown, built unknown: run from source)`."""
    commit = info["commit"][:12]
    source = "" if info["frozen"] == "yes" or info["commit"] != UNKNOWN else ": run from source"
    return f"tracebloc-installer {info['version']} (commit {commit}, built {info['date']}{source})"
