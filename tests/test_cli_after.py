"""`status`, `diagnose` and `uninstall` as processes against fake kubectl/helm/k3d.

`status` exits 0 only when healthy; `diagnose` writes one bundle in which no password
survives, whatever read it; `uninstall` removes the release and keeps the data unless told.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes import workloads
from tests.fakes.cluster import KUBECONFIG_OF_A_CLUSTER, FakeCluster, node, release_row
from tests.fakes.healthy import without_jobs_manager
from tests.fakes.workloads import pod

PASSWORD = "Cl1ent-P4ss:#w0rd"
REGISTRY_PASSWORD = "Reg1stry-S3cret@x"
PROXY_PASSWORD = "Pr0xy-S3cret:@y"
OLD_RELEASE_PASSWORD = "0ld-Rel3ase-P4ss"  # only the installed release knows this one
SECRETS = (PASSWORD, REGISTRY_PASSWORD, PROXY_PASSWORD, OLD_RELEASE_PASSWORD)
SIZED = {"env": {"RESOURCE_LIMITS": "cpu=6,memory=12Gi", "RESOURCE_PROVENANCE": "installer"}}


def release_listed(cluster: FakeCluster, *rows: dict[str, Any]) -> FakeCluster:
    """`helm list -n <ns> --filter ^<release>$` answers with these rows."""
    return cluster.on("helm", "list", "-n", "tracebloc", "--filter", stdout=json.dumps(list(rows)))


def healthy(cluster: FakeCluster) -> FakeCluster:
    release_listed(cluster, release_row())
    cluster.values_of("tracebloc", "tracebloc", SIZED)
    cluster.nodes(node("laptop", "8", "16Gi"))
    return cluster.workloads(*workloads.client())


def data_dir(cluster: FakeCluster) -> Path:
    return cluster.home / ".tracebloc"


# --- status ------------------------------------------------------------------------------


def test_status_of_a_healthy_client_exits_0(cluster: FakeCluster) -> None:
    healthy(cluster)
    result = cluster.run("status", "--json")

    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["healthy"] is True and doc["problems"] == []
    assert doc["release"] == {
        "name": "tracebloc",
        "namespace": "tracebloc",
        "state": "deployed",
        "chart": "client-1.4.2",
        "chart_version": "1.4.2",
    }
    assert doc["training"] == {"size": "cpu=6,memory=12Gi", "provenance": "installer"}
    assert (doc["workloads"]["ready"], doc["workloads"]["total"]) == (3, 3)
    assert doc["cluster"] == {"reachable": True, "nodes": 1}
    assert doc["tools"]["helm"] and doc["tools"]["kubectl"]
    # One look at the namespace, not one call per workload.
    assert len([a for a in cluster.calls("kubectl") if a[:2] == ["get", workloads.KINDS]]) == 1


def test_status_with_a_workload_down_exits_1_and_names_it(cluster: FakeCluster) -> None:
    healthy(cluster).workloads(*workloads.client(ready=2))
    result = cluster.run("status")

    assert result.returncode == 1
    assert "workloads: 2 of 3 ready" in result.stdout
    assert "Deployment tracebloc-requests-proxy is not ready (0 of 1)" in result.stdout
    assert "not healthy" in result.stdout


@pytest.mark.parametrize(
    ("break_it", "said"),
    [
        pytest.param(
            lambda c: c.workloads(*workloads.scaled_to_zero(workloads.client())),
            "Deployment tracebloc-jobs-manager is scaled to 0 replicas",
            id="scaled-to-0",
        ),
        pytest.param(
            without_jobs_manager,
            "Deployment tracebloc-jobs-manager is missing (the release defines it)",
            id="jobs-manager-deleted",
        ),
        pytest.param(
            lambda c: c.workloads(
                *workloads.client(),
                workloads.daemonset("tracebloc-resource-monitor", "monitor", scheduled=0),
            ),
            "DaemonSet tracebloc-resource-monitor schedules no pod",
            id="daemonset-no-pod",
        ),
        pytest.param(
            lambda c: c.on("helm", "get", "manifest", rc=1, stderr="Error: boom\n"),
            "the workloads the release defines could not be read",
            id="manifest-unreadable",
        ),
    ],
)
def test_status_needs_positive_evidence_and_names_the_workload(
    cluster: FakeCluster, break_it: Any, said: str
) -> None:
    healthy(cluster)
    break_it(cluster)
    result = cluster.run("status")
    assert result.returncode == 1, result.stdout
    assert said in result.stdout
    assert "not healthy" in result.stdout


def test_status_with_the_cluster_down_exits_1(cluster: FakeCluster) -> None:
    refused = (
        "Unable to connect to the server: dial tcp 127.0.0.1:6443: connect: connection refused\n"
    )
    healthy(cluster)
    cluster.on("kubectl", "get", rc=1, stderr=refused)
    cluster.on("helm", rc=1, stderr="Error: Kubernetes cluster unreachable\n")
    result = cluster.run("status", "--json")

    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["cluster"]["reachable"] is False and "connection refused" in doc["cluster"]["reason"]
    assert doc["release"]["state"] == "unreadable"
    assert doc["healthy"] is False


def test_status_without_a_release_exits_1(cluster: FakeCluster) -> None:
    healthy(cluster)
    release_listed(cluster)
    cluster.release_absent().workloads()
    result = cluster.run("status", "--json")

    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["release"]["state"] == "absent"
    assert "no release tracebloc in namespace tracebloc" in doc["problems"]


# --- diagnose ------------------------------------------------------------------------------


def _members(bundle: Path) -> dict[str, bytes]:
    """Each file of the bundle, decompressed, by its name under the top folder."""
    if bundle.suffix == ".zip":
        with zipfile.ZipFile(bundle) as archive:
            return {n.split("/", 1)[1]: archive.read(n) for n in archive.namelist()}
    with tarfile.open(bundle, "r:gz") as tar:
        return {
            m.name.split("/", 1)[1]: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def test_diagnose_bundle_holds_everything_and_no_password(cluster: FakeCluster) -> None:
    healthy(cluster)
    crashing = pod(
        "tracebloc-jobs-manager-1",
        "manager",
        "tracebloc/jobs-manager:1.4.2",
        waiting="CrashLoopBackOff",
        restarts=2,
        pulled=True,
        container="jobs-manager",
    )
    cluster.workloads(*workloads.client(manager=crashing))
    # Every source that could echo a secret does: a release carrying an older password, its
    # logs, helm's text, an install log written before redaction existed.
    cluster.values_of("tracebloc", "tracebloc", {**SIZED, "clientPassword": OLD_RELEASE_PASSWORD})
    cluster.on(
        "kubectl",
        "logs",
        stdout=(
            f"connecting as client with {PASSWORD} via http://u:{PROXY_PASSWORD}@proxy:3128\n"
            f"old: {OLD_RELEASE_PASSWORD}\n"
        ),
    )
    cluster.on("helm", "status", stdout=f"NAME: tracebloc\nSTATUS: deployed\nNOTES: {PASSWORD}\n")
    cluster.on("helm", "history", stdout="REVISION STATUS\n1 deployed\n")
    data = data_dir(cluster)
    data.mkdir(parents=True)
    (data / "install.log").write_text(f"old line {REGISTRY_PASSWORD}\n", encoding="utf-8")
    (data / "values.yaml").write_text(
        yaml.safe_dump(
            {
                "clientId": "client-7f3a",
                "clientPassword": PASSWORD,
                "dockerRegistry": {"username": "bot", "password": REGISTRY_PASSWORD},
                "env": {"HTTP_PROXY_HOST": "proxy", "HTTP_PROXY_PASSWORD": PROXY_PASSWORD},
            }
        ),
        encoding="utf-8",
    )

    result = cluster.run(
        "diagnose",
        "--json",
        TRACEBLOC_CLIENT_PASSWORD=PASSWORD,
        TRACEBLOC_REGISTRY_USERNAME="bot",
        TRACEBLOC_REGISTRY_PASSWORD=REGISTRY_PASSWORD,
        HTTPS_PROXY=f"http://u:{PROXY_PASSWORD}@proxy:3128",
    )

    assert result.returncode == 0, result.stderr
    bundle = Path(json.loads(result.stdout)["bundle"])
    assert bundle.parent == data
    assert bundle.name.endswith(".zip" if sys.platform == "win32" else ".tar.gz")
    members = _members(bundle)
    assert {
        "status.json",
        "probe.json",
        "plan.json",
        "helm-status.txt",
        "helm-history.txt",
        "pods.json",
        "install.log",
        "values.yaml",
        "collection.json",
    } <= set(members)
    assert "logs/tracebloc-jobs-manager-1.jobs-manager.log" in members
    assert "logs/tracebloc-jobs-manager-1.jobs-manager.previous.log" in members
    assert yaml.safe_load(members["values.yaml"])["clientPassword"] == "********"
    assert (
        json.loads(members["pods.json"])["pods"][1]["containers"][0]["waiting"]
        == "CrashLoopBackOff"
    )
    # Every byte: the compressed file, the tar stream, each member, and what was printed.
    raw = bundle.read_bytes()
    unpacked = raw if bundle.suffix == ".zip" else gzip.decompress(raw)
    streams = [raw, unpacked, *members.values(), result.stdout.encode(), result.stderr.encode()]
    for secret in SECRETS:
        for stream in streams:
            assert secret.encode() not in stream
    assert b"********" in members["install.log"]


def test_diagnose_with_nothing_reachable_still_writes_a_bundle(cluster: FakeCluster) -> None:
    cluster.remove("kubectl")
    cluster.on("helm", rc=1, stderr="Error: Kubernetes cluster unreachable\n")
    result = cluster.run("diagnose")

    assert result.returncode == 0, result.stderr
    path = Path(result.stdout.split("support bundle written: ", 1)[1].splitlines()[0])
    members = _members(path)
    status = json.loads(members["status.json"])
    assert status["healthy"] is False and status["tools"]["kubectl"] is None
    assert "install.log: not found" in json.loads(members["collection.json"])["notes"]


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need no privilege on POSIX")
def test_diagnose_ships_no_file_a_link_in_the_data_directory_points_at(
    cluster: FakeCluster,
) -> None:
    """`install.log` and `values.yaml` made links to the person's AWS credentials: the bundle
    notes each link and holds nothing of what they point at."""
    healthy(cluster)
    aws = cluster.home / ".aws" / "credentials"
    aws.parent.mkdir(parents=True)
    aws.write_text("[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    data = data_dir(cluster)
    data.mkdir(parents=True)
    (data / "install.log").symlink_to(aws)
    (data / "values.yaml").symlink_to(aws)

    result = cluster.run("diagnose", "--json")

    assert result.returncode == 0, result.stderr
    bundle = Path(json.loads(result.stdout)["bundle"])
    members = _members(bundle)
    assert "install.log" not in members and "values.yaml" not in members
    notes = json.loads(members["collection.json"])["notes"]
    assert any(n.startswith("install.log: a symbolic link") for n in notes), notes
    assert any(n.startswith("values.yaml: a symbolic link") for n in notes), notes
    raw = gzip.decompress(bundle.read_bytes())
    assert b"wJalrXUtnFEMI" not in raw and b"aws_secret_access_key" not in raw


def test_bundle_format_by_os() -> None:
    from installer.edges.bundle import archive

    files = [("a.txt", b"hello"), ("logs/b.log", b"world")]
    zipped = zipfile.ZipFile(io.BytesIO(archive("top", files, zip_format=True, mtime=0.0 + 1e9)))
    assert {n: zipped.read(n) for n in zipped.namelist()} == {
        "top/a.txt": b"hello",
        "top/logs/b.log": b"world",
    }
    with tarfile.open(
        fileobj=io.BytesIO(archive("top", files, zip_format=False, mtime=1e9))
    ) as tar:
        assert sorted(tar.getnames()) == ["top/a.txt", "top/logs/b.log"]


# --- uninstall -----------------------------------------------------------------------------


def pvc(name: str, release: str = "tracebloc") -> dict[str, Any]:
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/instance": release},
            "annotations": {
                "meta.helm.sh/release-name": release,
                "meta.helm.sh/release-namespace": "tracebloc",
            },
        },
    }


def pv(name: str, release: str = "tracebloc", claim: str = "client-pvc") -> dict[str, Any]:
    return {
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/instance": release},
            "annotations": {
                "meta.helm.sh/release-name": release,
                "meta.helm.sh/release-namespace": "tracebloc",
            },
        },
        "spec": {"claimRef": {"name": claim, "namespace": "tracebloc"}},
    }


def removable(cluster: FakeCluster) -> FakeCluster:
    release_listed(cluster, release_row())
    cluster.on(
        "kubectl",
        "get",
        "persistentvolumeclaims",
        stdout=workloads.listing(
            pvc("client-pvc"), pvc("client-logs-pvc"), pvc("someone-elses", release="other")
        ),
    )
    cluster.on(
        "kubectl",
        "get",
        "persistentvolumes",
        stdout=workloads.listing(
            pv("client-mysql-pv"),
            pv("client-logs-pv", claim="client-logs-pvc"),
            pv("their-pv", release="other"),
        ),
    )
    # Once deleted, a name is no longer there (`--ignore-not-found` prints nothing).
    cluster.on("kubectl", "get", "persistentvolumeclaims", "--ignore-not-found", stdout="")
    cluster.on("kubectl", "get", "persistentvolumes", "--ignore-not-found", stdout="")
    cluster.on("helm", "uninstall", stdout='release "tracebloc" uninstalled\n')
    cluster.on("kubectl", "delete", stdout="deleted\n")
    data = data_dir(cluster)
    data.mkdir(parents=True, exist_ok=True)
    (data / "values.yaml").write_text("clientId: x\n", encoding="utf-8")
    (data / "tracebloc" / "mysql").mkdir(parents=True)
    (data / "tracebloc" / "mysql" / "ibdata1").write_bytes(b"rows")
    return cluster


def helm_uninstalls(cluster: FakeCluster) -> list[list[str]]:
    return [a for a in cluster.calls("helm") if a[:1] == ["uninstall"]]


def test_uninstall_removes_the_release_and_keeps_the_data(cluster: FakeCluster) -> None:
    removable(cluster)
    result = cluster.run("uninstall", "--yes")

    assert result.returncode == 0, result.stderr
    # No --wait: the kept claims hold their volumes, which stay Terminating while bound
    # (pv-protection); waiting for them to go would only run out helm's 5 minutes.
    assert helm_uninstalls(cluster) == [
        ["uninstall", "tracebloc", "-n", "tracebloc", "--timeout", "5m"]
    ]
    assert not [a for a in cluster.calls("kubectl") if a[:1] == ["delete"]]
    assert (data_dir(cluster) / "values.yaml").exists()
    assert "will remove:\n  helm release tracebloc in namespace tracebloc" in result.stderr
    assert "client-pvc, client-logs-pvc" in result.stderr and "someone-elses" not in result.stderr
    assert f"kept: data directory {data_dir(cluster)}" in result.stdout
    assert (
        "kept: volumes of the release: client-mysql-pv, client-logs-pv (helm deletes them; "
        "each stays, Terminating, while its kept claim holds it"
    ) in result.stdout


def test_uninstall_delete_data_removes_claims_and_directory(cluster: FakeCluster) -> None:
    removable(cluster)
    result = cluster.run("uninstall", "--yes", "--delete-data")

    assert result.returncode == 0, result.stderr
    claims, volumes = [a for a in cluster.calls("kubectl") if a[:1] == ["delete"]]
    assert claims[:5] == ["delete", "persistentvolumeclaims", "client-pvc", "client-logs-pvc", "-n"]
    # The release's volumes (never another release's), after their claims: a volume bound
    # to a claim cannot go before it.
    assert volumes[:4] == ["delete", "persistentvolumes", "client-mysql-pv", "client-logs-pv"]
    assert "-n" not in volumes  # volumes belong to no namespace
    # The release's data and the values file are gone; only the lock files stay (another
    # run may hold one, and a lock must stay the same file to keep a third run out).
    assert {p.name for p in data_dir(cluster).iterdir()} <= {"install.lock", "locks"}
    assert f"deleted {data_dir(cluster) / 'tracebloc'}" in result.stdout
    order = [e["argv"][0] for e in cluster.call_log() if e["argv"][0] in ("uninstall", "delete")]
    assert order == ["uninstall", "delete", "delete"]  # the release goes before its volumes
    # Each deletion was waited for, by name, until it was gone.
    polls = [a for a in cluster.calls("kubectl") if a[:1] == ["get"] and "--ignore-not-found" in a]
    assert [a[1] for a in polls] == ["persistentvolumeclaims", "persistentvolumes"]
    assert "deleted volumes client-mysql-pv, client-logs-pv" in result.stdout


def test_uninstall_remedies_carry_the_runs_cluster_and_namespace(cluster: FakeCluster) -> None:
    removable(cluster)
    cluster.on("helm", "uninstall", rc=1, stderr="Error: uninstall: Release not loaded\n")
    kubeconfig = cluster.root / "prod-kubeconfig"
    kubeconfig.write_text(KUBECONFIG_OF_A_CLUSTER, encoding="utf-8")
    result = cluster.run(
        "uninstall",
        "--yes",
        "--kubeconfig",
        str(kubeconfig),
        "--context",
        "prod",
        "-n",
        "tracebloc",
    )

    assert result.returncode == 1
    assert (
        f"check: helm status tracebloc -n tracebloc --kubeconfig {kubeconfig} --kube-context prod"
    ) in result.stderr


def test_uninstall_asks_and_without_a_terminal_changes_nothing(cluster: FakeCluster) -> None:
    removable(cluster)
    result = cluster.run("uninstall")

    assert result.returncode == 2
    assert "--yes" in result.stderr
    assert helm_uninstalls(cluster) == []


def with_cluster(cluster: FakeCluster, labels: dict[str, str] | None) -> FakeCluster:
    """A local k3d cluster `tracebloc`; `labels` on its server node (None: Docker cannot say)."""
    for tool in ("k3d", "docker"):
        cluster.install(tool)
    cluster.on(
        "k3d",
        "cluster",
        "list",
        stdout=json.dumps([{"name": "tracebloc", "serversRunning": 1, "nodes": []}]),
    )
    cluster.on("k3d", "cluster", "delete", stdout="deleted\n")
    cluster.view("k3d-tracebloc", "https://127.0.0.1:6550")  # its own context, on loopback
    if labels is None:
        cluster.on("docker", "inspect", rc=1, stderr="Cannot connect to the Docker daemon\n")
    else:
        server = {"Name": "/k3d-tracebloc-server-0", "Config": {"Labels": labels, "Env": []}}
        cluster.on("docker", "inspect", stdout=json.dumps([server]))
    return cluster


@pytest.mark.parametrize(
    ("labels", "said"),
    [
        pytest.param({}, "tracebloc-installer did not create it", id="adopted-or-hand-made"),
        pytest.param(None, "Docker could not say", id="docker-cannot-say"),
    ],
)
def test_delete_cluster_the_engine_did_not_create_is_refused(
    cluster: FakeCluster, labels: dict[str, str] | None, said: str
) -> None:
    with_cluster(removable(cluster), labels)
    result = cluster.run("uninstall", "--yes", "--delete-cluster")

    assert result.returncode == 3
    assert said in result.stderr
    assert helm_uninstalls(cluster) == []
    assert not [a for a in cluster.calls("k3d") if a[:2] == ["cluster", "delete"]]


def test_delete_cluster_the_engine_created(cluster: FakeCluster) -> None:
    with_cluster(removable(cluster), {"tracebloc.io/created-by": "tracebloc-installer"})
    result = cluster.run("uninstall", "--yes", "--delete-cluster")

    assert result.returncode == 0, result.stderr
    assert cluster.calls("k3d")[-1] == ["cluster", "delete", "tracebloc"]
    assert "deleted local k3d cluster tracebloc" in result.stdout
    order = [
        e["argv"][0]
        for e in cluster.call_log()
        if e["argv"][:1] in (["uninstall"], ["cluster"]) and e["argv"][:2] != ["cluster", "list"]
    ]
    assert order == ["uninstall", "cluster"]  # the release first, the cluster last


def test_delete_cluster_waits_for_no_install_it_refuses_while_one_holds_the_cluster(
    cluster: FakeCluster,
) -> None:
    """An install making or adopting the local cluster holds its lock (whatever its
    namespace): --delete-cluster is refused then, and nothing is removed."""
    from installer.edges import lock

    with_cluster(removable(cluster), {"tracebloc.io/created-by": "tracebloc-installer"})
    path = lock.cluster_lock(
        {"HOME": str(cluster.home)}, str(cluster.root / "elsewhere"), "tracebloc"
    )
    with lock.hold([path], what="install of release team-b in namespace team-b"):
        result = cluster.run("uninstall", "--yes", "--delete-cluster")

    assert result.returncode != 0
    assert "team-b" in result.stderr, result.stderr
    assert helm_uninstalls(cluster) == []
    assert not [a for a in cluster.calls("k3d") if a[:2] == ["cluster", "delete"]]


def test_uninstall_with_no_release_removes_nothing(cluster: FakeCluster) -> None:
    removable(cluster)
    release_listed(cluster)
    result = cluster.run("uninstall", "--yes")

    assert result.returncode == 0, result.stderr
    assert "nothing to remove" in result.stdout
    assert helm_uninstalls(cluster) == []


@pytest.mark.parametrize(
    ("row", "said"),
    [
        pytest.param(
            release_row(chart="nginx-1.0.0"), "not the tracebloc client", id="another-chart"
        ),
        pytest.param(None, "cannot see whether", id="release-list-fails"),
    ],
)
def test_uninstall_refuses_what_it_cannot_be_sure_of(
    cluster: FakeCluster, row: Any, said: str
) -> None:
    removable(cluster)
    if row is None:
        cluster.on("helm", "list", rc=1, stderr="Error: Kubernetes cluster unreachable\n")
    else:
        release_listed(cluster, row)
    result = cluster.run("uninstall", "--yes")

    assert result.returncode == 3
    assert said in result.stderr
    assert helm_uninstalls(cluster) == []


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize(
    ("answers", "removed"),
    [
        pytest.param(["y"], True, id="yes-removes"),
        pytest.param(["n"], False, id="no-keeps-everything"),
        pytest.param(["y", "wrong-namespace"], False, id="delete-data-needs-the-namespace-typed"),
        pytest.param(["y", "tracebloc"], True, id="delete-data-confirmed"),
    ],
)
def test_uninstall_asks_on_the_terminal(
    cluster: FakeCluster, answers: list[str], removed: bool
) -> None:
    from tests.fakes.terminal import Pty

    removable(cluster)
    args = ["uninstall", *(["--delete-data"] if len(answers) > 1 else [])]
    with Pty.spawn(args, env=cluster.env(), cwd=cluster.root) as term:
        term.expect("Remove these? [y/N]")
        term.send(answers[0])
        if len(answers) > 1:
            term.expect("Type the namespace (tracebloc)")
            term.send(answers[1])
        code = term.wait()

    assert code == (0 if removed else 1), term.screen()
    assert bool(helm_uninstalls(cluster)) is removed
    assert (data_dir(cluster) / "values.yaml").exists() is not (removed and len(answers) > 1)


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_delete_data_after_the_data_directory_became_a_link_deletes_nothing_behind_it(
    cluster: FakeCluster,
) -> None:
    """Between the question and the deletion the data directory is replaced by a link to
    the person's project: the release goes, the project's files stay, and so does the
    directory that was shown (moved aside)."""
    from tests.fakes.terminal import Pty

    removable(cluster)
    shop = cluster.home / "projects" / "shop-db"
    (shop / "tracebloc" / "mysql").mkdir(parents=True)
    (shop / "tracebloc" / "mysql" / "orders.ibd").write_bytes(b"orders")
    (shop / "values.yaml").write_text("mine: true\n")
    with Pty.spawn(["uninstall", "--delete-data"], env=cluster.env(), cwd=cluster.root) as term:
        term.expect("Remove these? [y/N]")
        term.send("y")
        term.expect("Type the namespace (tracebloc)")
        os.rename(data_dir(cluster), cluster.home / "moved-aside")
        os.symlink(shop, data_dir(cluster))
        term.send("tracebloc")
        code = term.wait()
        screen = term.screen()

    assert code == 1, screen
    assert "replaced after the question" in screen, screen
    assert (shop / "tracebloc" / "mysql" / "orders.ibd").read_bytes() == b"orders"
    assert (shop / "values.yaml").read_text() == "mine: true\n"
    assert (cluster.home / "moved-aside" / "values.yaml").exists()


@pytest.mark.parametrize(
    ("where", "code", "said"),
    [
        # install's own rules (exit 2, as install and plan say it), then positive evidence (3)
        pytest.param("home-itself", 2, "is your home directory itself", id="home-itself"),
        pytest.param("outside-home", 2, "is not under your home directory", id="outside-home"),
        pytest.param(
            "no-files-of-ours",
            3,
            "does not look like a tracebloc data directory",
            id="no-files-of-ours",
        ),
    ],
)
def test_delete_data_never_deletes_a_directory_that_is_not_ours(
    cluster: FakeCluster, where: str, code: int, said: str
) -> None:
    removable(cluster)
    target = {
        "home-itself": cluster.home,
        "outside-home": cluster.root / "elsewhere",
        "no-files-of-ours": cluster.home / "projects",
    }[where]
    target.mkdir(exist_ok=True)
    (target / "precious.txt").write_text("keep me", encoding="utf-8")
    if where != "no-files-of-ours":
        (target / "values.yaml").write_text("clientId: x\n", encoding="utf-8")
    result = cluster.run("uninstall", "--yes", "--delete-data", HOST_DATA_DIR=str(target))

    assert result.returncode == code, result.stderr
    assert said in result.stderr
    assert (target / "precious.txt").exists()
    assert helm_uninstalls(cluster) == []


def test_diagnose_collects_what_support_needs_across_the_machine_and_cluster(
    cluster: FakeCluster,
) -> None:
    healthy(cluster)
    cluster.install("docker")
    cluster.install("k3d")
    cluster.on(
        "docker", "info", stdout='{"ServerVersion": "27.1", "DockerRootDir": "/var/lib/docker"}\n'
    )
    cluster.on("docker", "ps", stdout="k3d-tracebloc-server-0\tUp 2 hours\trancher/k3s\n")
    cluster.on(
        "docker", "ps", "--filter", stdout="k3d-tracebloc-server-0\nk3d-tracebloc-serverlb\n"
    )
    cluster.on("docker", "inspect", stdout="/k3d-tracebloc-server-0 restart=unless-stopped\n")
    cluster.on("k3d", "cluster", "list", stdout='[{"name": "tracebloc"}]\n')
    cluster.on("k3d", "node", "list", stdout='[{"name": "k3d-tracebloc-server-0"}]\n')
    failing = {
        "metadata": {"namespace": "kube-system", "name": "coredns-1"},
        "status": {"phase": "Pending"},
    }
    running = {
        "metadata": {"namespace": "tracebloc", "name": "mysql-0"},
        "status": {"phase": "Running", "containerStatuses": [{"ready": True}]},
    }
    cluster.on(
        "kubectl",
        "get",
        "pods",
        "-A",
        "-o",
        "json",
        stdout=json.dumps({"items": [failing, running]}),
    )
    cluster.on(
        "kubectl",
        "get",
        "events",
        "-A",
        stdout="LAST SEEN TYPE REASON\n1m Warning FailedScheduling\n",
    )
    cluster.on(
        "kubectl", "describe", "pod", "coredns-1", stdout="Name: coredns-1\nEvents: 0/1 nodes\n"
    )

    result = cluster.run(
        "diagnose",
        "--json",
        HTTPS_PROXY=f"http://u:{PROXY_PASSWORD}@proxy:3128",
        NO_PROXY="localhost",
    )

    assert result.returncode == 0, result.stderr
    members = _members(Path(json.loads(result.stdout)["bundle"]))
    assert {
        "docker-info.json",
        "docker-ps.txt",
        "k3d-restart-policy.txt",
        "k3d-clusters.json",
        "k3d-nodes.json",
        "pods-all-namespaces.txt",
        "events-all-namespaces.txt",
        "describe/kube-system.coredns-1.txt",
        "disk.txt",
        "proxy.txt",
    } <= set(members)
    assert b"restart=unless-stopped" in members["k3d-restart-policy.txt"]
    assert not any(
        name.startswith("describe/tracebloc.") for name in members
    )  # ready: not described
    assert b"FailedScheduling" in members["events-all-namespaces.txt"]
    assert members["proxy.txt"] == b"HTTPS_PROXY=http://u:********@proxy:3128\nNO_PROXY=localhost\n"
    assert PROXY_PASSWORD.encode() not in b"".join(members.values())


# --- the install record ------------------------------------------------------------------


def write_record(cluster: FakeCluster, **fields: str) -> Path:
    record = {
        "version": 1,
        "release": "lab-two",
        "namespace": "lab-two",
        "context": "office",
        "server": "https://10.1.2.3:6443",
        "chart": "tracebloc/client",
        "chart_version": "1.4.2",
        "data_dir": str(data_dir(cluster)),
        "credentials": "sign-in",
        **fields,
    }
    path = data_dir(cluster) / "install.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("fields", "followed", "said"),
    [
        pytest.param({}, True, "using the install record", id="followed"),
        pytest.param({"context": "gone"}, False, "names kube context gone", id="context-gone"),
        pytest.param(
            {"server": "https://10.9.9.9:6443"},
            False,
            "now points at https://10.1.2.3:6443",
            id="server-moved",
        ),
    ],
)
def test_status_follows_a_record_whose_cluster_still_exists_and_reports_one_that_does_not(
    cluster: FakeCluster, fields: dict[str, str], followed: bool, said: str
) -> None:
    healthy(cluster)
    write_record(cluster, **fields)
    result = cluster.run("status", "--json")
    assert json.loads(result.stdout)["release"]["namespace"] == (
        "lab-two" if followed else "tracebloc"
    )
    assert said in result.stderr and result.stderr.count("install record") == 1


def test_a_record_of_an_install_given_a_kubeconfig_is_followed_with_that_kubeconfig(
    cluster: FakeCluster,
) -> None:
    other = cluster.root / "lab.kubeconfig"
    other.write_text(KUBECONFIG_OF_A_CLUSTER.replace("office", "lab"), encoding="utf-8")
    healthy(cluster)
    write_record(cluster, context="lab", kubeconfig=str(other))
    result = cluster.run("status", "--json")
    assert "using the install record" in result.stderr, result.stderr
    assert json.loads(result.stdout)["release"]["namespace"] == "lab-two"
    helm_reads = [a for a in cluster.calls("helm") if a[:1] == ["list"]]
    assert helm_reads and all(a[a.index("--kubeconfig") + 1] == str(other) for a in helm_reads)


def test_uninstall_with_no_options_removes_the_recorded_release_and_then_the_record(
    cluster: FakeCluster,
) -> None:
    removable(cluster)
    path = write_record(cluster, release="tracebloc", namespace="tracebloc")
    result = cluster.run("uninstall", "--yes")
    assert result.returncode == 0, result.stderr
    assert "using the install record" in result.stderr
    assert helm_uninstalls(cluster)[0][:4] == ["uninstall", "tracebloc", "-n", "tracebloc"]
    assert not path.exists()
