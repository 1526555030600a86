"""Loaded by the CLI under test when this directory is first on PYTHONPATH (tests/fakes/netlab.py).

It keeps the process on this machine: a name that is not loopback is never looked up (a
name under .invalid fails as DNS would, the others fail and are written to
TB_NETGUARD_LOG), and a connection to an address that is not loopback is refused and
written there too. A test asserts the log stayed empty: only loopback was contacted.
"""

from __future__ import annotations

import ipaddress
import os
import socket

_LOG = os.environ.get("TB_NETGUARD_LOG", "")
_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _note(what: str) -> None:
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as handle:
            handle.write(what + "\n")


def _loopback(host: object) -> bool:
    text = str(host).strip("[]").lower().rstrip(".")
    if text == "localhost":
        return True
    try:
        return ipaddress.ip_address(text.split("%")[0]).is_loopback
    except ValueError:
        return False


def getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
    if host is not None and not _loopback(host if isinstance(host, str) else host.decode()):
        name = host if isinstance(host, str) else host.decode()
        if not name.lower().rstrip(".").endswith(".invalid"):
            _note(f"lookup {name}")
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return _real_getaddrinfo(host, *args, **kwargs)


def _check(address: object) -> None:
    if isinstance(address, tuple) and address and not _loopback(address[0]):
        _note(f"connect {address[0]}")
        raise ConnectionRefusedError(111, "refused by tests/fakes/netguard")


def connect(self, address):  # type: ignore[no-untyped-def]
    _check(address)
    return _real_connect(self, address)


def connect_ex(self, address):  # type: ignore[no-untyped-def]
    _check(address)
    return _real_connect_ex(self, address)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect  # type: ignore[method-assign]
socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
