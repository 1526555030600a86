"""A loopback network for the network preflight's tests: HTTPS sites with throwaway CAs, a
CONNECT proxy (optionally asking for credentials, optionally re-signing TLS with its own CA:
a TLS-inspecting proxy), a blackholed port, and the guard that keeps the CLI under test on
loopback (tests/fakes/netguard).

Nothing here connects anywhere but 127.0.0.1: the proxy refuses (502) any other target.
"""

from __future__ import annotations

import base64
import os
import socket
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path

import trustme

from tests.fakes.backend_server import BackendServer, Reply
from tests.fakes.mirror import pipe as _pipe  # one tunnel for every fake proxy

GUARD = Path(__file__).resolve().parent / "netguard"


@dataclass
class Authority:
    """A CA with its PEM on disk (for TRACEBLOC_CA_BUNDLE or SSL_CERT_FILE)."""

    org: str
    root: Path
    ca: trustme.CA = field(init=False)
    pem: Path = field(init=False)

    def __post_init__(self) -> None:
        self.ca = trustme.CA(organization_name=self.org)
        self.pem = self.root / f"{self.org.replace(' ', '-').lower()}.pem"
        self.ca.cert_pem.write_to_path(str(self.pem))

    def server_context(self, *hosts: str) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(*(hosts or ("127.0.0.1", "localhost"))).configure_cert(context)
        return context


def https_site(
    authority: Authority, *replies: Reply | int, default: Reply | int = 200
) -> BackendServer:
    return BackendServer(*replies, default=default, tls=authority.server_context())


@dataclass(frozen=True)
class Tunnel:
    target: str
    authorization: str | None  # the Proxy-Authorization header received, as sent


class ConnectProxy:
    """An HTTP CONNECT proxy on 127.0.0.1. `credentials`: (user, password) it requires
    (407 otherwise). `resign`: answer every tunnel itself with TLS re-signed by this CA
    and an HTTP 200, as a TLS-inspecting proxy does."""

    def __init__(
        self, credentials: tuple[str, str] | None = None, resign: Authority | None = None
    ) -> None:
        self.credentials = credentials
        self.resign = resign
        self.tunnels: list[Tunnel] = []
        self.requests: list[bytes] = []  # what arrived inside a re-signed tunnel
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = int(self._sock.getsockname()[1])
        self._stop = threading.Event()

    def url(self, user: str | None = None, password: str | None = None) -> str:
        """As an operator writes HTTPS_PROXY: the engine takes user and password literally."""
        auth = f"{user}:{password or ''}@" if user else ""
        return f"http://{auth}127.0.0.1:{self.port}"

    def __enter__(self) -> ConnectProxy:
        self._sock.listen(16)
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            method, target = (lines[0].split(" ") + ["", ""])[:2]
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (line.partition(":") for line in lines[1:])
            }
            authorization = headers.get("proxy-authorization")
            self.tunnels.append(Tunnel(target, authorization))
            if self.credentials is not None:
                pair = ":".join(self.credentials).encode("utf-8")
                if authorization != "Basic " + base64.b64encode(pair).decode():
                    conn.sendall(
                        b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                        b'Proxy-Authenticate: Basic realm="test"\r\n'
                        b"Content-Length: 0\r\n\r\n"
                    )
                    return
            host, _, port = target.rpartition(":")
            host = host.strip("[]")
            if method != "CONNECT" or host not in ("127.0.0.1", "localhost", "::1"):
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            if self.resign is not None:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                with self.resign.server_context(host).wrap_socket(conn, server_side=True) as tls:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        chunk = tls.recv(4096)
                        if not chunk:
                            return
                        request += chunk
                    self.requests.append(request)
                    tls.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                    )
                return
            try:
                upstream = socket.create_connection((host, int(port)), timeout=5)
            except OSError:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            with upstream:
                _pipe(conn, upstream)
        except (OSError, ssl.SSLError):
            return
        finally:
            conn.close()


class Blackhole:
    """A loopback port that listens and never accepts or answers: a dropping firewall."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self._sock.getsockname()[1]}/"

    def __enter__(self) -> Blackhole:
        return self

    def __exit__(self, *exc: object) -> None:
        self._sock.close()


def refused_url() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"https://127.0.0.1:{port}/"


def criticals(*entries: tuple[str, str] | tuple[str, str, str]) -> str:
    return "\n".join("|".join(entry) for entry in entries) + "\n"


def guarded(log: Path, pythonpath: str) -> dict[str, str]:
    """The variables that load the loopback guard into the CLI under test; its loopback
    servers stand for remote hosts, so a proxy set is used for them too."""
    return {
        "PYTHONPATH": os.pathsep.join([str(GUARD), pythonpath]),
        "TB_NETGUARD_LOG": str(log),
        "TB_TEST_PROXY_LOOPBACK": "1",
    }
