"""A loopback HTTPS tools mirror (real TLS, a trustme CA), an HTTP CONNECT proxy, and the
archives and test manifest the tool-download tests serve.

    tls = LoopbackTls(tmp_path)
    with MirrorServer(tls) as mirror:
        mirror.files["helm-v4.2.3-linux-amd64.tar.gz"] = data
        mirror.faults["helm-v4.2.3-linux-amd64.tar.gz"] = [500]       # then the file
        ... TRACEBLOC_TOOLS_MIRROR=mirror.url, TRACEBLOC_CA_BUNDLE=tls.ca_path ...

A fault is an HTTP status, STALL (headers, a few bytes, then silence) or TRUNCATE (a
Content-Length the body never reaches). Each is used once, in order, then the file is served.
"""

from __future__ import annotations

import hashlib
import io
import json
import platform as _platform
import select
import socket
import ssl
import sys
import tarfile
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import trustme

from installer.edges.machine import arch_name
from tests.fakes.loopback import Loopback

STALL = "stall"
TRUNCATE = "truncate"
PLATFORMS = {
    "linux-x86_64": ("linux", "amd64"),
    "linux-arm64": ("linux", "arm64"),
    "darwin-x86_64": ("darwin", "amd64"),
    "darwin-arm64": ("darwin", "arm64"),
    "windows-x86_64": ("windows", "amd64"),
}
VERSIONS = {"kubectl": "v1.37.1", "helm": "v4.2.3", "k3d": "v5.9.0"}
OS = "windows" if sys.platform == "win32" else "darwin" if sys.platform == "darwin" else "linux"
PLATFORM = f"{OS}-{arch_name(_platform.machine())}"  # the engine's key for this machine


class LoopbackTls:
    """A throwaway CA (its PEM at `ca_path`) and a server certificate for 127.0.0.1."""

    def __init__(self, root: Path) -> None:
        self.ca = trustme.CA()
        self.cert = self.ca.issue_cert("127.0.0.1", "localhost")
        self.ca_path = root / "test-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_path))

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.cert.configure_cert(context)
        return context


class MirrorServer:
    def __init__(self, tls: LoopbackTls | None) -> None:
        self.tls = tls
        self.files: dict[str, bytes] = {}  # path below the root → content
        self.faults: dict[str, list[int | str]] = {}
        self.requests: list[str] = []  # paths asked for, in order
        self._lock = threading.Lock()
        context = tls.server_context() if tls is not None else None
        self._server = Loopback(_handler(self), tls=context, name="fake-mirror")

    def __enter__(self) -> MirrorServer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url() + "/"

    def next_fault(self, path: str) -> int | str | None:
        with self._lock:
            self.requests.append(path)
            queue = self.faults.get(path) or []
            return queue.pop(0) if queue else None


def _handler(mirror: MirrorServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silent."""

        def do_GET(self) -> None:
            path = unquote(urlsplit(self.path).path).lstrip("/")
            fault = mirror.next_fault(path)
            body = mirror.files.get(path)
            if isinstance(fault, int):
                self._answer(fault, b"fault\n")
            elif body is None:
                self._answer(404, b"not found\n")
            elif fault == STALL:
                self._head(200, len(body))
                self.wfile.write(body[:10])
                self.wfile.flush()
                time.sleep(30)
            elif fault == TRUNCATE:
                self._head(200, len(body))
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
            else:
                self._head(200, len(body))
                self.wfile.write(body)
            self.close_connection = True

        def _head(self, status: int, length: int) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(length))
            self.send_header("Connection", "close")
            self.end_headers()

        def _answer(self, status: int, body: bytes) -> None:
            self._head(status, len(body))
            self.wfile.write(body)

    return Handler


class ConnectProxy:
    """A plain-HTTP forward proxy that tunnels CONNECT; records each CONNECT target."""

    def __init__(self) -> None:
        self.tunnels: list[str] = []
        self._server: Loopback | None = None

    def __enter__(self) -> ConnectProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Silent."""

            def do_CONNECT(self) -> None:
                proxy.tunnels.append(self.path)
                host, _, port = self.path.rpartition(":")
                upstream = socket.create_connection((host, int(port)), timeout=10)
                self.send_response(200, "Connection established")
                self.end_headers()
                pipe(self.connection, upstream)
                self.close_connection = True

        self._server = Loopback(Handler, name="fake-proxy").start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return self._server.url()


def pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways between `a` and `b` until either closes (a CONNECT tunnel)."""
    sockets = [a, b]
    while True:
        readable, _, _ = select.select(sockets, [], [], 10)
        if not readable:
            return
        for sock in readable:
            data = sock.recv(65536)
            if not data:
                return
            (b if sock is a else a).sendall(data)


# --- archives and the manifest -----------------------------------------------------------------


def tar_gz(*members: tuple[str, bytes | None, str]) -> bytes:
    """(name, data, kind) with kind "file", "dir" or "symlink" (data is then the target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.mtime = 1_700_000_000
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, (data or b"").decode()
                tar.addfile(info)
            else:
                info.size, info.mode = len(data or b""), 0o755
                tar.addfile(info, io.BytesIO(data or b""))
    return buffer.getvalue()


def zip_bytes(*members: tuple[str, bytes | None, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, data, kind in members:
            info = zipfile.ZipInfo(name, (2023, 11, 14, 0, 0, 0))
            if kind == "symlink":
                info.external_attr = 0o120777 << 16
            elif kind == "dir":
                info.external_attr = (0o40755 << 16) | 0x10
            else:
                info.external_attr = 0o100755 << 16
            bundle.writestr(info, data or b"")
    return buffer.getvalue()


def official_members(
    tool: str, platform: str, binary: bytes
) -> list[tuple[str, bytes | None, str]]:
    """What the official archive holds (helm); the bare binary's own name otherwise."""
    os_, arch = PLATFORMS[platform]
    folder = f"{os_}-{arch}"
    exe = "helm.exe" if os_ == "windows" else "helm"
    return [
        (f"{folder}/", None, "dir"),
        (f"{folder}/{exe}", binary, "file"),
        (f"{folder}/LICENSE", b"Apache License 2.0\n", "file"),
        (f"{folder}/README.md", b"# Helm\n", "file"),
    ]


def artifact(tool: str, platform: str) -> dict[str, Any]:
    """The manifest entry, shaped as build/pin_tools.py writes it, checksum to be set."""
    os_, arch = PLATFORMS[platform]
    version = VERSIONS[tool]
    if tool == "helm":
        ext = "zip" if os_ == "windows" else "tar.gz"
        file = f"helm-{version}-{os_}-{arch}.{ext}"
        exe = "helm.exe" if os_ == "windows" else "helm"
        return {
            "file": file,
            "url": f"https://get.helm.sh/{file}",
            "sha256": "PENDING",
            "checksum_source": "test",
            "archive": ext,
            "member": f"{os_}-{arch}/{exe}",
            "others": [f"{os_}-{arch}/LICENSE", f"{os_}-{arch}/README.md"],
        }
    if tool == "kubectl":
        file = "kubectl.exe" if os_ == "windows" else "kubectl"
        url = f"https://dl.k8s.io/release/{version}/bin/{os_}/{arch}/{file}"
    else:
        file = f"k3d-{os_}-{arch}" + (".exe" if os_ == "windows" else "")
        url = f"https://github.com/k3d-io/k3d/releases/download/{version}/{file}"
    return {
        "file": file,
        "url": url,
        "sha256": "PENDING",
        "checksum_source": "test",
        "archive": "none",
    }


def mirror_path(entry: dict[str, Any]) -> str:
    return urlsplit(entry["url"]).path.lstrip("/")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_manifest(path: Path, entries: dict[tuple[str, str], dict[str, Any]]) -> Path:
    """A format-1 manifest holding `entries` ((tool, platform) → entry)."""
    tools: dict[str, Any] = {t: {"version": v, "platforms": {}} for t, v in VERSIONS.items()}
    for (tool, platform), entry in entries.items():
        tools[tool]["platforms"][platform] = entry
    path.write_text(json.dumps({"format": 1, "tools": tools}, indent=1), encoding="utf-8")
    return path


def nothing_to_download(root: Path, platform: str) -> dict[str, str]:
    """Environment in which no tool can be downloaded, whatever this build pins: a test
    manifest whose checksums for `platform` are all PENDING, and an empty mirror directory."""
    empty = root / "empty-mirror"
    empty.mkdir(exist_ok=True)
    manifest = write_manifest(
        root / "pending-manifest.json", {(t, platform): artifact(t, platform) for t in VERSIONS}
    )
    return {"TB_TEST_TOOLS_MANIFEST": str(manifest), "TRACEBLOC_TOOLS_MIRROR": str(empty)}
