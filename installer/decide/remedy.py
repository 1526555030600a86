"""Commands printed for a person to paste. Pure.

A printed command carries the cluster and namespace of the run that printed it: pasting it
must act on the cluster the installer was pointed at, never on whatever the current kube
context happens to be.
"""

from __future__ import annotations

from collections.abc import Sequence

from installer.decide import shellquote
from installer.decide.model import Connection

PROGRAM = "tracebloc-installer"


def _join(argv: Sequence[str]) -> str:
    return shellquote.join(argv)


def helm(args: Sequence[str], conn: Connection, namespace: str | None = None) -> str:
    scope = ["-n", namespace] if namespace else []
    return _join([conn.helm_typed, *args, *scope, *conn.helm_flags()])


def kubectl(args: Sequence[str], conn: Connection, namespace: str | None = None) -> str:
    scope = ["-n", namespace] if namespace else []
    return _join([conn.kubectl_typed, *args, *scope, *conn.kubectl_flags()])


def installer(conn: Connection, namespace: str | None = None, *args: str) -> str:
    """Running the installer again, against the same cluster and namespace."""
    flags = ["--kubeconfig", conn.kubeconfig] if conn.kubeconfig else []
    flags += ["--context", conn.context] if conn.context else []
    flags += ["-n", namespace] if namespace else []
    return _join([PROGRAM, *args, *flags])


def command(argv: Sequence[str]) -> str:
    """Any argv as one line to paste (the engine's own steps, shown before they run)."""
    return _join(argv)
