"""The vendored upstream chart (tests/upstream/client) on the suite's kube-apiserver 1.20.

* `adapt`: a copy edited mechanically for 1.20 — kubeVersion, CronJob batch/v1beta1, PDB
  policy/v1beta1, and `protocol: TCP` on the MySQL Service port (1.20's server-side apply
  needs it: the port's list key is (port, protocol)). Each edit must apply exactly as often
  as expected, so a chart refresh that moves one fails here, loudly.
* `MetricsEndpoint`: the metrics API as the server's own availability check sees it — a
  loopback HTTPS endpoint behind an ExternalName Service, registered as the
  v1beta1.metrics.k8s.io APIService, which the aggregator then marks Available.
* `stand_in`: what the controllers the suite does not run would do for the release's
  Deployments — one ready pod each (owned by the Deployment, mounting its claims, so
  pvc-protection holds a claim while it is used and the garbage collector removes the pod
  with its Deployment) and the Deployment's status rolled out.
"""

from __future__ import annotations

import http.server
import json
import ssl
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from shutil import copytree
from typing import Any

# (file under templates/, text, replacement, times it must occur)
EDITS_1_20 = [
    ("../Chart.yaml", 'kubeVersion: ">=1.24.0-0"', 'kubeVersion: ">=1.20.0-0"', 1),
    (
        "auto-upgrade-cronjob.yaml",
        "apiVersion: batch/v1\nkind: CronJob",
        "apiVersion: batch/v1beta1\nkind: CronJob",
        1,
    ),
    (
        "image-refresh-cronjob.yaml",
        "apiVersion: batch/v1\nkind: CronJob",
        "apiVersion: batch/v1beta1\nkind: CronJob",
        1,
    ),
    ("jobs-manager-pdb.yaml", "apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n", 1),
    ("mysql-pdb.yaml", "apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n", 1),
    ("mysql-service.yaml", "  - port: 3306\n", "  - port: 3306\n    protocol: TCP\n", 1),
]


def adapt(source: Path, chart: Path) -> Path:
    """`source` copied to `chart` with EDITS_1_20 applied; AssertionError if one does not fit."""
    copytree(source, chart)
    for name, old, new, times in EDITS_1_20:
        path = chart / "templates" / name
        text = path.read_text(encoding="utf-8")
        found = text.count(old)
        assert found == times, (
            f"the 1.20 edit of {name} expects {old!r} {times}x, found "
            f"{found}x: the vendored chart changed; update EDITS_1_20"
        )
        path.write_text(text.replace(old, new), encoding="utf-8")
    return chart


# --- the metrics API ---------------------------------------------------------------------

METRICS_RESOURCES = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "metrics.k8s.io/v1beta1",
    "resources": [
        {
            "name": "nodes",
            "singularName": "",
            "namespaced": False,
            "kind": "NodeMetrics",
            "verbs": ["get", "list"],
        },
        {
            "name": "pods",
            "singularName": "",
            "namespaced": True,
            "kind": "PodMetrics",
            "verbs": ["get", "list"],
        },
    ],
}


class _Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = json.dumps(METRICS_RESOURCES).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class MetricsEndpoint:
    """Serves metrics.k8s.io discovery on 127.0.0.1 with the suite's serving certificate,
    and registers it; `close` unregisters it and stops the server."""

    def __init__(self, pki: Path, kubectl: Callable[..., subprocess.CompletedProcess[str]]) -> None:
        self.kubectl = kubectl
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(pki / "server.crt"), str(pki / "server.key"))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def register(self, timeout: float = 60) -> None:
        objects = [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "metrics-loopback", "namespace": "default"},
                "spec": {
                    "type": "ExternalName",
                    "externalName": "localhost",
                    "ports": [{"port": self.port, "protocol": "TCP"}],
                },
            },
            {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {"name": "v1beta1.metrics.k8s.io"},
                "spec": {
                    "group": "metrics.k8s.io",
                    "version": "v1beta1",
                    "groupPriorityMinimum": 100,
                    "versionPriority": 100,
                    "insecureSkipTLSVerify": True,
                    "service": {
                        "namespace": "default",
                        "name": "metrics-loopback",
                        "port": self.port,
                    },
                },
            },
        ]
        self.kubectl(
            "apply",
            "-f",
            "-",
            input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}),
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.kubectl("get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "json")
            conditions = json.loads(got.stdout).get("status", {}).get("conditions", [])
            if any(c["type"] == "Available" and c["status"] == "True" for c in conditions):
                return
            time.sleep(0.5)
        raise AssertionError("the metrics APIService never became Available")

    def close(self) -> None:
        self.kubectl("delete", "apiservice", "v1beta1.metrics.k8s.io", "--ignore-not-found")
        self.kubectl("delete", "service", "metrics-loopback", "-n", "default", "--ignore-not-found")
        self.server.shutdown()
        self.server.server_close()


# --- the controllers the suite does not run ----------------------------------------------


def stand_in(kubectl: Callable[..., subprocess.CompletedProcess[str]], namespace: str) -> list[str]:
    """One ready pod per Deployment that has none, then each Deployment behind its spec
    marked rolled out. Returns the Deployments marked."""
    listed = kubectl("-n", namespace, "get", "deployments,pods", "-o", "json", check=False)
    if listed.returncode != 0:
        return []  # the namespace is not there yet
    items = json.loads(listed.stdout)["items"]
    owners = {
        ref["uid"]
        for item in items
        if item["kind"] == "Pod"
        for ref in item["metadata"].get("ownerReferences", [])
    }
    marked = []
    for item in (i for i in items if i["kind"] == "Deployment"):
        meta, spec = item["metadata"], item["spec"]
        if meta["uid"] not in owners:
            _ready_pod(kubectl, namespace, item)
        status = item.get("status", {})
        replicas = spec.get("replicas", 1)
        if (
            status.get("observedGeneration") == meta["generation"]
            and status.get("availableReplicas") == replicas
        ):
            continue
        patch = {
            "status": {
                "observedGeneration": meta["generation"],
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "availableReplicas": replicas,
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                    {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
                ],
            }
        }
        kubectl(
            "-n",
            namespace,
            "patch",
            "deployment",
            meta["name"],
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps(patch),
        )
        marked.append(meta["name"])
    return marked


def _ready_pod(
    kubectl: Callable[..., subprocess.CompletedProcess[str]],
    namespace: str,
    deployment: dict[str, Any],
) -> None:
    meta, template = deployment["metadata"], deployment["spec"]["template"]
    claims = [v for v in template["spec"].get("volumes", []) if "persistentVolumeClaim" in v]
    container = template["spec"]["containers"][0]
    name = f"{meta['name']}-standin"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": template["metadata"].get("labels", {}),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": meta["name"],
                    "uid": meta["uid"],
                }
            ],
        },
        # Never scheduled (no node name): without a kubelet, a pod bound to a node could
        # never finish being deleted.
        "spec": {
            "serviceAccountName": "default",
            "automountServiceAccountToken": False,
            "volumes": claims,
            "containers": [
                {
                    "name": container["name"],
                    "image": container["image"],
                    "volumeMounts": [
                        {"name": v["name"], "mountPath": f"/v/{v['name']}"} for v in claims
                    ],
                }
            ],
        },
    }
    deadline = time.monotonic() + 30
    while True:
        made = kubectl("create", "-f", "-", input=json.dumps(pod), check=False)
        if made.returncode == 0 or "AlreadyExists" in made.stderr:
            break
        assert time.monotonic() < deadline, made.stderr
        # The serviceaccount controller makes `default` after the namespace, late when a
        # test just restarted it: the stand-in makes it as that controller would.
        kubectl("-n", namespace, "create", "serviceaccount", "default", check=False)
        time.sleep(0.5)
    status = {
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "ContainersReady", "status": "True"},
            ],
            "containerStatuses": [
                {
                    "name": container["name"],
                    "ready": True,
                    "restartCount": 0,
                    "image": container["image"],
                    "imageID": "",
                    "started": True,
                    "state": {"running": {}},
                }
            ],
        }
    }
    kubectl(
        "-n",
        namespace,
        "patch",
        "pod",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(status),
    )
