"""A bare laptop: Docker and nothing else (no kubectl, helm or k3d on PATH, no kube
context). `install` fetches its own kubectl, helm and k3d from a mirror (a test manifest
pins what it serves), creates the local cluster and connects; every kubectl, helm and k3d
call of the run is made by the copies in the engine's tools directory.

The CLI runs as a process (or the frozen binary) against fake docker/kubectl/helm/k3d.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.localcluster import creatable, docker_running, machine_without_cluster
from tests.fakes.mirror import LoopbackTls, MirrorServer
from tests.test_cli_install import env_for, fresh
from tests.test_cli_tools import World

ENGINE_TOOLS = ("kubectl", "helm", "k3d")


@pytest.fixture
def laptop(cluster: FakeCluster, tmp_path: Path) -> Iterator[World]:
    """PATH holds docker only; the mirror serves the three tools the engine pins."""
    tls = LoopbackTls(tmp_path)
    with MirrorServer(tls) as mirror:
        creatable(docker_running(machine_without_cluster(fresh(cluster))))
        world = World(cluster, mirror, tls)  # takes kubectl and helm off PATH, serves them
        cluster.remove("k3d")
        world.serve("k3d")
        yield world


def on_path(cluster: FakeCluster) -> list[str]:
    return sorted(os.listdir(cluster.bin))


def test_a_bare_laptop_installs_to_connected_with_the_engines_own_tools(
    laptop: World, backend: BackendServer
) -> None:
    cluster = laptop.cluster
    assert [name.removesuffix(".exe") for name in on_path(cluster)] == ["docker"]

    result = cluster.run("install", "--yes", **laptop.env(**env_for(backend)))

    assert result.returncode == 0, result.stderr
    assert "installed and connected" in result.stdout + result.stderr
    calls = [e for e in cluster.call_log() if e["tool"] in ENGINE_TOOLS]
    # The whole way: the cluster created, its API waited for, helm, the readiness wait.
    made = {(e["tool"], e["argv"][0], e["argv"][1]) for e in calls if len(e["argv"]) > 1}
    assert {
        ("k3d", "cluster", "create"),
        ("k3d", "kubeconfig", "merge"),
        ("kubectl", "cluster-info", "--request-timeout=5s"),
        ("kubectl", "get", "nodes"),
        ("helm", "upgrade", "--install"),
        ("kubectl", "config", "set-context"),
        ("kubectl", "get", "deployments,statefulsets,daemonsets,pods,events"),
    } <= made
    tools_dir = os.path.realpath(laptop.tools_dir)
    strangers = {
        (e["tool"], e["exe"])
        for e in calls
        if os.path.dirname(os.path.realpath(e["exe"])) != tools_dir
    }
    assert strangers == set()


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("status",), id="status"),
        pytest.param(("uninstall", "--yes"), id="uninstall"),
    ],
)
def test_status_and_uninstall_on_a_bare_laptop_download_nothing_and_say_where_to_get_them(
    laptop: World, command: tuple[str, ...]
) -> None:
    cluster = laptop.cluster

    result = cluster.run(*command, **laptop.env())

    assert result.returncode != 0
    said = result.stdout + result.stderr
    assert "helm is not on this machine" in said and "TRACEBLOC_HELM" in said
    assert "tracebloc-installer install` downloads the pinned helm" in said
    assert laptop.mirror.requests == [] and laptop.installed() == []
    assert [e["argv"] for e in cluster.call_log() if e["tool"] in ENGINE_TOOLS] == []


def test_the_end_of_a_bare_laptop_run_says_what_was_seen_and_what_to_do_next(
    laptop: World, backend: BackendServer
) -> None:
    result = laptop.cluster.run("install", "--yes", **laptop.env(**env_for(backend)))

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "installed and connected" in out
    assert "connected:      every workload of the release reported ready" in out
    assert "ready:          Deployment" in out  # the signal, as seen
    for step in ("https://ai.tracebloc.io", "https://github.com/tracebloc/cli/releases"):
        assert step in out
    # As it can be pasted here: this program by its path when tracebloc-installer is not on
    # PATH; the data step only where the tracebloc CLI is (it is not, here).
    assert re.search(r"^  \S+( -m installer)? status ", out, re.M), out
    assert "tracebloc data ingest" not in out


def test_the_fetched_tools_are_linked_where_the_shell_looks_and_the_path_line_is_given(
    laptop: World, backend: BackendServer
) -> None:
    cluster = laptop.cluster
    env = laptop.env(**env_for(backend, SHELL="/bin/bash", TRACEBLOC_NO_AUTOSTART="1"))
    planned = cluster.run("plan", **env)
    local_bin = cluster.home / ".local" / "bin"
    assert f"ln -s {laptop.tools_dir}" in planned.stdout and not local_bin.exists()

    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 0, result.stderr
    for name in ENGINE_TOOLS:
        assert (local_bin / name).is_symlink()
        assert os.path.realpath(local_bin / name) == os.path.realpath(Path(laptop.tools_dir) / name)
    # The home as the shell names it: the line works pasted as it is.
    assert 'run `export PATH="$HOME/.local/bin:$PATH"` for kubectl, helm, k3d' in result.stdout
    # No restart policy (TRACEBLOC_NO_AUTOSTART): the reboot line names k3d as this shell
    # runs it, by its full path, since the link's directory is not on PATH yet.
    assert (
        result.stdout.rstrip()
        .splitlines()[-1]
        .endswith(f"then start the cluster: {laptop.tools_dir}{os.sep}k3d cluster start tracebloc")
    )
