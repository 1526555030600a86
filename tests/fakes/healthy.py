"""A client this engine installed earlier, still healthy: the state a re-run finds.

`make_healthy` runs a first `install --yes` against the fakes, then scripts what helm would
show afterwards: the release `deployed` at chart `client-<version>` with the values that run
wrote, the tracebloc repository configured and its index naming `<version>` as newest, the
workloads ready. The call log is emptied, so a test sees only the re-run's calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.fakes import workloads
from tests.fakes.cluster import FakeCluster, node, release_row

REPO_URL = "https://tracebloc.github.io/client"
# Every call a re-run that changes nothing may make: reads of the cluster, and the
# refresh of the local copy of the repository's index. Anything else changes something.
READ_ONLY = (
    ("kubectl", "version"),
    ("kubectl", "config", "view"),
    ("kubectl", "get"),
    ("helm", "version"),
    ("helm", "list"),
    ("helm", "status"),
    ("helm", "get", "values"),
    ("helm", "get", "manifest"),
    ("helm", "repo", "list"),
    ("helm", "repo", "update"),
    ("helm", "search", "repo"),
    ("tracebloc", "version"),
)


def values_path(cluster: FakeCluster) -> Path:
    return cluster.home / ".tracebloc" / "values.yaml"


def search_answer(version: str, chart: str = "tracebloc/client") -> str:
    return json.dumps(
        [
            {
                "name": chart,
                "version": version,
                "app_version": version,
                "description": "tracebloc client",
            }
        ]
    )


def make_healthy(
    cluster: FakeCluster, env: dict[str, str], *, version: str = "1.4.2", release: str = "tracebloc"
) -> dict[str, Any]:
    """Returns the values the first run wrote (what helm now stores for the release)."""
    cluster.nodes(node("laptop", "8", "16Gi")).installed().release_absent().installable()
    first = cluster.run("install", "--yes", **env)
    assert first.returncode == 0, first.stderr
    values = yaml.safe_load(values_path(cluster).read_bytes())
    cluster.installed(release_row(release, chart=f"client-{version}"))
    cluster.values_of(release, release, values)
    cluster.status_of(release, "deployed")
    cluster.on("helm", "repo", "list", stdout=json.dumps([{"name": "tracebloc", "url": REPO_URL}]))
    cluster.on("helm", "search", "repo", stdout=search_answer(version))
    cluster.log_path.unlink()
    return values


def mutating_calls(cluster: FakeCluster) -> list[list[str]]:
    """Each logged call that is not a read (tool name first)."""
    out = []
    for entry in cluster.call_log():
        call = [entry["tool"], *entry["argv"]]
        if not any(call[: len(prefix)] == list(prefix) for prefix in READ_ONLY):
            out.append(call)
    return out


def without_jobs_manager(cluster: FakeCluster, release: str = "tracebloc", **kwargs: Any) -> None:
    """tracebloc-jobs-manager deleted: the manifest still defines it, the namespace lacks it
    (`times=N`: for that many looks)."""
    items = workloads.client(release=release, namespace=release)
    cluster.workloads(*[i for i in items if "jobs-manager" not in i["metadata"]["name"]], **kwargs)
    cluster.manifest(release, *items)
