"""GitHub release downloads in the network preflight: github.com answers each with a redirect
to its release-asset host, so that host is probed whenever such a download is planned (k3d,
a tool pinned to a GitHub release, the winget bundle); and `install` on the local-cluster
path reads `docker info` and the GPU once (the preflight's reads are the survey's and the
cluster reads')."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from installer.decide import endpoints, winget
from tests.fakes import netlab
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import REPO, FakeCluster
from tests.fakes.localcluster import creatable, docker_running, machine_without_cluster
from tests.test_cli_install import fresh
from tests.test_network_runtime_hosts import derived, lookups

RELEASE_ASSETS = "release-assets.githubusercontent.com:443"
PINS = json.loads((REPO / "installer" / "data" / "tools.json").read_text(encoding="utf-8"))
K3D_URL = PINS["tools"]["k3d"]["platforms"]["linux-x86_64"]["url"]


def tool_hosts(urls: list[str], *, runtime: list[str] | None = None) -> list[str]:
    found = endpoints.endpoints(
        "https://api.tracebloc.io/",
        chart_repo=None,
        mirror="m.example",
        tool_urls=urls,
        runtime=runtime or [],
    )
    return [e.hostport for e in found if e.kind in (endpoints.Kind.TOOL, endpoints.Kind.RUNTIME)]


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        pytest.param([K3D_URL], ["github.com:443", RELEASE_ASSETS], id="k3d-pinned-github-release"),
        pytest.param(
            ["https://get.helm.sh/helm-v4.2.3-linux-amd64.tar.gz"],
            ["get.helm.sh:443"],
            id="helm-from-get-helm-sh-no-redirect",
        ),
        pytest.param(
            ["https://github.com/helm/helm/releases/download/v4.2.3/helm.tar.gz", K3D_URL],
            ["github.com:443", RELEASE_ASSETS],
            id="helm-and-k3d-from-github-once",
        ),
        pytest.param(
            ["https://tools.hospital.example/m/k3d/v5.9.0/k3d-linux-amd64"],
            ["tools.hospital.example:443"],
            id="tools-mirror-no-github",
        ),
        pytest.param(
            ["https://github.com/k3d-io/k3d/archive/v5.9.0.tar.gz"],
            ["github.com:443"],
            id="github-but-not-a-release-download",
        ),
    ],
)
def test_a_github_release_download_brings_the_redirect_host(
    urls: list[str], expected: list[str]
) -> None:
    assert tool_hosts(urls) == expected


def test_the_redirect_host_is_public_and_a_tool_host() -> None:
    found = endpoints.endpoints(
        "https://api.tracebloc.io/", chart_repo=None, mirror="m.example", tool_urls=[K3D_URL]
    )
    redirect = [e for e in found if e.hostport == RELEASE_ASSETS]
    assert len(redirect) == 1 and redirect[0].kind is endpoints.Kind.TOOL
    assert redirect[0].well_known and not redirect[0].strict


def test_the_winget_bundle_brings_the_redirect_host_among_the_runtime_hosts() -> None:
    assert tool_hosts([], runtime=[winget.URL]) == ["github.com:443", RELEASE_ASSETS]
    # Homebrew's clone of github.com is no release download: no redirect host.
    assert tool_hosts([], runtime=["https://github.com/"]) == ["github.com:443"]


def test_every_pinned_github_download_is_seen_as_a_release_download() -> None:
    """The rule covers what the engine actually downloads from GitHub."""
    urls = [
        p["url"]
        for tool in PINS["tools"].values()
        for p in tool["platforms"].values()
        if "github.com" in p["url"]
    ]
    assert urls and all(endpoints.github_release(url) for url in urls)
    assert endpoints.github_release(winget.URL)


# --- the CLI as a process ------------------------------------------------------------------


# The loopback guard is a sitecustomize: a frozen binary loads none.
guarded = pytest.mark.skipif(
    bool(os.environ.get("TB_INSTALLER_BIN", "").strip()),
    reason="the loopback guard cannot load into a frozen binary",
)


@guarded
def test_plan_without_k3d_probes_github_and_its_release_asset_host(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend_site: BackendServer,
    registry: BackendServer,
    tmp_path: Path,
) -> None:
    """Docker runs, k3d is nowhere: install would download it from its GitHub release, so
    both github.com and the host the download is redirected to are probed (the loopback
    guard refuses both names and writes each lookup down)."""
    machine_without_cluster(fresh(cluster))
    cluster.remove("k3d")
    guard = tmp_path / "netguard.log"
    # No tools mirror: k3d would come from its official, pinned URL.
    env = derived(
        cluster,
        public,
        backend_site,
        registry,
        guard,
        tmp_path,
        TRACEBLOC_TOOLS_MIRROR="",
        TB_TEST_TOOLS_MANIFEST="",
    )
    result = cluster.run("plan", "--json", **env)

    assert result.returncode == 1, result.stderr
    hosts = json.loads(result.stdout)["network"]["hosts"]
    assert [(h["kind"], h["host"], h["status"]) for h in hosts if h["kind"] == "tool"] == [
        ("tool", "github.com:443", "dns"),
        ("tool", RELEASE_ASSETS, "dns"),
    ]
    assert sorted(set(lookups(guard))) == [
        "lookup github.com",
        "lookup release-assets.githubusercontent.com",
    ]


@guarded
@pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime fakes")
def test_install_reads_docker_info_and_the_gpu_once(
    cluster: FakeCluster,
    public: netlab.Authority,
    backend_site: BackendServer,
    registry: BackendServer,
    tmp_path: Path,
) -> None:
    """The network preflight needs `docker info` to know whether Docker will be installed,
    and the GPU to know whether NVIDIA's registry is; the local-cluster survey and the
    cluster reads use those reads instead of asking Docker and nvidia-smi again."""
    from tests.fakes.gpu_host import advertises
    from tests.fakes.runtime_host import linux_host

    creatable(machine_without_cluster(fresh(cluster)))
    cluster.install("nvidia-smi")
    cluster.on("nvidia-smi", "-L", stdout="GPU 0: NVIDIA RTX A4000 (UUID: GPU-1)\n")
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
    docker_running(cluster, runtimes=("nvidia", "runc"))  # the cluster can be given the GPU
    cluster.on("docker", "run", "--gpus", stdout="NVIDIA-SMI 550.54  Driver Version: 550.54\n")
    advertises(cluster)  # after helm the node advertises the card (the GPU is verified)
    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 0, result.stderr
    calls = [(e["tool"], e["argv"]) for e in cluster.call_log()]
    create = calls.index(
        next(c for c in calls if c[0] == "k3d" and c[1][:2] == ["cluster", "create"])
    )
    infos = [c for c in calls[:create] if c[0] == "docker" and c[1][:1] == ["info"]]
    assert len(infos) == 1
    assert cluster.calls("nvidia-smi") == [["-L"]]
    # ... and what was read once is what the cluster and the values got.
    assert "--gpus=all" in calls[create][1]
    values = yaml.safe_load(
        (cluster.home / ".tracebloc" / "values.yaml").read_text(encoding="utf-8")
    )
    assert values["env"]["GPU_LIMITS"] == values["env"]["GPU_REQUESTS"] == "nvidia.com/gpu=1"
    assert lookups(guard) == []
