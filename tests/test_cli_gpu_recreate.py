"""A local cluster made without GPU access on a GPU workstation, as a process against fakes:
without TRACEBLOC_RECREATE_CLUSTER it stays on CPU and the plan names the choice; with it,
the engine's own cluster holding no helm release is deleted and created again for the GPU,
exactly as listed before the question (tests/test_cli_contract_changes.py holds it to the
list, and to `n` changing nothing); anything less than that evidence stops the run."""

from __future__ import annotations

import json
import sys

import pytest

from installer.decide import gpucluster
from installer.decide import localcluster as lc
from installer.decide.drift import Container, Inspected
from installer.decide.localcluster import CREATED_LABEL, CREATED_VALUE
from installer.decide.localcluster_state import ADOPT, RECREATE, START
from installer.decide.model import Installed, ListRead
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, release_row
from tests.fakes.localcluster import (
    CREATED,
    docker_running,
    existing,
    kubeconfig_of_k3d,
    listed,
    machine_without_cluster,
)
from tests.test_cli_contract_changes import listed as shown_items
from tests.test_cli_contract_changes import mutating
from tests.test_cli_gpu import with_gpu
from tests.test_cli_install import env_for, fresh, values_file

FLAG = {"TRACEBLOC_RECREATE_CLUSTER": "1"}


def holding(cluster: FakeCluster, *extra: dict[str, object]) -> None:
    """What `kubectl get namespaces,pvc -A` lists in the cluster: k3s's own namespaces, and
    `extra` items (someone's namespace, a volume claim)."""
    own = [{"kind": "Namespace", "metadata": {"name": n}} for n in ("default", "kube-system")]
    items = [*own, *extra]
    cluster.on(
        "kubectl",
        "get",
        "namespaces,persistentvolumeclaims",
        stdout=json.dumps({"kind": "List", "items": items}),
    )


def cpu_cluster(cluster: FakeCluster, *, ours: bool = True, state: str = "running") -> FakeCluster:
    """A GPU machine whose Docker serves the GPU, and a running cluster made without --gpus
    (by the engine when `ours`); k3d can hand out its kubeconfig, and create it again."""
    with_gpu(
        existing(
            docker_running(machine_without_cluster(fresh(cluster)), runtimes=("nvidia", "runc")),
            state,
            ours=ours,
        )
    )
    cluster.on("k3d", "kubeconfig", "get", stdout=kubeconfig_of_k3d())
    holding(cluster)
    # Docker's GPU check, run first as before any GPU create.
    cluster.on("docker", "run", "--gpus", stdout="NVIDIA-SMI 550.54.14  Driver Version: 550\n")
    cluster.on("k3d", "cluster", "delete", stdout="deleted\n")
    cluster.on("k3d", "cluster", "create", mark=CREATED, stdout="created\n")
    cluster.on("k3d", "cluster", "list", stdout=listed("running", agents=0), after=CREATED)
    return cluster


def k3d_changes(cluster: FakeCluster) -> list[list[str]]:
    return [c[1:] for c in mutating(cluster) if c[0] == "k3d"]


def test_without_the_setting_the_plan_names_the_choice_and_the_install_stays_on_cpu(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cpu_cluster(cluster)

    plan = cluster.run("plan", **env_for(backend))
    result = cluster.run("install", "--yes", **env_for(backend))

    assert plan.returncode == 0, plan.stderr
    assert "created without GPU access" in plan.stdout
    assert "TRACEBLOC_RECREATE_CLUSTER=1" in plan.stdout and "go on for CPU" in plan.stdout
    assert result.returncode == 0, result.stderr
    assert "nvidia.com/gpu=1" not in values_file(cluster).read_text(encoding="utf-8")
    assert not [
        c for c in k3d_changes(cluster) if c[:2] in (["cluster", "delete"], ["cluster", "create"])
    ]


def test_with_the_setting_and_no_release_the_cluster_is_recreated_exactly_as_listed(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cpu_cluster(cluster)
    env = env_for(backend, **FLAG)
    data = cluster.home / ".tracebloc" / "tracebloc" / "mysql"
    data.mkdir(parents=True)
    (data / "ibdata1").write_bytes(b"rows")

    plan = json.loads(cluster.run("plan", "--json", **env).stdout)
    planned = [c["argv"] for c in plan["changes"] if c["argv"][0] == "k3d"]
    cluster.log_path.unlink(missing_ok=True)
    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 0, result.stderr
    assert planned[0] == ["k3d", "cluster", "delete", "tracebloc"]
    create = planned[1]
    assert create[:3] == ["k3d", "cluster", "create"] and "--gpus=all" in create
    assert (
        create[create.index("--servers") + 1] == "1" and create[create.index("--agents") + 1] == "0"
    )
    # What ran is what was listed, in that order; the data under HOST_DATA_DIR is as it was.
    assert [["k3d", *c] for c in k3d_changes(cluster)] == planned
    items = shown_items(result.stderr)
    delete = next(i for i, item in enumerate(items) if item.startswith("k3d cluster delete "))
    assert items[delete].startswith("k3d cluster delete tracebloc  (") and "kept" in items[delete]
    assert items[delete - 1].startswith("docker run --rm --gpus all")  # Docker's check first
    assert (data / "ibdata1").read_bytes() == b"rows"
    assert "nvidia.com/gpu=1" in values_file(cluster).read_text(encoding="utf-8")


def test_a_failed_docker_gpu_check_keeps_the_cluster_and_installs_for_cpu(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cpu_cluster(cluster)
    cluster.on("docker", "run", "--gpus", rc=125, stderr="could not select device driver\n")

    result = cluster.run("install", "--yes", **env_for(backend, **FLAG))

    assert result.returncode == 0, result.stderr
    assert "is not recreated and this install stays on CPU" in result.stdout + result.stderr
    assert not [c for c in k3d_changes(cluster) if c[0] == "cluster"]
    assert "nvidia.com/gpu=1" not in values_file(cluster).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("ours", "state", "said"),
    [
        pytest.param(
            True, "running", "a tracebloc client is installed in it", id="client-installed"
        ),
        pytest.param(False, "running", "the installer did not create it", id="not-the-engines"),
        pytest.param(True, "stopped", "it is stopped", id="stopped-cannot-be-read"),
    ],
)
def test_with_the_setting_anything_but_positive_evidence_stops_before_the_question(
    cluster: FakeCluster, backend: BackendServer, ours: bool, state: str, said: str
) -> None:
    cpu_cluster(cluster, ours=ours, state=state)
    cluster.installed(release_row())  # read only where the cluster is the engine's and runs
    cluster.log_path.unlink(missing_ok=True)

    plan = cluster.run("plan", **env_for(backend, **FLAG))
    result = cluster.run("install", **env_for(backend, **FLAG))

    assert plan.returncode != 0 and said in plan.stdout + plan.stderr
    assert result.returncode != 0 and said in result.stderr, result.stderr
    assert "Install? [y/N]" not in result.stdout + result.stderr
    assert mutating(cluster) == []
    assert backend.requests == []
    if ours and state == "running":  # the remedy: release the secure environment first
        assert "tracebloc delete --keep-data" in result.stderr


# --- the decision itself ---------------------------------------------------------------

S = lc.settings({})
OURS = Inspected(True, Container(labels={CREATED_LABEL: CREATED_VALUE}))
EMPTY = ListRead(True)
CLIENT = ListRead(True, (Installed("tracebloc", "tracebloc", "client-1.4.2", "deployed"),))
OTHER = ListRead(True, (Installed("pg", "db", "postgresql-15.2.0", "deployed"),))


def decide(**given: object) -> gpucluster.GpuCluster:
    args: dict[str, object] = dict(
        host_nvidia=True,
        docker_nvidia=True,
        action=ADOPT,
        inspected=OURS,
        recreate=True,
        releases=EMPTY,
    )
    args.update(given)
    return gpucluster.decide(S, **args)  # type: ignore[arg-type]


def test_a_recreate_is_decided_only_on_positive_evidence() -> None:
    fit = decide()
    assert (fit.action, fit.access, fit.problem) == (RECREATE, True, None)
    assert (fit.settings.servers, fit.settings.agents) == (1, 0)
    # Stopped by Docker's restart in the GPU steps, after helm listed nothing in it.
    assert decide(action=START).action == RECREATE

    unset = decide(recreate=False)
    assert unset.action is None and unset.problem is None and not unset.access
    assert "TRACEBLOC_RECREATE_CLUSTER=1" in unset.notes[0]

    for refused, why in [
        (decide(releases=CLIENT), "a tracebloc client is installed"),
        (decide(releases=ListRead(True, OTHER.releases + CLIENT.releases)), "a tracebloc client"),
        (decide(releases=OTHER), "a helm release is installed in it (pg in namespace db)"),
        (decide(releases=None), "was not read"),
        (decide(releases=ListRead(False, reason="helm timed out")), "helm timed out"),
        (decide(action=START, releases=None), "it is stopped"),
        (decide(inspected=Inspected(True, Container())), "did not create it"),
    ]:
        assert refused.action is None and not refused.access
        assert refused.problem is not None and why in refused.problem[0], refused.problem

    # No GPU wanted, a GPU cluster already, or Docker's GPU check failed: nothing to recreate.
    assert decide(docker_nvidia=False).action is None
    assert decide(host_nvidia=False).action is None
    assert (
        "nvidia-smi lists no GPU here: nothing is recreated" in decide(host_nvidia=False).notes[0]
    )
    unread = decide(inspected=Inspected(False, reason="docker timed out"))
    assert unread.problem is not None and "could not be inspected" in unread.problem[0]
    assert decide(inspected=Inspected(True, Container(gpus=True))).action is None
    assert decide(check_failed="no device").action is None


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux GPU steps")
def test_a_docker_restart_in_the_gpu_steps_before_the_recreate_keeps_to_the_list(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """Docker lacks the NVIDIA default runtime: the GPU steps configure it and restart Docker,
    which stops the CPU-only cluster; helm's empty list read before the question still
    stands, so the cluster is deleted and created for the GPU, each call as listed."""
    from tests.fakes.gpu_host import advertises, gpu_machine
    from tests.fakes.runtime_host import linux_host
    from tests.test_cli_contract_changes import check_contract, install_yes

    machine_without_cluster(fresh(cluster))
    env = {**linux_host(cluster, "ubuntu", docker="running"), **gpu_machine(cluster, default=False)}
    existing(cluster, "running", agents=0, ours=True)  # the engine's, made without --gpus
    cluster.on("k3d", "kubeconfig", "get", stdout=kubeconfig_of_k3d())
    holding(cluster)
    cluster.on("systemctl", "restart", "docker", mark="restarted")  # as the real one: it stops
    cluster.on("k3d", "cluster", "list", stdout=listed("stopped", agents=0), after="restarted")
    cluster.on("k3d", "cluster", "delete", stdout="deleted\n")
    cluster.on("k3d", "cluster", "create", mark=CREATED, stdout="created\n")
    cluster.on("k3d", "cluster", "list", stdout=listed("running", agents=0), after=CREATED)
    advertises(cluster)
    given = env_for(backend, **env, **FLAG)

    check_contract(cluster, given, install_yes(cluster, given))

    log = [[e["tool"], *e["argv"]] for e in cluster.call_log()]
    delete = log.index(["k3d", "cluster", "delete", "tracebloc"])
    create = next(i for i, c in enumerate(log) if c[:3] == ["k3d", "cluster", "create"])
    assert log.index(["systemctl", "restart", "docker"]) < delete < create
    assert "--gpus=all" in log[create]
    assert "nvidia.com/gpu" in values_file(cluster).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        pytest.param(
            {"kind": "Namespace", "metadata": {"name": "tracebloc"}},
            "namespace tracebloc",
            id="a-namespace-left-by-helm-uninstall",
        ),
        pytest.param(
            {"kind": "PersistentVolumeClaim", "metadata": {"name": "db", "namespace": "default"}},
            "volume claim default/db",
            id="a-volume-claim",
        ),
    ],
)
def test_a_cluster_holding_anyones_namespace_or_volume_is_not_recreated(
    cluster: FakeCluster, backend: BackendServer, extra: dict[str, object], said: str
) -> None:
    """helm lists nothing (uninstalled, or another storage driver), but the cluster still
    holds someone's namespace or volume: refused before the question, nothing changed."""
    cpu_cluster(cluster)
    holding(cluster, extra)
    result = cluster.run("install", "--yes", **env_for(backend, **FLAG, HELM_DRIVER="memory"))

    assert result.returncode != 0
    assert f"it holds {said}" in result.stderr
    assert not [c for c in k3d_changes(cluster) if c[:2] == ["cluster", "delete"]]


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux runtime step")
def test_the_setting_with_docker_stopped_stops_before_the_question(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """Docker is stopped, so the cluster it holds is stopped and unread: a recreate cannot be
    listed. Asked for, the run stops before any question or change, saying why."""
    from tests.fakes.gpu_host import gpu_machine
    from tests.fakes.runtime_host import STOPPED, linux_host

    machine_without_cluster(fresh(cluster))
    env = {**linux_host(cluster, "ubuntu", docker="stopped", sudo="nopw"), **gpu_machine(cluster)}
    cluster.on("docker", "info", stdout=STOPPED, rc=1)
    cluster.kubeconfig.write_text(kubeconfig_of_k3d(), encoding="utf-8")  # a cluster of ours
    result = cluster.run("install", "--yes", **env_for(backend, **env, **FLAG))

    assert result.returncode != 0
    assert "what the local cluster tracebloc holds cannot be read" in result.stderr
    assert mutating(cluster) == []
    assert backend.requests == []  # no credentials were sent


def test_what_a_cluster_holds_is_read_strictly() -> None:
    from installer.edges.cluster import parse_holdings

    own = {"items": [{"kind": "Namespace", "metadata": {"name": "kube-system"}}]}
    assert parse_holdings(json.dumps(own).encode()) == ()
    for bad in (b"not json", b'{"items": {}}', b"[]"):
        with pytest.raises(ValueError):
            parse_holdings(bad)
