"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager.

The binaries come from tests/tools/build_kube.py (kube-apiserver 1.20 built from Debian's
source package; etcd from Debian's etcd-server). Everything listens on 127.0.0.1 only, on
free ports; certificates, the static admin token and the data live in one temporary
directory. Each process is stopped by its pid (SIGTERM, then SIGKILL), never by name.

There is no kubelet: nodes are API objects the tests create, so the apiserver runs without
the TaintNodesByCondition admission plugin (nothing would ever clear its not-ready taint).
The controller manager runs the namespace and garbagecollector controllers (a namespace can
be deleted, owned objects are collected), the volume binder with pv- and pvc-protection, and
the serviceaccount controller; no deployment controller, so Deployments never get pods.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

READY_TIMEOUT_S = 90.0
STOP_GRACE_S = 10.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(directory: Path) -> None:
    """A CA, a serving certificate for 127.0.0.1/localhost signed by it, and the
    service-account signing key pair (kube-apiserver 1.20 requires one)."""
    directory.mkdir(parents=True, exist_ok=True)
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-subj",
        "/CN=real-cluster-test-ca",
        cwd=directory,
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=kube-apiserver",
        cwd=directory,
    )
    (directory / "san.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n"
        "extendedKeyUsage=serverAuth\n"
    )
    openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "server.crt",
        cwd=directory,
    )
    openssl("genrsa", "-out", "sa.key", "2048", cwd=directory)
    openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=directory)


@dataclass
class Process:
    """One started daemon, its log file, and how to stop it (by pid)."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self) -> None:
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.popen.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.popen.wait(STOP_GRACE_S)
        self.log_file.close()

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def start_process(name: str, argv: list[str], root: Path) -> Process:
    log_path = root / f"{name}.log"
    log_file = log_path.open("ab")
    popen = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, cwd=root
    )
    return Process(name, popen, log_path, log_file)


@dataclass
class ControlPlane:
    """etcd plus one or more kube-apiservers on it, and a controller manager."""

    root: Path
    binaries: dict[str, Path]
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    processes: list[Process] = field(default_factory=list)
    servers: list[ApiServer] = field(default_factory=list)
    etcd_url: str = ""

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    # --- starting ---

    def start(self) -> ApiServer:
        """etcd, the first apiserver and the controller manager; returns the apiserver."""
        make_pki(self.pki)
        (self.pki / "tokens.csv").write_text(f'{self.token},admin,admin,"system:masters"\n')
        self.start_etcd()
        server = self.start_apiserver("kube-apiserver")
        self.start_controller_manager(server)
        return server

    def start_etcd(self) -> None:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        etcd = start_process(
            "etcd",
            [
                str(self.binaries["etcd"]),
                "--name",
                "test",
                "--data-dir",
                str(self.root / "etcd"),
                "--listen-client-urls",
                self.etcd_url,
                "--advertise-client-urls",
                self.etcd_url,
                "--listen-peer-urls",
                f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{peer}",
                "--initial-cluster",
                f"test=http://127.0.0.1:{peer}",
            ],
            self.root,
        )
        self.processes.append(etcd)
        self._wait(etcd, lambda: _http_ok(f"{self.etcd_url}/health"))

    def start_apiserver(self, name: str) -> ApiServer:
        port = free_port()
        server = ApiServer(name, f"https://127.0.0.1:{port}", self)
        process = start_process(
            name,
            [
                str(self.binaries["kube-apiserver"]),
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                "--insecure-port=0",
                "--advertise-address=127.0.0.1",
                "--endpoint-reconciler-type=none",
                f"--etcd-servers={self.etcd_url}",
                f"--cert-dir={self.root / name}",
                f"--tls-cert-file={self.pki / 'server.crt'}",
                f"--tls-private-key-file={self.pki / 'server.key'}",
                f"--client-ca-file={self.pki / 'ca.crt'}",
                f"--token-auth-file={self.pki / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--disable-admission-plugins=TaintNodesByCondition",
                f"--service-account-key-file={self.pki / 'sa.pub'}",
                f"--service-account-signing-key-file={self.pki / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc",
                "--service-cluster-ip-range=10.96.0.0/24",
                "--profiling=false",
            ],
            self.root,
        )
        self.processes.append(process)
        server.process = process
        self.servers.append(server)
        self._wait(process, server.ready)
        server.write_kubeconfig(self.root / f"{name}.kubeconfig")
        return server

    def start_controller_manager(self, server: ApiServer) -> None:
        process = start_process(
            "kube-controller-manager",
            [
                str(self.binaries["kube-controller-manager"]),
                f"--kubeconfig={server.kubeconfig}",
                # The volume controllers bind a claim to its volume and keep a bound volume
                # (pv-protection) or a claim a pod uses (pvc-protection) while in use, as a real
                # cluster does; the serviceaccount controller makes each namespace's default.
                "--controllers=namespace,garbagecollector,persistentvolume-binder,pv-protection,"
                "pvc-protection,serviceaccount",
                "--leader-elect=false",
                "--port=0",
                "--secure-port=0",
                "--use-service-account-credentials=false",
            ],
            self.root,
        )
        self.processes.append(process)
        time.sleep(0.5)
        if not process.alive():
            raise RuntimeError(f"kube-controller-manager exited:\n{process.log_tail()}")

    def _wait(self, process: Process, ready: object) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if not process.alive():
                raise RuntimeError(
                    f"{process.name} exited {process.popen.returncode}:\n{process.log_tail()}"
                )
            if ready():  # type: ignore[operator]
                return
            time.sleep(0.25)
        raise RuntimeError(
            f"{process.name} not ready in {READY_TIMEOUT_S:g}s:\n{process.log_tail()}"
        )

    # --- stopping ---

    def stop(self) -> None:
        """Every process, the last started first (the apiservers before their etcd)."""
        for process in reversed(self.processes):
            process.stop()


def _http_ok(url: str, context: ssl.SSLContext | None = None, token: str = "") -> bool:
    request = urllib.request.Request(
        url, headers={"Authorization": f"Bearer {token}"} if token else {}
    )
    try:
        with urllib.request.urlopen(request, timeout=2, context=context) as answer:
            return bool(answer.status == 200)
    except (OSError, urllib.error.URLError, ssl.SSLError):
        return False


@dataclass
class ApiServer:
    name: str
    url: str
    plane: ControlPlane
    process: Process | None = None

    @property
    def kubeconfig(self) -> Path:
        return self.plane.root / f"{self.name}.kubeconfig"

    def ready(self) -> bool:
        context = ssl.create_default_context(cafile=str(self.plane.pki / "ca.crt"))
        return _http_ok(f"{self.url}/readyz", context, self.plane.token)

    def kubeconfig_doc(
        self, *, cluster: str = "real", context: str = "real", namespace: str | None = None
    ) -> dict[str, object]:
        """A kubeconfig (JSON is YAML) for this server with the admin token."""
        ctx: dict[str, object] = {"cluster": cluster, "user": "admin"}
        if namespace:
            ctx["namespace"] = namespace
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": cluster,
                    "cluster": {
                        "server": self.url,
                        "certificate-authority": str(self.plane.pki / "ca.crt"),
                    },
                }
            ],
            "users": [{"name": "admin", "user": {"token": self.plane.token}}],
            "contexts": [{"name": context, "context": ctx}],
            "current-context": context,
        }

    def write_kubeconfig(self, path: Path) -> Path:
        path.write_text(json.dumps(self.kubeconfig_doc(), indent=2))
        path.chmod(0o600)
        return path

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()

    def kill(self) -> None:
        """Gone at once, as a crashed or powered-off server is (SIGKILL, then reaped)."""
        if self.process is not None and self.process.alive():
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.popen.wait(STOP_GRACE_S)
