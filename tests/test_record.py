"""The install record (decide/record.py, edges/record.py) as the commands follow it: `plan`
and `diagnose` look where the last install put the client and say so once; an option or
TB_NAMESPACE wins; a record that is stale, unreadable or not a record is reported, never
followed; nor is one naming a namespace or release the client may not use."""

from __future__ import annotations

import json
import os
import sys
import tarfile

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.test_cli_after import data_dir, healthy, write_record
from tests.test_cli_install import env_for, fresh

FOLLOWED = "using the install record"


def planned(cluster: FakeCluster, backend: BackendServer, *args: str, **extra: str) -> tuple:
    result = cluster.run("plan", "--json", *args, **env_for(backend, **extra))
    return result, json.loads(result.stdout) if result.stdout.strip() else {}


def test_plan_follows_the_record_and_says_so_once(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    write_record(cluster, release="tracebloc", namespace="lab-two")
    result, plan = planned(cluster, backend)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count(FOLLOWED) == 1, result.stderr
    assert (plan["target"]["namespace"], plan["target"]["release"]) == ("lab-two", "tracebloc")
    # What plan read is what the record named: helm was asked about lab-two, never tracebloc.
    scoped = [a for a in cluster.calls("helm") if "-n" in a]
    assert scoped and {a[a.index("-n") + 1] for a in scoped} == {"lab-two"}


def test_a_recorded_release_named_apart_from_its_namespace_is_kept(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    write_record(cluster, release="radiology", namespace="lab-two")
    _, plan = planned(cluster, backend)
    assert (plan["target"]["namespace"], plan["target"]["release"]) == ("lab-two", "radiology")


@pytest.mark.parametrize(
    ("args", "extra", "namespace"),
    [
        pytest.param(("-n", "other"), {}, "other", id="namespace-option"),
        pytest.param((), {"TB_NAMESPACE": "other"}, "other", id="TB_NAMESPACE"),
        pytest.param(("--context", "office"), {}, "tracebloc", id="context-option"),
    ],
)
def test_an_option_wins_over_the_record(
    cluster: FakeCluster,
    backend: BackendServer,
    args: tuple[str, ...],
    extra: dict[str, str],
    namespace: str,
) -> None:
    fresh(cluster)
    write_record(cluster, release="tracebloc", namespace="lab-two")
    result, plan = planned(cluster, backend, *args, **extra)
    assert result.returncode == 0, result.stderr
    assert "install record" not in result.stderr
    assert plan["target"]["namespace"] == namespace


def test_plan_reports_a_record_whose_context_is_gone_and_does_not_follow_it(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    write_record(cluster, release="tracebloc", namespace="lab-two", context="gone")
    result, plan = planned(cluster, backend)
    assert "names kube context gone" in result.stderr and FOLLOWED not in result.stderr
    assert "-n lab-two" in result.stderr  # the way to reach it on purpose is named
    assert plan["target"]["namespace"] == "tracebloc"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        pytest.param(b"{not json", "it is not JSON", id="not-json"),
        pytest.param(b'{"version": 7}', "not a version 1 install record", id="other-version"),
        pytest.param(
            json.dumps({"version": 1, "namespace": ["x"]}).encode(),
            "a field is missing or not text",
            id="wrong-types",
        ),
        pytest.param(b"\xff\xfe\x00", "it is not JSON", id="not-text"),
    ],
)
def test_a_file_that_is_not_a_record_is_reported_and_the_defaults_hold(
    cluster: FakeCluster, backend: BackendServer, content: bytes, said: str
) -> None:
    fresh(cluster)
    path = data_dir(cluster) / "install.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    result, plan = planned(cluster, backend)
    assert result.returncode == 0, result.stderr
    assert said in result.stderr and "is not used" in result.stderr
    assert plan["target"]["namespace"] == "tracebloc"
    assert path.read_bytes() == content  # what is not the engine's record is left as it was


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
def test_a_fifo_in_the_records_place_neither_hangs_nor_is_followed(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    path = data_dir(cluster) / "install.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    result, plan = planned(cluster, backend)
    assert result.returncode == 0, result.stderr
    assert "not a regular file" in result.stderr and FOLLOWED not in result.stderr
    assert plan["target"]["namespace"] == "tracebloc"


@pytest.mark.parametrize(
    ("release", "namespace"),
    [
        pytest.param("tracebloc", "kube-system", id="kube-system"),
        pytest.param("tracebloc", "default", id="default"),
        pytest.param("default", "lab-two", id="release-default"),
        pytest.param("tracebloc", "Lab_Two", id="not-a-label"),
    ],
)
def test_a_record_naming_a_namespace_the_client_may_not_use_is_not_followed(
    cluster: FakeCluster, backend: BackendServer, release: str, namespace: str
) -> None:
    fresh(cluster)
    write_record(cluster, release=release, namespace=namespace)
    result, plan = planned(cluster, backend)
    assert result.returncode == 0, result.stderr
    assert "is not used" in result.stderr and FOLLOWED not in result.stderr, result.stderr
    assert (plan["target"]["namespace"], plan["target"]["release"]) == ("tracebloc", "tracebloc")
    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    applied = [a for a in cluster.calls("helm") if a[:2] == ["upgrade", "--install"]]
    assert applied, cluster.calls("helm")
    # Nothing went where the record pointed: the install used the default place.
    for argv in applied:
        assert argv[2] == "tracebloc" and argv[argv.index("--namespace") + 1] == "tracebloc"


def test_diagnose_follows_the_record(cluster: FakeCluster) -> None:
    healthy(cluster)
    write_record(cluster, release="tracebloc", namespace="lab-two")
    result = cluster.run("diagnose")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count(FOLLOWED) == 1, result.stderr
    scoped = [a for a in cluster.calls("kubectl") + cluster.calls("helm") if "-n" in a]
    assert scoped and {a[a.index("-n") + 1] for a in scoped} == {"lab-two"}
    bundles = sorted(data_dir(cluster).glob("tracebloc-diagnose-*.tar.gz"))
    assert bundles, list(data_dir(cluster).iterdir())
    with tarfile.open(bundles[-1]) as bundle:
        member = next(m for m in bundle.getmembers() if m.name.endswith("/status.json"))
        extracted = bundle.extractfile(member)
        assert extracted is not None
        status = json.load(extracted)
    assert status["release"]["namespace"] == "lab-two"  # the bundle describes what was followed
