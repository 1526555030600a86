"""A loopback stand-in for the tracebloc backend: answers a scripted sequence of replies and
records every request it received (method, path, headers, form fields).

    with BackendServer(Reply(400), Reply(200)) as backend:
        ... TRACEBLOC_BACKEND_URL=backend.url ...
        assert [r.fields["username"] for r in backend.requests] == ["a", "a"]

After the script runs out, every request gets `default` (200 unless given). The server never
logs a request, and a recorded request's repr masks the password, so a failing assertion
does not print it (compare `record.fields["password"] == expected` directly if you must).

It also serves as an HTTP forward proxy: a request sent through it arrives with an absolute
URL as its path, and `Proxy-Authorization` in its headers. `tls=` (an `ssl.SSLContext` for
the server side) makes it speak HTTPS.
"""

from __future__ import annotations

import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl

from tests.fakes.loopback import Loopback


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b'{"token": "0123456789abcdef"}'
    delay: float = 0.0  # seconds to wait before answering (a slow backend)
    raw: bytes | None = None  # sent as-is instead of an HTTP answer, then the socket closes
    headers: tuple[tuple[str, str], ...] = ()
    trickle: float = (
        0.0  # seconds between the answer's bytes (each read is quick, the whole is not)
    )


GARBAGE = Reply(raw=b"\x00\x01 this is not HTTP\r\n\r\n")
HANG_UP = Reply(raw=b"")  # close the connection without a word


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    pairs: tuple[tuple[str, str], ...]  # the form fields, in order, duplicates kept

    @property
    def fields(self) -> dict[str, str]:
        return dict(self.pairs)

    def __repr__(self) -> str:
        shown = [(k, "********" if k == "password" else v) for k, v in self.pairs]
        return f"Request({self.method} {self.path}, fields={shown})"


class BackendServer:
    def __init__(
        self,
        *replies: Reply | int,
        default: Reply | int = 200,
        tls: ssl.SSLContext | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.script: list[Reply] = [_reply(r) for r in replies]
        self.default = _reply(default)
        self.tls = tls
        self.host = host
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server = Loopback(_handler(self), tls=tls, host=host, name="fake-backend")

    # --- lifecycle ---

    def start(self) -> BackendServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> BackendServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what tests use ---

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def url(self) -> str:
        return self._server.url() + "/"

    def then(self, *replies: Reply | int) -> None:
        with self._lock:
            self.script.extend(_reply(r) for r in replies)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Request]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.requests)

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            return self.script.pop(0) if self.script else self.default


def _reply(value: Reply | int) -> Reply:
    return value if isinstance(value, Reply) else Reply(status=value)


def _handler(server: BackendServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: a request line or body may carry a secret."""

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            pairs = tuple(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
            request = Request(self.command, self.path, dict(self.headers.items()), body, pairs)
            reply = server._next(request)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.raw is not None:
                self.wfile.write(reply.raw)
                self.wfile.flush()
                self.close_connection = True
                return
            if reply.trickle:
                answer = (
                    f"HTTP/1.1 {reply.status} X\r\nContent-Length: {len(reply.body)}\r\n"
                    "Connection: close\r\n\r\n"
                ).encode() + reply.body
                try:
                    for byte in answer:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(reply.trickle)
                except OSError:  # the client gave up
                    pass
                self.close_connection = True
                return
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(reply.body)
            self.close_connection = True

        do_POST = do_GET = do_PUT = _serve

    return Handler
