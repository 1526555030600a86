"""One way to serve HTTP(S) on loopback in a test: start in a thread, stop, and tell the port.

Every fake server (the backend, the tool mirror, the CONNECT proxy) runs through this, so a
fix to start-up or shut-down (daemon threads, the poll interval, TLS wrapping) is made once.
"""

from __future__ import annotations

import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a reply still sleeping must not hold up stop()

    def finish_request(self, request: object, client_address: object) -> None:
        """The TLS handshake in the connection's own thread, not in the accepting one: a
        client slow to finish its handshake holds up only itself, never the next client."""
        if isinstance(request, ssl.SSLSocket):
            try:
                request.do_handshake()
            except OSError:  # the client refused the certificate, or went away
                return
        super().finish_request(request, client_address)  # type: ignore[arg-type]


class Loopback:
    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        *,
        tls: ssl.SSLContext | None = None,
        host: str = "127.0.0.1",
        name: str = "fake-server",
    ) -> None:
        self.tls, self.host = tls, host
        self._handler, self._name = handler, name
        self._server: ThreadingHTTPServer | None = None
        self._port: int | None = None  # kept after stop(): a URL still names where it was

    def start(self) -> Loopback:
        server = _Server((self.host, 0), self._handler)
        if self.tls is not None:
            server.socket = self.tls.wrap_socket(
                server.socket, server_side=True, do_handshake_on_connect=False
            )
        self._server = server
        self._port = int(server.server_address[1])
        threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self._name,
            daemon=True,
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._port is not None, "start() the server first"
        return self._port

    def url(self, scheme: str | None = None) -> str:
        scheme = scheme or ("https" if self.tls is not None else "http")
        return f"{scheme}://{self.host}:{self.port}"
