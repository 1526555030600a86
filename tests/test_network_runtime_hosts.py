"""The network preflight adds the container runtime's hosts when, and only when, the runtime
will be installed: the CLI as a process on a Linux machine made of fakes
(tests/fakes/runtime_host.py), on a loopback network (tests/fakes/netlab.py) whose guard
fails and writes down every lookup of a name that is not loopback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.fakes import netlab
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import REPO, FakeCluster
from tests.fakes.localcluster import creatable, machine_without_cluster
from tests.fakes.runtime_host import linux_host, root_calls
from tests.test_cli_install import env_for, fresh

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime step")


def derived(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend: BackendServer,
    registry: BackendServer,
    guard: Path,
    tmp_path: Path,
    **host: str,
) -> dict[str, str]:
    """The hosts come from the plan (no PF_CRITICALS): the loopback backend, a local chart,
    a loopback registry mirror; everything else the run needs is what the plan adds."""
    chart = tmp_path / "chart"
    chart.mkdir(exist_ok=True)
    (chart / "Chart.yaml").write_text("name: client\nversion: 1.0.0\n", encoding="utf-8")
    mirror = registry.url.removeprefix("https://").rstrip("/")
    return env_for(
        backend,
        **host,
        TRACEBLOC_SKIP_PREFLIGHT="",
        SSL_CERT_FILE=str(public.pem),
        TRACEBLOC_IMAGE_REGISTRY=mirror,
        TRACEBLOC_CHART_PATH=str(chart),
        PF_MIN_MEM_GB="1",
        PF_MIN_CPU="1",
        PF_MIN_DISK_GB="1",
        PF_CRITICALS="",
        **netlab.guarded(guard, str(REPO)),
    )


def lookups(guard: Path) -> list[str]:
    return guard.read_text(encoding="utf-8").split("\n")[:-1] if guard.exists() else []


def test_plan_on_a_bare_machine_probes_dockers_package_repository(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend_site: BackendServer,
    registry: BackendServer,
    tmp_path: Path,
) -> None:
    machine_without_cluster(fresh(cluster))
    guard = tmp_path / "netguard.log"
    env = derived(
        cluster,
        public,
        backend_site,
        registry,
        guard,
        tmp_path,
        **linux_host(cluster, "debian", docker="missing"),
    )
    result = cluster.run("plan", "--json", **env)

    assert result.returncode == 1, result.stderr  # the guard makes it unreachable: a stop
    hosts = json.loads(result.stdout)["network"]["hosts"]
    assert [(h["kind"], h["host"], h["status"]) for h in hosts][-1] == (
        "runtime",
        "download.docker.com:443",
        "dns",
    )
    assert lookups(guard) == ["lookup download.docker.com"] * 2


def test_install_on_a_bare_machine_stops_at_the_runtime_host_before_any_root_command(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend_site: BackendServer,
    registry: BackendServer,
    tmp_path: Path,
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    guard = tmp_path / "netguard.log"
    env = derived(
        cluster,
        public,
        backend_site,
        registry,
        guard,
        tmp_path,
        **linux_host(cluster, "ubuntu", docker="missing"),
    )
    result = cluster.run("install", "--yes", "--json", **env)

    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    runtime = [h for h in document["network"]["hosts"] if h["kind"] == "runtime"]
    assert [(h["host"], h["status"]) for h in runtime] == [("download.docker.com:443", "dns")]
    assert "download.docker.com:443" in result.stderr
    # Reads only before the stop: `sudo -n true` asks nothing; no password, no package.
    assert [e["argv"] for e in cluster.call_log() if e["tool"] == "sudo"] == [["-n", "true"]]
    assert not any(c[0] in ("apt-get", "env", "install", "systemctl") for c in root_calls(cluster))
    assert all(r.method == "GET" for r in backend_site.requests)  # no credential sent
    assert lookups(guard) == ["lookup download.docker.com"] * 2


def test_install_with_docker_running_probes_no_runtime_host(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend_site: BackendServer,
    registry: BackendServer,
    tmp_path: Path,
) -> None:
    creatable(machine_without_cluster(fresh(cluster)))
    guard = tmp_path / "netguard.log"
    env = derived(
        cluster,
        public,
        backend_site,
        registry,
        guard,
        tmp_path,
        **linux_host(cluster, "ubuntu", docker="running"),
    )
    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 0, result.stderr
    assert "download.docker.com" not in result.stdout + result.stderr
    assert "installed and connected" in result.stdout
    assert not any(e["tool"] == "sudo" for e in cluster.call_log())
    assert lookups(guard) == []  # nothing but loopback was looked up
