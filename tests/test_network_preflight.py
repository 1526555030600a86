"""The network preflight, end to end: the CLI as a process on a loopback network (HTTPS
sites with throwaway CAs, a CONNECT proxy with and without credentials, a TLS-inspecting
proxy, a blackholed port, a name that does not resolve).

SSL_CERT_FILE stands in for this machine's trust store (the OS store the engine trusts):
the "public" CA is in it, the inspecting proxy's CA is not. The loopback guard
(tests/fakes/netguard) fails every lookup or connection that is not loopback and logs it;
each test asserts the log is empty. Every case asserts the words, the exit code, the time,
that no credential was asked or sent and that no cluster call was made on a stop.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakes import netlab
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import REPO, FakeCluster, node

# The guard is a sitecustomize: a frozen binary loads none, and these runs must never leave
# loopback (a name that is not loopback would go to the real resolver).
pytestmark = pytest.mark.skipif(
    bool(os.environ.get("TB_INSTALLER_BIN", "").strip()),
    reason="the loopback guard cannot load into a frozen binary",
)

CLIENT_ID = "client-net-1"
PASSWORD = "Cl1ent-P4ss:#net"
PROXY_USER = "nurse"
PROXY_PASSWORD = "Pr0xy-S3cret:@z/%"
# A stop comes within two attempts (3 s each) plus the CLI's start-up.
STOP_WITHIN_S = 15.0


@pytest.fixture
def inspector(tmp_path: Path) -> netlab.Authority:
    return netlab.Authority("Hospital Inspect CA", tmp_path)


@pytest.fixture
def backend(backend_site: BackendServer) -> BackendServer:
    """Here the backend is the HTTPS one the public test CA signed (conftest)."""
    return backend_site


@pytest.fixture
def guard_log(tmp_path: Path) -> Path:
    return tmp_path / "netguard.log"


def env_for(
    public: netlab.Authority, backend: BackendServer, guard_log: Path, criticals: str, **extra: str
) -> dict[str, str]:
    env = {
        "TRACEBLOC_CLIENT_ID": CLIENT_ID,
        "TRACEBLOC_CLIENT_PASSWORD": PASSWORD,
        "TRACEBLOC_BACKEND_URL": backend.url,
        "SSL_CERT_FILE": str(public.pem),
        "PF_CRITICALS": criticals,
        "PF_MIN_MEM_GB": "1",
        "PF_MIN_CPU": "1",
        "PF_MIN_DISK_GB": "1",
        "TB_METRICS_WAIT_S": "5",
        "TB_PLAIN": "1",
        "READY_TIMEOUT": "30",
        **netlab.guarded(guard_log, str(REPO)),
    }
    env.update(extra)
    return env


def site_entries(backend: BackendServer, *more: tuple[str, str] | tuple[str, str, str]) -> str:
    return netlab.criticals(("tracebloc API (loopback)", backend.url), *more)


def assert_stopped_before_anything(
    cluster: FakeCluster,
    backend: BackendServer,
    result: subprocess.CompletedProcess[str],
    elapsed: float,
) -> None:
    assert result.returncode == 1, result.stderr
    assert elapsed < STOP_WITHIN_S
    # No credential was sent: the backend saw only the probe's GET, never the check's POST.
    assert all(r.method == "GET" for r in backend.requests)
    # Nothing but the tools' version queries ran: no cluster call.
    assert all(argv[:1] == ["version"] for argv in cluster.calls())
    assert not (cluster.home / ".tracebloc" / "values.yaml").exists()
    log = cluster.home / ".tracebloc" / "install.log"
    logged = log.read_text(encoding="utf-8") if log.exists() else ""
    for text in (result.stdout, result.stderr, logged):
        assert PASSWORD not in text and PROXY_PASSWORD not in text


def assert_only_loopback(guard_log: Path) -> None:
    assert not guard_log.exists() or guard_log.read_text(encoding="utf-8") == ""


def run(
    cluster: FakeCluster, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = cluster.run(*args, **env)
    return result, time.monotonic() - started


# --- the failure classes: each a stop, before anything is asked or changed ----------------


def test_refused_registry_stops_install_naming_host_port(
    cluster: FakeCluster, public: netlab.Authority, backend: BackendServer, guard_log: Path
) -> None:
    url = netlab.refused_url()
    hostport = url.removeprefix("https://").rstrip("/")
    env = env_for(public, backend, guard_log, site_entries(backend, ("Docker Hub registry", url)))
    result, elapsed = run(cluster, "install", "--yes", **env)

    assert_stopped_before_anything(cluster, backend, result, elapsed)
    out = result.stdout + result.stderr
    assert f"FAIL  {hostport}  Docker Hub registry: connection refused" in out
    assert f"this network does not let the install reach {hostport}: connection refused" in out
    assert "allow outbound HTTPS (port 443) to 127.0.0.1" in out
    assert "HTTPS_PROXY" in out
    assert "TRACEBLOC_IMAGE_REGISTRY" in out  # a blocked registry: the mirror hint
    assert_only_loopback(guard_log)


def test_blackholed_port_is_a_timeout_within_seconds(
    cluster: FakeCluster, public: netlab.Authority, backend: BackendServer, guard_log: Path
) -> None:
    with netlab.Blackhole() as hole:
        hostport = hole.url.removeprefix("https://").rstrip("/")
        env = env_for(public, backend, guard_log, site_entries(backend, ("chart repo", hole.url)))
        result, elapsed = run(cluster, "install", "--yes", **env)

    assert_stopped_before_anything(cluster, backend, result, elapsed)
    assert f"{hostport}: no answer within the time allowed (timeout)" in result.stderr
    assert elapsed > 2 * 3.0  # the blackhole was given both attempts, and no more
    assert "TRACEBLOC_IMAGE_REGISTRY" not in result.stdout + result.stderr
    assert_only_loopback(guard_log)


def test_unresolvable_name_is_a_dns_failure(
    cluster: FakeCluster, public: netlab.Authority, backend: BackendServer, guard_log: Path
) -> None:
    env = env_for(
        public,
        backend,
        guard_log,
        site_entries(backend, ("GHCR registry", "https://ghcr.tracebloc-test.invalid/v2/")),
    )
    result, elapsed = run(cluster, "install", "--yes", **env)

    assert_stopped_before_anything(cluster, backend, result, elapsed)
    assert (
        "ghcr.tracebloc-test.invalid:443: the name ghcr.tracebloc-test.invalid does not "
        "resolve (DNS)"
    ) in result.stderr
    assert_only_loopback(guard_log)


@pytest.mark.parametrize(
    "given",
    [
        pytest.param(None, id="no-credentials"),
        pytest.param("Wr0ng-" + PROXY_PASSWORD, id="wrong-password"),
    ],
)
def test_proxy_refusing_the_credentials_is_reported_as_407(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend: BackendServer,
    guard_log: Path,
    given: str | None,
) -> None:
    with netlab.ConnectProxy(credentials=("nurse-wrong", "x")) as proxy:
        env = env_for(
            public,
            backend,
            guard_log,
            site_entries(backend),
            HTTPS_PROXY=proxy.url(PROXY_USER if given else None, given),
        )
        result, elapsed = run(cluster, "install", "--yes", **env)

    assert_stopped_before_anything(cluster, backend, result, elapsed)
    assert backend.requests == []  # the proxy let nothing through
    assert f"the proxy 127.0.0.1:{proxy.port} refused its credentials (HTTP 407" in result.stderr
    assert "http://user:password@host:port" in result.stderr
    assert_only_loopback(guard_log)


def test_tls_inspecting_proxy_is_named_with_its_issuer_and_stops(
    cluster: FakeCluster,
    public: netlab.Authority,
    inspector: netlab.Authority,
    backend: BackendServer,
    guard_log: Path,
) -> None:
    with netlab.ConnectProxy(resign=inspector) as proxy:
        env = env_for(public, backend, guard_log, site_entries(backend), HTTPS_PROXY=proxy.url())
        result, elapsed = run(cluster, "install", "--yes", **env)

    assert_stopped_before_anything(cluster, backend, result, elapsed)
    assert proxy.requests == []  # TLS never verified: no request, no credential, went in
    out = result.stdout + result.stderr
    assert (
        f"TLS verification failed through the proxy 127.0.0.1:{proxy.port}: the "
        "certificate is issued by Hospital Inspect CA, which this machine does not trust "
        "(TLS inspection)"
    ) in out
    assert "TLS inspection: yes (issuer: Hospital Inspect CA)" in out
    assert "set TRACEBLOC_CA_BUNDLE to a PEM file" in out
    assert_only_loopback(guard_log)


# --- with the right variables, the same run goes on ---------------------------------------


def fresh(cluster: FakeCluster) -> FakeCluster:
    return cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()


def test_tls_inspecting_proxy_passes_once_the_bundle_is_set(
    cluster: FakeCluster,
    public: netlab.Authority,
    inspector: netlab.Authority,
    backend: BackendServer,
    guard_log: Path,
) -> None:
    fresh(cluster)
    with netlab.ConnectProxy(resign=inspector) as proxy:
        env = env_for(
            public,
            backend,
            guard_log,
            site_entries(backend),
            HTTPS_PROXY=proxy.url(),
            TRACEBLOC_CA_BUNDLE=str(inspector.pem),
        )
        result, _ = run(cluster, "install", "--yes", **env)

    assert result.returncode == 0, result.stderr
    out = result.stdout + result.stderr
    assert "TLS inspection: yes (issuer: Hospital Inspect CA)" in out
    assert f"CA bundle:      {inspector.pem} (TRACEBLOC_CA_BUNDLE)" in out
    assert "result: every host this install needs answered" in out
    assert "The tracebloc client is installed and connected." in result.stdout
    # The same CA made the credential check through the proxy verify, and reached helm.
    assert any(b"POST /api-token-auth/" in r for r in proxy.requests)
    [add] = [a for a in cluster.calls("helm") if a[:2] == ["repo", "add"]]
    assert add[-2:] == ["--ca-file", str(inspector.pem)]
    assert_only_loopback(guard_log)


def test_authenticated_proxy_is_used_and_its_password_shown_nowhere(
    cluster: FakeCluster, public: netlab.Authority, backend: BackendServer, guard_log: Path
) -> None:
    fresh(cluster)
    with netlab.ConnectProxy(credentials=(PROXY_USER, PROXY_PASSWORD)) as proxy:
        env = env_for(
            public,
            backend,
            guard_log,
            site_entries(backend),
            HTTPS_PROXY=proxy.url(PROXY_USER, PROXY_PASSWORD),
        )
        result, elapsed = run(cluster, "plan", "--json", **env)

    assert result.returncode == 0, result.stderr
    assert elapsed < STOP_WITHIN_S
    network = json.loads(result.stdout)["network"]
    assert network["stop"] is False and network["proxy"] == f"127.0.0.1:{proxy.port}"
    assert [h["status"] for h in network["hosts"]] == ["ok"]
    assert network["hosts"][0]["via_proxy"] == f"127.0.0.1:{proxy.port}"
    assert network["tls_inspection"] == "no"  # verified against this machine's own store
    assert proxy.tunnels and all(
        t.authorization and t.authorization.startswith("Basic ") for t in proxy.tunnels
    )
    for text in (result.stdout, result.stderr):
        assert PROXY_PASSWORD not in text
    log = cluster.home / ".tracebloc" / "install.log"
    assert not log.exists() or PROXY_PASSWORD not in log.read_text(encoding="utf-8")
    assert_only_loopback(guard_log)


# --- plan shows the same; strict entries; the skip; the test hook's limit ------------------


def test_plan_shows_the_report_and_the_stop_as_data(
    cluster: FakeCluster, public: netlab.Authority, backend: BackendServer, guard_log: Path
) -> None:
    fresh(cluster)
    with netlab.https_site(public, default=404) as charts:
        hostport = charts.url[len("https://") : -1]
        entries = site_entries(
            backend,
            ("charts index", charts.url + "index.yaml", "strict"),
            ("lenient site", charts.url),
        )
        result, elapsed = run(
            cluster, "plan", "--json", **env_for(public, backend, guard_log, entries)
        )
        text, _ = run(cluster, "plan", **env_for(public, backend, guard_log, entries))

    assert result.returncode == 1, result.stderr
    assert elapsed < STOP_WITHIN_S
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["exit"] == 1
    # The stop is the verdict, naming the host, with install's exit code: never "install".
    verdict = document["verdict"]
    assert (verdict["action"], verdict["exit"]) == ("network-stop", 1)
    assert hostport in verdict["reason"]
    assert text.returncode == 1
    verdicts = [line for line in text.stdout.splitlines() if "verdict:" in line]
    assert len(verdicts) == 1 and "network-stop" in verdicts[0] and hostport in verdicts[0], (
        text.stdout
    )
    network = document["network"]
    assert network["stop"] is True and network["source"] == "PF_CRITICALS"
    assert [(h["label"], h["status"], h["http_status"]) for h in network["hosts"]] == [
        ("tracebloc API (loopback)", "ok", 200),
        ("charts index", "http", 404),
        ("lenient site", "ok", 404),
    ]
    assert network["failures"] == [f"{hostport}: answered HTTP 404, not 2xx/3xx"]
    assert all(r.method == "GET" for r in backend.requests)
    assert_only_loopback(guard_log)


def test_skip_preflight_skips_the_network_checks_with_one_line(
    cluster: FakeCluster, public: netlab.Authority, backend: BackendServer, guard_log: Path
) -> None:
    fresh(cluster)
    env = env_for(
        public,
        backend,
        guard_log,
        site_entries(backend, ("x", netlab.refused_url())),
        TRACEBLOC_SKIP_PREFLIGHT="1",
    )
    result, _ = run(cluster, "plan", **env)

    assert result.returncode == 0, result.stderr
    assert "network checks skipped (TRACEBLOC_SKIP_PREFLIGHT)" in result.stdout
    assert backend.requests == []  # nothing was probed
    installed, _ = run(cluster, "install", "--yes", **env)
    assert installed.returncode == 0, installed.stderr
    skip_lines = [
        line
        for line in installed.stderr.splitlines()
        if "skipped (TRACEBLOC_SKIP_PREFLIGHT)" in line
    ]
    assert len(skip_lines) == 1 and "network" in skip_lines[0]


def test_criticals_naming_a_host_that_is_not_loopback_are_refused(
    cluster: FakeCluster, public: netlab.Authority, backend: BackendServer, guard_log: Path
) -> None:
    env = env_for(
        public, backend, guard_log, site_entries(backend, ("hub", "https://example.com/"))
    )
    result, _ = run(cluster, "install", "--yes", **env)

    assert result.returncode == 2
    assert "PF_CRITICALS is for tests only" in result.stderr
    assert backend.requests == []
    assert_only_loopback(guard_log)


def test_derived_hosts_check_the_mirror_not_docker_hub(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend: BackendServer,
    guard_log: Path,
    tmp_path: Path,
) -> None:
    """Without PF_CRITICALS the hosts come from the configuration: the loopback backend,
    no chart repository (a local chart), and the mirror instead of Docker Hub and GHCR. The
    guard refuses the mirror's lookup (it is not loopback) and writes it down: that is the
    only name the engine tried."""
    fresh(cluster)
    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("name: client\nversion: 1.0.0\n", encoding="utf-8")
    env = env_for(
        public,
        backend,
        guard_log,
        "",
        TRACEBLOC_IMAGE_REGISTRY="mirror.hospital.example:5000",
        TRACEBLOC_CHART_PATH=str(chart),
    )
    result, elapsed = run(cluster, "plan", "--json", **env)

    assert result.returncode == 1, result.stderr
    assert elapsed < STOP_WITHIN_S
    network = json.loads(result.stdout)["network"]
    assert network["source"] == "plan"
    assert [(h["kind"], h["host"], h["status"]) for h in network["hosts"]] == [
        ("backend", backend.url[len("https://") : -1], "ok"),
        ("registry", "mirror.hospital.example:5000", "dns"),
    ]
    assert any(
        "TRACEBLOC_IMAGE_REGISTRY" in hint and "mirror.hospital.example" in hint
        for hint in network["hints"]
    )
    assert (
        guard_log.read_text(encoding="utf-8").split("\n")[:-1]
        == ["lookup mirror.hospital.example"] * 2
    )  # two attempts, nothing else looked up


def test_curl_ca_bundle_is_the_ca_when_traceblocs_is_unset(
    cluster: FakeCluster,
    public: netlab.Authority,
    inspector: netlab.Authority,
    backend: BackendServer,
    guard_log: Path,
) -> None:
    fresh(cluster)
    with netlab.ConnectProxy(resign=inspector) as proxy:
        env = env_for(
            public,
            backend,
            guard_log,
            site_entries(backend),
            HTTPS_PROXY=proxy.url(),
            CURL_CA_BUNDLE=str(inspector.pem),
        )
        result, _ = run(cluster, "plan", "--json", **env)

    assert result.returncode == 0, result.stderr
    network = json.loads(result.stdout)["network"]
    assert network["ca_bundle"] == {"variable": "CURL_CA_BUNDLE", "path": str(inspector.pem)}
    assert network["tls_inspection"] == "yes" and network["issuer"] == "Hospital Inspect CA"
    assert network["hosts"][0]["trusted_by"] == "CURL_CA_BUNDLE"
    assert_only_loopback(guard_log)


def test_install_json_carries_the_report_on_a_stop(
    cluster: FakeCluster, public: netlab.Authority, backend: BackendServer, guard_log: Path
) -> None:
    url = netlab.refused_url()
    env = env_for(public, backend, guard_log, site_entries(backend, ("Docker Hub registry", url)))
    result, elapsed = run(cluster, "install", "--yes", "--json", **env)

    assert_stopped_before_anything(cluster, backend, result, elapsed)
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["exit"] == 1
    assert document["network"]["stop"] is True
    assert [h["status"] for h in document["network"]["hosts"]] == ["ok", "refused"]
    assert_only_loopback(guard_log)


def test_a_tool_to_download_brings_its_host_and_nothing_is_downloaded_on_a_stop(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend: BackendServer,
    guard_log: Path,
    tmp_path: Path,
) -> None:
    """kubectl and helm are missing: the tools mirror they would come from is probed with
    the rest (derived hosts: the backend, the registry mirror, the tools' host; a local
    chart), and the unreachable registry mirror stops the run before either is fetched."""
    from tests.fakes.mirror import LoopbackTls, MirrorServer
    from tests.test_cli_tools import World

    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("name: client\nversion: 1.0.0\n", encoding="utf-8")
    registry = netlab.refused_url().removeprefix("https://").rstrip("/")
    tls = LoopbackTls(tmp_path)
    with MirrorServer(tls) as mirror:
        world = World(cluster, mirror, tls)
        tools_env = {**world.env(), "TRACEBLOC_SKIP_PREFLIGHT": ""}
        env = env_for(
            public,
            backend,
            guard_log,
            "",
            **tools_env,
            TRACEBLOC_IMAGE_REGISTRY=registry,
            TRACEBLOC_CHART_PATH=str(chart),
        )
        result, elapsed = run(cluster, "install", "--yes", "--json", **env)

    assert_stopped_before_anything(cluster, backend, result, elapsed)
    hosts = json.loads(result.stdout)["network"]["hosts"]
    tools_host = mirror.url.removeprefix("https://").rstrip("/")
    assert [(h["kind"], h["host"], h["status"]) for h in hosts] == [
        ("backend", backend.url[len("https://") : -1], "ok"),
        ("registry", registry, "refused"),
        ("tool", tools_host, "ok"),
    ]
    assert set(mirror.requests) <= {""}  # the probe's GET of the root; no file was fetched
    assert world.installed() == []
    assert_only_loopback(guard_log)
