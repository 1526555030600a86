"""edges/ports.in_use against real sockets: a listener, a bound but idle socket, a free port."""

from __future__ import annotations

import socket

from installer.edges.ports import in_use


def test_a_listening_bound_and_free_port() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        assert in_use("127.0.0.1", listener.getsockname()[1]) is True
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        assert in_use("127.0.0.1", port) is True
    assert in_use("127.0.0.1", port) is False
