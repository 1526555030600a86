"""The engine as a process against a real Kubernetes API server, with the real kubectl and helm.

A session starts etcd, kube-apiserver 1.20 and a controller manager on loopback
(tests/real_cluster.py; binaries from tests/tools/build_kube.py) and creates nodes through
the API, their allocatable set through the status subresource. kubectl 1.33 and helm 4 are
the real ones (tests/tools/fetch_helm.py). The chart is tests/chart renamed `client`, so the
engine treats its releases as tracebloc clients, plus one Deployment: `install` exits 0 only
once the release's workloads are ready. With no kubelet and no deployment controller nothing
makes it ready, so each install runs beside a stand-in controller (`Real.install`) that writes
the Deployment's status through the status subresource, as the controller would once its
pods are available. The backend that checks credentials is the loopback fake.

Every test leaves no release behind (the guard reads every namespace, so one test's client
would be another test's "other client"), and installs into a namespace of its own.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import real_chart
from tests.fakes.backend_server import BackendServer, Reply
from tests.fakes.cluster import HELM_NOT_FOUND, REPO, FakeCluster, node, release_row
from tests.real_cluster import ApiServer, ControlPlane, free_port

# One pytest-xdist worker runs them all: the session's etcd and API server start once.
pytestmark = [pytest.mark.real_cluster, pytest.mark.xdist_group("real_cluster")]

EVERY_STATE = (
    "--deployed",
    "--failed",
    "--pending",
    "--superseded",
    "--uninstalled",
    "--uninstalling",
)
CLIENT_ID = "client-real-7f3a"
PASSWORD = "R3al-P4ss:#w0rd"
CHART_SOURCE = REPO / "tests" / "chart"
CACHED_BIN = REPO / ".cache" / "bin"
INSTALL_TIMEOUT_S = 120

# The nodes every test sees. Quantities in several units; the cordoned node is the largest,
# so a size taken from it would show. The anchor is `mid`: (6 cores, 25G) beats (5.5, 48Gi)
# because CPUs compare first. 25G = 25e9 bytes; minus 3 GiB for the platform is 20.28 GiB.
NODES = [
    ("laptop", {"cpu": "4", "memory": "16Gi", "pods": "110"}, False),
    ("mid", {"cpu": "6", "memory": "25G", "pods": "110"}, False),
    ("small", {"cpu": "5500m", "memory": "49152Mi", "pods": "110"}, False),
    ("big", {"cpu": "16000m", "memory": "68719476736", "pods": "110"}, True),
]
EXPECTED_SIZE = "cpu=5,memory=20Gi"
EXPECTED_NODES = [
    {
        "name": "big",
        "cpu_millicores": 16000,
        "memory_bytes": 64 * 2**30,
        "schedulable": False,
        "parsed": True,
    },
    {
        "name": "laptop",
        "cpu_millicores": 4000,
        "memory_bytes": 16 * 2**30,
        "schedulable": True,
        "parsed": True,
    },
    {
        "name": "mid",
        "cpu_millicores": 6000,
        "memory_bytes": 25 * 10**9,
        "schedulable": True,
        "parsed": True,
    },
    {
        "name": "small",
        "cpu_millicores": 5500,
        "memory_bytes": 48 * 2**30,
        "schedulable": True,
        "parsed": True,
    },
]


# --- the session: binaries, control plane, nodes -----------------------------------------------


def _load_build_kube() -> Any:
    sys.path.insert(0, str(REPO / "tests" / "tools"))
    try:
        import build_kube
    finally:
        sys.path.pop(0)
    return build_kube


@pytest.fixture(scope="session")
def kube_binaries(pytestconfig: pytest.Config) -> dict[str, Path]:
    """kube-apiserver, kube-controller-manager and etcd: built now if missing or stale.

    Skipped (with the reason in pytest's summary) only where the build is impossible: not
    Linux, not Debian, or missing Debian packages without root to install them.
    """
    build_kube = _load_build_kube()
    if not (build_kube.is_current() and build_kube.ETCD.is_file()):
        capture = pytestconfig.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled():
            print(
                "\nreal-cluster suite: building kube-apiserver (first time: several minutes; "
                "python tests/tools/build_kube.py does it ahead)",
                flush=True,
            )
            try:
                build_kube.build()
            except build_kube.BuildImpossible as exc:
                pytest.skip(f"real-cluster suite: cannot build kube-apiserver here: {exc}")
    return dict(build_kube.binaries())


@pytest.fixture(scope="session")
def real_tools() -> dict[str, Path]:
    """The real kubectl and helm (tests/tools/fetch_helm.py puts both in .cache/bin)."""
    found = {tool: CACHED_BIN / tool for tool in ("kubectl", "helm")}
    missing = [tool for tool, path in found.items() if not path.is_file()]
    if missing:
        message = f"real {' and '.join(missing)} missing: run python tests/tools/fetch_helm.py"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(f"real-cluster suite: {message}")
    return found


@pytest.fixture(scope="session")
def plane(
    kube_binaries: dict[str, Path],
    real_tools: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ControlPlane]:
    control = ControlPlane(tmp_path_factory.mktemp("control-plane"), kube_binaries)
    try:
        first = control.start()
        create_nodes(real_tools["kubectl"], first.kubeconfig)
        yield control
    finally:
        control.stop()


@pytest.fixture(scope="session")
def server(plane: ControlPlane) -> ApiServer:
    assert plane.servers, "the control plane started no apiserver"
    return plane.servers[0]


def create_nodes(kubectl: Path, kubeconfig: Path) -> None:
    """Nodes as a kubelet registers them: the object, then capacity and allocatable through
    the status subresource (as a kubelet reports them), then `kubectl cordon` for the
    cordoned one."""
    base = [str(kubectl), "--kubeconfig", str(kubeconfig)]
    for name, allocatable, cordoned in NODES:
        obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
        subprocess.run(
            [*base, "create", "-f", "-"],
            input=json.dumps(obj),
            text=True,
            check=True,
            capture_output=True,
            timeout=30,
        )
        status = {"status": {"capacity": allocatable, "allocatable": allocatable}}
        subprocess.run(
            [
                *base,
                "patch",
                "node",
                name,
                "--subresource=status",
                "--type=merge",
                "-p",
                json.dumps(status),
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )
        if cordoned:
            subprocess.run([*base, "cordon", name], check=True, capture_output=True, timeout=30)


def as_client(source: Path, chart: Path) -> Path:
    """A copy of `source` under the client chart's name: the engine's guard knows clients by it."""
    shutil.copytree(source, chart)
    doc = yaml.safe_load((chart / "Chart.yaml").read_text())
    doc["name"] = "client"
    (chart / "Chart.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return chart


@pytest.fixture(scope="session")
def client_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/chart as `client`, with the one Deployment the engine waits for."""
    chart = as_client(CHART_SOURCE, tmp_path_factory.mktemp("charts") / "client")
    (chart / "templates" / "jobs-manager.yaml").write_text(JOBS_MANAGER)
    return chart


@pytest.fixture(scope="session")
def workloadless_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/chart as `client` with no Deployment or StatefulSet at all."""
    return as_client(CHART_SOURCE, tmp_path_factory.mktemp("workloadless") / "client")


# Selected by the release's own label, as the engine finds it (helm also annotates it).
JOBS_MANAGER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-jobs-manager
  labels:
    {{- include "roundtrip.labels" . | nindent 4 }}
spec:
  replicas: 1
  selector:
    matchLabels:
      {{- include "roundtrip.labels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "roundtrip.labels" . | nindent 8 }}
    spec:
      containers:
        - name: jobs-manager
          image: registry.invalid/jobs-manager:1
"""


# --- per test: real tools on the harness's PATH, a private kubeconfig -------------------------


class Real:
    """FakeCluster's process harness with the real kubectl and helm on its PATH."""

    def __init__(self, root: Path, tools: dict[str, Path], server: ApiServer) -> None:
        self.harness = FakeCluster(root)
        for tool, path in tools.items():
            self.harness.remove(tool)
            (self.harness.bin / tool).symlink_to(path)
        self.server = server
        self.kubeconfig = server.write_kubeconfig(root / "kubeconfig")

    def env(self, **extra: str) -> dict[str, str]:
        return {"KUBECONFIG": str(self.kubeconfig), **extra}

    def run(
        self, *args: str, timeout: float = 120, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        return self.harness.run(*args, timeout=timeout, **self.env(**extra))

    def tool(
        self, name: str, *args: str, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.harness.bin / name), *args],
            env=self.harness.env(**self.env()),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check:
            assert result.returncode == 0, f"{name} {' '.join(args)}: {result.stderr}"
        return result

    def tool_json(self, name: str, *args: str) -> Any:
        return json.loads(self.tool(name, *args, "-o", "json").stdout)

    def releases(self) -> list[dict[str, Any]]:
        """Every release in every state (helm 4 has no --all: each state has its flag)."""
        return list(self.tool_json("helm", "list", "--all-namespaces", *EVERY_STATE))

    def namespace_exists(self, namespace: str) -> bool:
        return self.tool("kubectl", "get", "namespace", namespace, check=False).returncode == 0

    def configmap(self, namespace: str, name: str) -> dict[str, str]:
        return dict(self.tool_json("kubectl", "-n", namespace, "get", "configmap", name)["data"])

    def values_file(self) -> Path:
        return self.harness.home / ".tracebloc" / "values.yaml"

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.harness.bin / "kubectl"), *args],
            input=input,
            env=self.harness.env(**self.env()),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check:
            assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result

    def install(
        self, *args: str, controller: Callable[[str], list[str]] | None = None, **extra: str
    ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
        """`install` as a process, with this test as the deployment controller beside it.

        While the engine runs, every Deployment in the namespace whose status is behind its
        spec is marked rolled out (1 replica updated, ready and available for the current
        generation) through the status subresource. Returns the result and the
        Deployments marked, in order: an empty list means the engine never needed one."""
        namespace = args[args.index("--namespace") + 1]
        process = self.harness.start(*args, **self.env(**extra))
        controller = controller or self.mark_rolled_out
        marked: list[str] = []
        deadline = time.monotonic() + INSTALL_TIMEOUT_S
        try:
            while True:
                try:
                    out, err = process.communicate(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    assert time.monotonic() < deadline, f"install ran past {INSTALL_TIMEOUT_S}s"
                marked += controller(namespace)
        finally:
            if process.poll() is None:
                # The whole tree: a frozen binary's loader is the parent of the engine, and a
                # child left holding the pipes would make communicate() wait for ever.
                import psutil

                try:
                    tree = psutil.Process(process.pid).children(recursive=True)
                except psutil.Error:
                    tree = []
                process.kill()
                for child in tree:
                    try:
                        child.kill()
                    except psutil.Error:
                        pass
                process.communicate(timeout=60)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err), marked

    def mark_rolled_out(self, namespace: str) -> list[str]:
        listed = self.tool(
            "kubectl", "-n", namespace, "get", "deployments", "-o", "json", check=False
        )
        if listed.returncode != 0:
            return []  # the namespace is not there yet
        marked = []
        for item in json.loads(listed.stdout)["items"]:
            name, generation = item["metadata"]["name"], item["metadata"]["generation"]
            replicas = item["spec"].get("replicas", 1)
            status = item.get("status", {})
            if (
                status.get("observedGeneration") == generation
                and status.get("availableReplicas") == replicas
            ):
                continue
            available = {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
            }
            progressing = {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetAvailable",
            }
            patch = {
                "status": {
                    "observedGeneration": generation,
                    "replicas": replicas,
                    "updatedReplicas": replicas,
                    "readyReplicas": replicas,
                    "availableReplicas": replicas,
                    "conditions": [available, progressing],
                }
            }
            self.tool(
                "kubectl",
                "-n",
                namespace,
                "patch",
                "deployment",
                name,
                "--subresource=status",
                "--type=merge",
                "-p",
                json.dumps(patch),
            )
            marked.append(name)
        return marked


@pytest.fixture
def real(tmp_path: Path, real_tools: dict[str, Path], server: ApiServer) -> Iterator[Real]:
    harness = Real(tmp_path, real_tools, server)
    yield harness
    # No release survives a test: the guard reads all namespaces.
    for row in harness.releases():
        harness.tool(
            "helm", "uninstall", row["name"], "-n", row["namespace"], "--no-hooks", check=False
        )


def install_env(backend: BackendServer, client_id: str = CLIENT_ID, **extra: str) -> dict[str, str]:
    return {
        "TRACEBLOC_CLIENT_ID": client_id,
        "TRACEBLOC_CLIENT_PASSWORD": PASSWORD,
        "TRACEBLOC_BACKEND_URL": backend.url,
        "TRACEBLOC_SKIP_PREFLIGHT": "1",
        "TB_METRICS_WAIT_S": "0",
        "TB_PLAIN": "1",
        **extra,
    }


# --- probe and plan ----------------------------------------------------------------------------


def test_probe_json_sizes_from_the_largest_schedulable_node(real: Real) -> None:
    result = real.run("probe", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["cluster"]["readable"] is True
    assert sorted(doc["cluster"]["nodes"], key=lambda n: n["name"]) == EXPECTED_NODES
    assert doc["cluster"]["anchor"] == "mid"
    assert doc["training"] == {
        "size": EXPECTED_SIZE,
        "provenance": "installer",
        "source": "machine",
        "undersized": False,
        "unschedulable": False,
    }
    # The real helm's answer for a release that is not there is "absent", not "unreadable".
    assert doc["release"] == {"name": "tracebloc", "namespace": "tracebloc", "state": "absent"}
    assert doc["warnings"] == []


def test_plan_json_renders_the_values_and_the_helm_command(real: Real, client_chart: Path) -> None:
    result = real.run(
        "plan",
        "--json",
        "--chart",
        str(client_chart),
        "--namespace",
        "planned",
        TRACEBLOC_CLIENT_ID=CLIENT_ID,
        TRACEBLOC_CLIENT_PASSWORD=PASSWORD,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["training"]["size"] == EXPECTED_SIZE
    assert doc["values"]["env"]["RESOURCE_LIMITS"] == EXPECTED_SIZE
    assert doc["values"]["env"]["RESOURCE_PROVENANCE"] == "installer"
    assert doc["values"]["clientPassword"] == "********"
    argv = doc["helm"]["argv"]
    assert argv[:6] == ["helm", "upgrade", "--install", "planned", str(client_chart), "--namespace"]
    assert PASSWORD not in result.stdout + result.stderr
    # plan changes nothing.
    assert real.releases() == []
    assert not real.namespace_exists("planned")


# --- install -----------------------------------------------------------------------------------


def test_fresh_install_into_a_namespace_that_does_not_exist_yet(
    real: Real, backend: BackendServer, client_chart: Path
) -> None:
    namespace = "fresh-install"
    assert not real.namespace_exists(namespace)
    result, marked = real.install(
        "install",
        "--yes",
        "--chart",
        str(client_chart),
        "--namespace",
        namespace,
        **install_env(backend),
    )

    assert result.returncode == 0, result.stderr
    # exit 0 came only after the Deployment was rolled out: the engine waited for it.
    assert marked == [f"{namespace}-jobs-manager"]
    assert f"Deployment {namespace}-jobs-manager 1/1" in result.stdout
    assert "The tracebloc client is installed and connected." in result.stdout
    [row] = real.releases()
    assert (row["name"], row["namespace"], row["status"], row["chart"]) == (
        namespace,
        namespace,
        "deployed",
        "client-0.1.0",
    )
    assert real.namespace_exists(namespace)
    env = real.configmap(namespace, f"{namespace}-env")
    assert env["RESOURCE_LIMITS"] == EXPECTED_SIZE
    assert env["RESOURCE_PROVENANCE"] == "installer"
    secret = real.tool_json("kubectl", "-n", namespace, "get", "secret", f"{namespace}-credentials")
    assert base64.b64decode(secret["data"]["clientPassword"]).decode() == PASSWORD
    # The kube context now defaults to the namespace.
    minified = real.tool_json("kubectl", "config", "view", "--minify")
    assert minified["contexts"][0]["context"]["namespace"] == namespace
    assert [r.fields["username"] for r in backend.requests] == [CLIENT_ID]
    assert PASSWORD not in result.stdout + result.stderr


def test_reinstall_keeps_a_user_marker_and_its_size(
    real: Real, backend: BackendServer, client_chart: Path
) -> None:
    namespace = "user-marker"
    first, _ = real.install(
        "install",
        "--yes",
        "--chart",
        str(client_chart),
        "--namespace",
        namespace,
        **install_env(backend, TRACEBLOC_TRAINING_RESOURCES="cpu=3,memory=12Gi"),
    )
    assert first.returncode == 0, first.stderr
    # --force: the re-install re-applies (a healthy one with nothing to change would not).
    second, marked = real.install(
        "install",
        "--yes",
        "--force",
        "--chart",
        str(client_chart),
        "--namespace",
        namespace,
        **install_env(backend),
    )

    assert second.returncode == 0, second.stderr
    # The upgrade left the Deployment's spec as it was: it is still rolled out, so the
    # engine finds it ready without a controller's help.
    assert marked == []
    assert "(carried from the installed release, chosen by a person; user)" in second.stdout
    env = real.configmap(namespace, f"{namespace}-env")
    assert (env["RESOURCE_LIMITS"], env["RESOURCE_PROVENANCE"]) == ("cpu=3,memory=12Gi", "user")
    history = real.tool_json("helm", "history", namespace, "-n", namespace)
    assert [h["status"] for h in history] == ["superseded", "deployed"]
    # What helm stored as user values is what the engine wrote.
    stored = real.tool_json("helm", "get", "values", namespace, "-n", namespace)
    assert stored["env"]["RESOURCE_PROVENANCE"] == "user"


def test_a_second_client_is_refused_and_nothing_changes(
    real: Real, backend: BackendServer, client_chart: Path
) -> None:
    first, _ = real.install(
        "install",
        "--yes",
        "--chart",
        str(client_chart),
        "--namespace",
        "first",
        **install_env(backend),
    )
    assert first.returncode == 0, first.stderr
    before = real.releases()

    second = real.run(
        "install",
        "--yes",
        "--chart",
        str(client_chart),
        "--namespace",
        "second",
        **install_env(backend, client_id="client-someone-else"),
    )

    assert second.returncode == 3, second.stderr
    assert f"another tracebloc client ({CLIENT_ID})" in second.stderr
    assert "release 'first' in namespace 'first'" in second.stderr
    assert real.releases() == before
    assert not real.namespace_exists("second")


def test_kubeconfig_and_context_flags_reach_kubectl_and_helm(
    real: Real, backend: BackendServer, client_chart: Path, tmp_path: Path
) -> None:
    """The default kubeconfig names a dead server; only the flags lead to the real one."""
    dead = f"https://127.0.0.1:{free_port()}"
    doc = real.server.kubeconfig_doc(cluster="real", context="real")
    doc["clusters"].append({"name": "dead", "cluster": {"server": dead}})  # type: ignore[attr-defined]
    doc["contexts"].append({"name": "dead", "context": {"cluster": "dead", "user": "admin"}})  # type: ignore[attr-defined]
    doc["current-context"] = "dead"
    flagged = tmp_path / "elsewhere" / "cluster.yaml"
    flagged.parent.mkdir()
    flagged.write_text(yaml.safe_dump(doc))
    # KUBECONFIG (the default) points at a file with only the dead server.
    default = tmp_path / "default-kubeconfig"
    only_dead = {**doc, "clusters": [doc["clusters"][1]], "contexts": [doc["contexts"][1]]}  # type: ignore[index]
    default.write_text(yaml.safe_dump(only_dead))
    flags = ["--kubeconfig", str(flagged), "--context", "real"]
    env = install_env(backend, KUBECONFIG=str(default))

    probe = real.harness.run("probe", "--json", *flags, timeout=120, **env)
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout)["cluster"]["readable"] is True

    result, marked = real.install(
        "install", "--yes", "--chart", str(client_chart), "--namespace", "flags", *flags, **env
    )
    assert result.returncode == 0, result.stderr
    assert marked == ["flags-jobs-manager"]
    assert [(r["name"], r["status"]) for r in real.releases()] == [("flags", "deployed")]
    written = yaml.safe_load(flagged.read_text())
    contexts = {c["name"]: c["context"] for c in written["contexts"]}
    assert contexts["real"].get("namespace") == "flags"
    assert written["current-context"] == "dead"  # the flag chose; the file's choice stays
    assert yaml.safe_load(default.read_text()) == only_dead


# --- a wedged release --------------------------------------------------------------------------


def test_release_left_pending_upgrade_by_a_killed_helm_is_rolled_back_then_upgraded(
    real: Real, backend: BackendServer, client_chart: Path, tmp_path: Path
) -> None:
    namespace = "wedged"
    first, _ = real.install(
        "install",
        "--yes",
        "--chart",
        str(client_chart),
        "--namespace",
        namespace,
        **install_env(backend),
    )
    assert first.returncode == 0, first.stderr
    # A chart whose upgrade never becomes ready: a Deployment gets no pods (no scheduler, no
    # kubelet), so `helm upgrade --wait` stays in pending-upgrade until it is killed.
    slow = tmp_path / "slow-client"
    shutil.copytree(client_chart, slow)
    (slow / "templates" / "never-ready.yaml").write_text(NEVER_READY)
    helm = subprocess.Popen(
        [
            str(real.harness.bin / "helm"),
            "upgrade",
            namespace,
            str(slow),
            "-n",
            namespace,
            "--reuse-values",
            "--wait",
            "--timeout",
            "5m",
        ],
        env=real.harness.env(**real.env()),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while status_of(real, namespace) != "pending-upgrade":
            assert helm.poll() is None, "helm upgrade ended before it could be killed"
            assert time.monotonic() < deadline, "the upgrade never reached pending-upgrade"
            time.sleep(0.2)
        assert (
            real.tool(
                "kubectl", "-n", namespace, "get", "deployment", "never-ready", check=False
            ).returncode
            == 0
        )
    finally:
        helm.send_signal(signal.SIGKILL)
        helm.wait(10)
    assert status_of(real, namespace) == "pending-upgrade"

    result, _ = real.install(
        "install",
        "--yes",
        "--chart",
        str(client_chart),
        "--namespace",
        namespace,
        **install_env(backend),
    )

    assert result.returncode == 0, result.stderr
    assert f"release {namespace} was pending-upgrade; recovered with helm rollback" in result.stdout
    history = real.tool_json("helm", "history", namespace, "-n", namespace)
    # helm 4 leaves the interrupted revision marked pending-upgrade in the history; the
    # rollback (3) and the upgrade (4) follow it.
    assert [h["status"] for h in history] == [
        "superseded",
        "pending-upgrade",
        "superseded",
        "deployed",
    ]
    assert history[2]["description"] == "Rollback to 1"
    assert status_of(real, namespace) == "deployed"
    # The wedged upgrade's Deployment went with the rollback.
    gone = real.tool("kubectl", "-n", namespace, "get", "deployment", "never-ready", check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr


NEVER_READY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: never-ready
spec:
  replicas: 1
  selector:
    matchLabels: {app: never-ready}
  template:
    metadata:
      labels: {app: never-ready}
    spec:
      containers:
        - name: pause
          image: registry.invalid/pause:1
"""


def status_of(real: Real, release: str) -> str | None:
    result = real.tool("helm", "status", release, "-n", release, "-o", "json", check=False)
    if result.returncode != 0:
        return None
    return str(json.loads(result.stdout)["info"]["status"])


# --- the metrics API ---------------------------------------------------------------------------

LOCAL_METRICS_APISERVICE = {
    "apiVersion": "apiregistration.k8s.io/v1",
    "kind": "APIService",
    "metadata": {"name": "v1beta1.metrics.k8s.io"},
    # No service: the aggregator serves it locally and reports it Available at once.
    "spec": {
        "group": "metrics.k8s.io",
        "version": "v1beta1",
        "groupPriorityMinimum": 100,
        "versionPriority": 100,
    },
}


def test_metrics_apiservice_absent_then_registered(
    real: Real, backend: BackendServer, client_chart: Path
) -> None:
    namespace = "metrics"
    absent, _ = real.install(
        "install",
        "--yes",
        "--chart",
        str(client_chart),
        "--namespace",
        namespace,
        **install_env(backend, TB_METRICS_WAIT_S="5"),
    )
    assert absent.returncode == 0, absent.stderr
    # Not registered is waited out to the bound (a fresh cluster registers it late), then
    # the install goes on; the message says how long it waited.
    assert re.search(
        r"the metrics API \(v1beta1\.metrics\.k8s\.io\) is not registered after "
        r"[56]s of waiting; continuing",
        absent.stderr,
    ), absent.stderr

    created = subprocess.run(
        [str(real.harness.bin / "kubectl"), "create", "-f", "-"],
        input=json.dumps(LOCAL_METRICS_APISERVICE),
        env=real.harness.env(**real.env()),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert created.returncode == 0, created.stderr
    try:
        registered, _ = real.install(
            "install",
            "--yes",
            "--force",
            "--chart",
            str(client_chart),
            "--namespace",
            namespace,
            **install_env(backend, TB_METRICS_WAIT_S="30"),
        )
        assert registered.returncode == 0, registered.stderr
        assert "the metrics API is available" in registered.stdout + registered.stderr
    finally:
        real.tool("kubectl", "delete", "apiservice", "v1beta1.metrics.k8s.io", check=False)


# --- the API server goes away ------------------------------------------------------------------


def test_api_server_stopped_after_the_reads_fails_the_upgrade_with_the_remedy(
    real: Real, plane: ControlPlane, client_chart: Path, tmp_path: Path
) -> None:
    """A second apiserver on the same etcd is stopped while the engine waits for the
    credential check, after its reads (they overlap, before credentials) saw no release.
    `helm upgrade --install` then cannot connect: exit 1 with helm's reason and the commands
    to inspect and resume; nothing reached the cluster (seen through the first apiserver,
    which shares the data) and the kube context was not pointed at the namespace. The values
    file, written before helm, is what a re-run starts from."""
    doomed = plane.start_apiserver("doomed-apiserver")
    kubeconfig = doomed.write_kubeconfig(tmp_path / "doomed.kubeconfig")
    with BackendServer(Reply(200, delay=3.0)) as slow_backend:
        process = real.harness.start(
            "install",
            "--yes",
            "--chart",
            str(client_chart),
            "--namespace",
            "unreachable",
            **install_env(slow_backend, KUBECONFIG=str(kubeconfig)),
        )
        try:
            assert slow_backend.wait_for(1, timeout=60), "the engine never checked credentials"
            doomed.kill()
            out, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 1, err
    assert "verdict:        install: no release unreachable in namespace unreachable" in out + err
    assert "helm upgrade --install failed (exit 1)" in err
    assert "kubernetes cluster unreachable" in err.lower()
    assert "to inspect: helm status unreachable -n unreachable" in err
    assert "then run tracebloc-installer -n unreachable again" in err
    assert "Traceback" not in err
    assert PASSWORD not in out + err
    assert real.releases() == []
    assert not real.namespace_exists("unreachable")
    config = yaml.safe_load(kubeconfig.read_text())
    assert all("namespace" not in c["context"] for c in config["contexts"])
    assert yaml.safe_load(real.values_file().read_text())["env"]["RESOURCE_LIMITS"] == EXPECTED_SIZE

    # Now the cluster is gone before the run starts: exit 1 "cannot reach the cluster", found
    # before any credentials are sent.
    with BackendServer(default=200) as untouched:
        again = real.harness.run(
            "install",
            "--yes",
            "--chart",
            str(client_chart),
            "--namespace",
            "unreachable",
            timeout=120,
            **install_env(untouched, KUBECONFIG=str(kubeconfig)),
        )
        assert again.returncode == 1, again.stderr
        assert "cannot reach the cluster" in again.stderr
        assert untouched.requests == []

    # probe reports an unreachable cluster as an answer (exit 0), not a failure.
    probe = real.harness.run("probe", "--json", KUBECONFIG=str(kubeconfig))
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout)["cluster"]["readable"] is False


# --- waiting for the client ----------------------------------------------------------------------


def test_install_whose_deployment_never_becomes_ready_exits_1_and_leaves_the_release(
    real: Real, backend: BackendServer, client_chart: Path
) -> None:
    """No controller marks the Deployment rolled out: at READY_TIMEOUT the engine names the
    Deployment that is not ready and why, exits 1, and the release stays installed."""
    namespace = "never-ready"
    result = real.run(
        "install",
        "--yes",
        "--chart",
        str(client_chart),
        "--namespace",
        namespace,
        **install_env(backend, READY_TIMEOUT="4"),
    )

    assert result.returncode == 1, result.stderr
    assert "The tracebloc client is installed" not in result.stdout
    assert "the client did not become ready within 4s (READY_TIMEOUT)" in result.stderr
    assert (
        f"Deployment {namespace}-jobs-manager is not ready (0 of 1): no pod was created"
        in result.stderr
    )
    assert "tracebloc-installer status" in result.stderr
    assert [(r["name"], r["status"]) for r in real.releases()] == [(namespace, "deployed")]


def test_install_of_a_chart_without_workloads_exits_1(
    real: Real, backend: BackendServer, workloadless_chart: Path
) -> None:
    """A release with no Deployment or StatefulSet is no running client: exit 1, not 0."""
    namespace = "no-workloads"
    result = real.run(
        "install",
        "--yes",
        "--chart",
        str(workloadless_chart),
        "--namespace",
        namespace,
        **install_env(backend),
    )

    assert result.returncode == 1, result.stderr
    assert "the release has no Deployment or StatefulSet in namespace no-workloads" in result.stderr
    assert [(r["name"], r["status"]) for r in real.releases()] == [(namespace, "deployed")]


# --- the fakes answer as the real tools do ---------------------------------------------------
# The same argv goes to the fake (as the process-level tests script it) and to the real tool;
# the answers must agree on what the engine reads: exit code, JSON, helm's error line.


def answers(real: Real, fake: FakeCluster, tool: str, *argv: str) -> tuple[Any, Any]:
    def run(executable: Path, env: dict[str, str]) -> Any:
        done = subprocess.run(
            [str(executable), *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        said = (done.stderr.strip().splitlines() or [""])[-1]
        out = json.loads(done.stdout) if done.returncode == 0 else said
        return done.returncode, out

    return (
        run(real.harness.bin / tool, real.harness.env(**real.env())),
        run(fake.executable(tool), fake.env()),
    )


@pytest.fixture
def fake(tmp_path: Path) -> FakeCluster:
    return FakeCluster(tmp_path / "fake")


def test_fake_repo_list_with_nothing_configured_is_the_real_empty_list(
    real: Real, fake: FakeCluster
) -> None:
    fake.installable()
    got_real, got_fake = answers(real, fake, "helm", "repo", "list", "-o", "json")
    assert got_real == got_fake == (0, [])


@pytest.mark.parametrize("verb", ["get values", "status"])
def test_fake_release_not_found_is_the_real_error(real: Real, fake: FakeCluster, verb: str) -> None:
    fake.on("helm", *verb.split(), stderr=HELM_NOT_FOUND, rc=1)
    got_real, got_fake = answers(
        real, fake, "helm", *verb.split(), "absent", "-n", "absent", "-o", "json"
    )
    assert got_real == got_fake == (1, HELM_NOT_FOUND.strip())


def test_fake_release_reads_match_a_real_release(
    real: Real, fake: FakeCluster, client_chart: Path
) -> None:
    """A release installed with no user values: `get values` prints null, `list` has the
    fields release_row() fakes, `status` has info.status."""
    real.tool("helm", "install", "plain", str(client_chart), "-n", "plain", "--create-namespace")
    fake.release_values(None).installed(release_row("plain", chart="client-0.1.0"))
    fake.status_of("plain", "deployed")

    got_real, got_fake = answers(
        real, fake, "helm", "get", "values", "plain", "-n", "plain", "-o", "json"
    )
    assert got_real == got_fake == (0, None)

    (rc_real, [row]), (rc_fake, [fake_row]) = answers(
        real, fake, "helm", "list", "--all-namespaces", "-o", "json"
    )
    assert rc_real == rc_fake == 0
    assert sorted(row) == sorted(fake_row)
    assert {k: row[k] for k in ("name", "namespace", "status", "chart", "app_version")} == {
        k: fake_row[k] for k in ("name", "namespace", "status", "chart")
    } | {"app_version": "0.1.0"}
    assert isinstance(row["revision"], str) and isinstance(fake_row["revision"], str)

    (rc_real, status), (rc_fake, fake_status) = answers(
        real, fake, "helm", "status", "plain", "-n", "plain", "-o", "json"
    )
    assert rc_real == rc_fake == 0
    assert status["info"]["status"] == fake_status["info"]["status"] == "deployed"
    assert status["name"] == fake_status["name"]


def test_fake_nodes_have_the_real_node_shape(real: Real, fake: FakeCluster) -> None:
    """What the engine reads of a node (name, spec.unschedulable only when cordoned,
    status.allocatable) sits where the fakes put it. The server stores quantities in
    canonical form (16000m -> 16, 49152Mi -> 48Gi; 68719476736, 25G and 5500m stay),
    so a real cluster answers in the forms below, not always in the form a client sent."""
    fake.nodes(
        node("big", "16", "68719476736", unschedulable=True),
        node("laptop", "4", "16Gi"),
        node("mid", "6", "25G"),
        node("small", "5500m", "48Gi"),
    )
    (rc_real, listed), (rc_fake, fake_listed) = answers(
        real, fake, "kubectl", "get", "nodes", "-o", "json"
    )
    assert rc_real == rc_fake == 0
    assert listed["kind"] == fake_listed["kind"] == "List"
    real_nodes = {item["metadata"]["name"]: item for item in listed["items"]}
    fake_nodes = {item["metadata"]["name"]: item for item in fake_listed["items"]}
    assert sorted(real_nodes) == sorted(fake_nodes)
    for name, item in fake_nodes.items():
        got = real_nodes[name]
        assert got.get("spec", {}).get("unschedulable") == item.get("spec", {}).get("unschedulable")
        assert got["status"]["allocatable"] == item["status"]["allocatable"]


# --- the real chart: tests/upstream/client ---------------------------------------------------
# The vendored upstream chart as released (it declares kubeVersion >=1.24, which this 1.20
# server is not), and a copy adapted mechanically to 1.20 (tests/real_chart.py: each edit
# asserted to apply). Beside it: the metrics API behind an ExternalName Service, which the
# chart looks up at render time, and a stand-in for the deployment controller and kubelet
# (a ready pod per Deployment, mounting its claims). The volume binder, pv-/pvc-protection
# and the serviceaccount controller are the real ones (tests/real_cluster.py).

UPSTREAM_CHART = REPO / "tests" / "upstream" / "client"
KUBE_VERSION_REFUSAL = (
    "chart requires kubeVersion: >=1.24.0-0 which is incompatible with Kubernetes v1.20.2"
)


@pytest.fixture(scope="session")
def upstream_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vendored chart exactly as released."""
    chart = tmp_path_factory.mktemp("upstream") / "client"
    shutil.copytree(UPSTREAM_CHART, chart)
    return chart


@pytest.fixture(scope="session")
def real_chart_1_20(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return real_chart.adapt(UPSTREAM_CHART, tmp_path_factory.mktemp("upstream-1.20") / "client")


@pytest.fixture
def metrics(real: Real, plane: ControlPlane) -> Iterator[real_chart.MetricsEndpoint]:
    """The metrics API, registered and Available; after the test, also the cluster-wide
    objects the chart keeps on uninstall (its PriorityClass, the node agents' namespace),
    which would belong to this test's release in the next test."""
    endpoint = real_chart.MetricsEndpoint(plane.pki, real.kubectl)
    try:
        endpoint.register()
        yield endpoint
    finally:
        endpoint.close()
        for row in real.releases():
            real.tool(
                "helm", "uninstall", row["name"], "-n", row["namespace"], "--no-hooks", check=False
            )
        for kind in ("priorityclasses", "namespaces"):
            items = json.loads(real.kubectl("get", kind, "-o", "json").stdout)["items"]
            kept = [
                i["metadata"]["name"]
                for i in items
                if "meta.helm.sh/release-name" in (i["metadata"].get("annotations") or {})
            ]
            if kept:
                real.kubectl("delete", kind, *kept, "--wait=true", "--timeout=90s", timeout=120)


def stand_in(real: Real) -> Callable[[str], list[str]]:
    return lambda namespace: real_chart.stand_in(real.kubectl, namespace)


def claims_and_volumes(real: Real, namespace: str) -> tuple[list[str], list[tuple[str, bool]]]:
    """The namespace's claims; every volume claimed from it, and whether it is being deleted."""
    pvcs = json.loads(real.kubectl("-n", namespace, "get", "pvc", "-o", "json").stdout)["items"]
    pvs = json.loads(real.kubectl("get", "pv", "-o", "json").stdout)["items"]
    return (
        sorted(p["metadata"]["name"] for p in pvcs),
        sorted(
            (v["metadata"]["name"], "deletionTimestamp" in v["metadata"])
            for v in pvs
            if v["spec"].get("claimRef", {}).get("namespace") == namespace
        ),
    )


def test_plan_foresees_that_helm_refuses_the_real_chart_as_install_does(
    real: Real, backend: BackendServer, upstream_chart: Path
) -> None:
    """The released chart on a 1.20 server: helm refuses it (kubeVersion). plan, asking helm
    with a server-side dry run, reaches install's verdict and exit code; neither suggests
    rolling back or uninstalling a release that was never created."""
    namespace = "refused"
    plan = real.run(
        "plan",
        "--json",
        "--chart",
        str(upstream_chart),
        "--namespace",
        namespace,
        TRACEBLOC_CLIENT_ID=CLIENT_ID,
        TRACEBLOC_CLIENT_PASSWORD=PASSWORD,
    )
    install = real.run(
        "install",
        "--yes",
        "--chart",
        str(upstream_chart),
        "--namespace",
        namespace,
        **install_env(backend),
    )

    assert install.returncode == 1, install.stderr
    assert KUBE_VERSION_REFUSAL in install.stderr
    assert plan.returncode == install.returncode, plan.stderr
    verdict = json.loads(plan.stdout)["verdict"]
    assert verdict["action"] == "refused" and verdict["exit"] == 1
    assert KUBE_VERSION_REFUSAL in verdict["reason"]
    for said in (verdict["remedy"], install.stderr):
        assert "helm rollback" not in said and "helm uninstall" not in said
    assert f"no release {namespace} was created in namespace {namespace}" in install.stderr
    assert PASSWORD not in plan.stdout + plan.stderr + install.stdout + install.stderr
    assert real.releases() == []


def test_the_real_chart_installs_reinstalls_and_reports(
    real: Real,
    backend: BackendServer,
    real_chart_1_20: Path,
    metrics: real_chart.MetricsEndpoint,
) -> None:
    namespace = "upstream"
    plan = real.run(
        "plan",
        "--json",
        "--chart",
        str(real_chart_1_20),
        "--namespace",
        namespace,
        TRACEBLOC_CLIENT_ID=CLIENT_ID,
        TRACEBLOC_CLIENT_PASSWORD=PASSWORD,
    )
    assert plan.returncode == 0, plan.stderr
    verdict = json.loads(plan.stdout)["verdict"]
    assert verdict["action"] == "install"
    assert verdict["dry_run"] == "helm's server-side dry run accepted the chart and values"
    assert real.releases() == [] and not real.namespace_exists(namespace)

    first, marked = real.install(
        "install",
        "--yes",
        "--chart",
        str(real_chart_1_20),
        "--namespace",
        namespace,
        controller=stand_in(real),
        **install_env(backend, TB_METRICS_WAIT_S="30"),
    )
    assert first.returncode == 0, first.stderr
    assert "the metrics API is available" in first.stdout + first.stderr
    assert sorted(marked) == sorted(
        [
            "mysql-client",
            f"{namespace}-egress-proxy",
            f"{namespace}-jobs-manager",
            f"{namespace}-requests-proxy",
        ]
    )
    assert "The tracebloc client is installed and connected." in first.stdout
    [row] = real.releases()
    assert (row["name"], row["status"], row["chart"]) == (namespace, "deployed", "client-1.9.62")
    claims, volumes = claims_and_volumes(real, namespace)
    assert claims == ["client-logs-pvc", "client-pvc", "mysql-pvc"]
    assert [deleting for _, deleting in volumes] == [False, False, False]
    secret = real.tool_json("kubectl", "-n", namespace, "get", "secret", "-o", "json")
    assert any(
        base64.b64decode(v).decode(errors="replace") == PASSWORD
        for item in secret["items"]
        for v in (item.get("data") or {}).values()
    )

    # A healthy re-run changes nothing: no new revision, one line saying so.
    healthy, _ = real.install(
        "install",
        "--yes",
        "--chart",
        str(real_chart_1_20),
        "--namespace",
        namespace,
        controller=stand_in(real),
        **install_env(backend),
    )
    assert healthy.returncode == 0, healthy.stderr
    assert "already installed and connected — nothing to change" in healthy.stdout
    history = real.tool_json("helm", "history", namespace, "-n", namespace)
    assert [h["status"] for h in history] == ["deployed"]

    second, _ = real.install(
        "install",
        "--yes",
        "--force",
        "--chart",
        str(real_chart_1_20),
        "--namespace",
        namespace,
        controller=stand_in(real),
        **install_env(backend),
    )
    assert second.returncode == 0, second.stderr
    assert "carried from the installed release" in second.stdout
    history = real.tool_json("helm", "history", namespace, "-n", namespace)
    assert [h["status"] for h in history] == ["superseded", "deployed"]

    status = real.run("status", "--namespace", namespace)
    assert status.returncode == 0, status.stdout + status.stderr
    # diagnose with no password given: it still reaches no output or bundle member.
    diagnose = real.run("diagnose", "--json", "--namespace", namespace)
    assert diagnose.returncode == 0, diagnose.stderr
    bundle = Path(json.loads(diagnose.stdout)["bundle"])
    raw = bundle.read_bytes()
    import gzip

    for stream in (raw, gzip.decompress(raw), diagnose.stdout.encode(), diagnose.stderr.encode()):
        assert PASSWORD.encode() not in stream
    assert PASSWORD not in status.stdout + status.stderr


def test_the_real_chart_with_no_controller_exits_1_naming_the_workload(
    real: Real,
    backend: BackendServer,
    real_chart_1_20: Path,
    metrics: real_chart.MetricsEndpoint,
) -> None:
    namespace = "uncontrolled"
    result = real.run(
        "install",
        "--yes",
        "--chart",
        str(real_chart_1_20),
        "--namespace",
        namespace,
        **install_env(backend, READY_TIMEOUT="5"),
    )

    assert result.returncode == 1, result.stderr
    assert "the client did not become ready within 5s (READY_TIMEOUT)" in result.stderr, (
        result.stderr
    )
    assert re.search(r"Deployment \S+ is not ready \(0 of 1\): no pod was created", result.stderr)
    # The remedy describes the object that exists: the Deployment, not a pod of its name.
    assert re.search(rf"kubectl describe deployment \S+ -n {namespace}", result.stderr)
    assert "kubectl describe pod" not in result.stderr
    assert [(r["name"], r["status"]) for r in real.releases()] == [(namespace, "deployed")]


def test_the_real_chart_uninstall_keeps_data_then_deletes_it(
    real: Real,
    backend: BackendServer,
    real_chart_1_20: Path,
    metrics: real_chart.MetricsEndpoint,
) -> None:
    """helm deletes the chart's hostPath volumes but keeps their claims; a volume bound to
    a kept claim stays Terminating (pv-protection), so nothing may wait for it: uninstall
    ends in seconds, not at helm's 5-minute timeout. A later install adopts the claims;
    --delete-data removes claims, then volumes, then the data directory."""
    namespace = "uninstalled"

    def install() -> None:
        done, _ = real.install(
            "install",
            "--yes",
            "--chart",
            str(real_chart_1_20),
            "--namespace",
            namespace,
            controller=stand_in(real),
            **install_env(backend),
        )
        assert done.returncode == 0, done.stderr

    install()

    # The volume binder (a real controller) binds each volume to its claim in its own time:
    # uninstall is judged on a release whose three volumes are bound.
    def bound() -> int:
        pvs = json.loads(real.kubectl("get", "pv", "-o", "json").stdout)["items"]
        return sum(
            1
            for v in pvs
            if v["spec"].get("claimRef", {}).get("namespace") == namespace
            and v.get("status", {}).get("phase") == "Bound"
        )

    bound_by = time.monotonic() + 120
    while bound() < 3 and time.monotonic() < bound_by:
        time.sleep(0.5)
    assert bound() == 3
    started = time.monotonic()
    kept = real.run("uninstall", "--yes", "--namespace", namespace, timeout=120)
    assert kept.returncode == 0, kept.stderr
    assert time.monotonic() - started < 60
    assert real.releases() == []
    claims, volumes = claims_and_volumes(real, namespace)
    assert claims == ["client-logs-pvc", "client-pvc", "mysql-pvc"]
    assert "kept: volume claims of the release" in kept.stdout
    assert f"kept: volumes of the release: {namespace}-data-pv" in kept.stdout
    # helm deleted the volumes; each is held, Terminating, by its kept claim (pv-protection).
    assert [deleting for _, deleting in volumes] == [True, True, True]
    assert real.values_file().exists()

    install()  # adopts the kept claims (and the volumes still bound to them)
    claims_after, _ = claims_and_volumes(real, namespace)
    assert claims_after == claims

    started = time.monotonic()
    deleted = real.run("uninstall", "--yes", "--delete-data", "--namespace", namespace, timeout=300)
    assert deleted.returncode == 0, deleted.stderr
    assert time.monotonic() - started < 120
    assert "deleted volume claims client-logs-pvc, client-pvc, mysql-pvc" in deleted.stdout
    assert (
        f"deleted volumes {namespace}-data-pv, {namespace}-logs-pv, {namespace}-mysql-pv"
        in deleted.stdout
    )
    assert claims_and_volumes(real, namespace) == ([], [])
    # The release's data and the values file are gone; only the lock files stay.
    left = real.values_file().parent
    assert not left.exists() or {p.name for p in left.iterdir()} <= {"install.lock", "locks"}
