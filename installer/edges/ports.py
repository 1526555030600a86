"""Is a local TCP port taken (reads only): before the local cluster is created or started,
its API server's port must be free, on every OS."""

from __future__ import annotations

import errno
import socket


def in_use(host: str, port: int, *, timeout: float = 1.0) -> bool | None:
    """True when something accepts connections on `host`:`port`, or the port cannot be bound
    because another socket holds it; False when it is free; None when it cannot be told."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        pass
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if hasattr(socket, "SO_REUSEPORT"):  # POSIX: two probes at once do not see each other
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind((host, port))
    except OSError as exc:
        return (
            True if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1)) else None
        )
    finally:
        probe.close()
    return False
