"""The NVIDIA GPU steps as a process: `plan` and `install` on a Linux workstation made of
fakes (tests/fakes/gpu_host.py on tests/fakes/runtime_host.py) in each state the scripts'
gpu-nvidia.sh met — what ran as root and in which order, the files put under /etc, the
cluster created for one GPU, the values, and the reboot hand-off.

Only fakes: no GPU, NVIDIA driver or container toolkit exists on the test machine, so
nothing here shows that NVIDIA's real packages install or that a real card reaches a pod."""

from __future__ import annotations

import json
import sys

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.gpu_host import advertises, gpu_machine
from tests.fakes.localcluster import creatable, machine_without_cluster
from tests.fakes.runtime_host import linux_host, root_calls, sysroot
from tests.test_cli_install import env_for, fresh, values_file

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the Linux GPU steps")

TOOLKIT_APT = [
    "env",
    "DEBIAN_FRONTEND=noninteractive",
    "NEEDRESTART_MODE=a",
    "apt-get",
    "install",
    "-y",
    "-q",
    "-o",
    "DPkg::Lock::Timeout=600",
    "nvidia-container-toolkit",
]
CONFIGURE = ["nvidia-ctk", "runtime", "configure", "--runtime=docker", "--set-as-default"]
RESTART = ["systemctl", "restart", "docker"]


def workstation(cluster: FakeCluster, **gpu: bool) -> dict[str, str]:
    creatable(machine_without_cluster(fresh(cluster)))
    env = linux_host(cluster, "ubuntu", docker="running")
    env = {**env, **gpu_machine(cluster, **gpu)}
    advertises(cluster)  # the chart's device plugin advertises the card after helm
    return env


def calls(cluster: FakeCluster, tool: str) -> list[list[str]]:
    return [e["argv"] for e in cluster.call_log() if e["tool"] == tool]


def create_call(cluster: FakeCluster) -> list[str]:
    return next(a for a in calls(cluster, "k3d") if a[:2] == ["cluster", "create"])


def gpu_check_ran(cluster: FakeCluster) -> bool:
    return any(a[:4] == ["run", "--rm", "--gpus", "all"] for a in calls(cluster, "docker"))


def test_no_gpu_runs_no_gpu_step_and_no_privileged_one(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster, hardware=False, driver=False, toolkit=False)
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    assert root_calls(cluster) == [] and not gpu_check_ran(cluster)
    assert "--gpus=all" not in create_call(cluster)
    assert "nvidia.com/gpu" not in values_file(cluster).read_text(encoding="utf-8")


def test_driver_without_toolkit_installs_it_from_nvidias_signed_repository(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster, toolkit=False, default=False)
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    done = root_calls(cluster)
    assert done[0] == ["sudo", "-v"] and done.count(["sudo", "-v"]) == 1
    assert TOOLKIT_APT in done
    assert done.index(TOOLKIT_APT) < done.index(CONFIGURE) < done.index(RESTART)
    etc = sysroot(cluster) / "etc"
    key = etc / "apt/keyrings/nvidia-container-toolkit.asc"
    assert key.read_bytes().startswith(b"-----BEGIN PGP PUBLIC KEY")
    assert (etc / "apt/sources.list.d/nvidia-container-toolkit.list").read_text() == (
        "deb [signed-by=/etc/apt/keyrings/nvidia-container-toolkit.asc] "
        "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /\n"
    )
    # The Docker-level check before the cluster; the cluster made for one GPU after it.
    order = [e["tool"] + " " + " ".join(e["argv"][:2]) for e in cluster.call_log()]
    assert order.index("docker run --rm") < order.index("k3d cluster create")
    create = create_call(cluster)
    assert "--gpus=all" in create and create[create.index("--agents") + 1] == "0"
    assert "nvidia.com/gpu=1" in values_file(cluster).read_text(encoding="utf-8")
    # Every GPU step was in the list of changes shown before the first of them ran.
    said = result.stdout + result.stderr
    listed = said[: said.index("Setting up this machine's NVIDIA GPU for Docker")]
    for step in (
        "nvidia-container-toolkit.list",
        "apt-get install -y -q -o DPkg::Lock::Timeout=600 nvidia-container-toolkit",
        " ".join(CONFIGURE),
        " ".join(RESTART),
        "docker run --rm --gpus all",
    ):
        assert step in listed[listed.index("changes, in order:") :], step


def test_a_key_that_is_not_nvidias_is_never_installed(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster, toolkit=False, default=False)
    env["TB_TEST_NVIDIA_KEY_FPR"] = "0" * 40
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 1
    assert "fingerprint" in result.stderr and "nvidia.github.io" in result.stderr
    assert not (sysroot(cluster) / "etc/apt/keyrings/nvidia-container-toolkit.asc").exists()
    assert TOOLKIT_APT not in root_calls(cluster)
    assert not calls(cluster, "k3d") or not any(
        a[:2] == ["cluster", "create"] for a in calls(cluster, "k3d")
    )


def test_toolkit_without_the_default_runtime_configures_and_restarts_docker_once(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster, default=False)
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    done = root_calls(cluster)
    assert TOOLKIT_APT not in done and done.count(CONFIGURE) == 1 and done.count(RESTART) == 1
    assert "--gpus=all" in create_call(cluster)


def test_all_present_changes_nothing_on_the_host_and_checks_docker_first(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster)
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    assert root_calls(cluster) == []  # no sudo at all: no reconfigure, no Docker restart
    assert gpu_check_ran(cluster) and "--gpus=all" in create_call(cluster)


def test_a_failed_docker_gpu_check_makes_a_cpu_cluster_and_says_so(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster)
    cluster.on(
        "docker",
        "run",
        "--gpus",
        rc=125,
        stderr='could not select device driver "" with capabilities: [[gpu]]\n',
    )
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    assert "--gpus=all" not in create_call(cluster)
    assert "nvidia.com/gpu" not in values_file(cluster).read_text(encoding="utf-8")
    assert "could not select device driver" in result.stdout + result.stderr


def test_gpu_without_driver_installs_it_and_hands_off_for_the_reboot_then_resumes(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster, driver=False, toolkit=False, default=False)
    first = cluster.run("install", "--yes", **env_for(backend, **env))

    assert first.returncode == 2, first.stdout + first.stderr  # the documented hand-off
    assert "restart this machine" in first.stderr and "run the installer again" in first.stderr
    assert ["ubuntu-drivers", "install", "--gpgpu"] in root_calls(cluster)
    assert calls(cluster, "helm") == [] or not any(
        a[:1] == ["upgrade"] for a in calls(cluster, "helm")
    )
    assert not any(a[:2] == ["cluster", "create"] for a in calls(cluster, "k3d"))

    # After the reboot the driver answers: the next run goes on from there.
    cluster.install("nvidia-smi")
    cluster.log_path.write_text("", encoding="utf-8")
    second = cluster.run("install", "--yes", **env_for(backend, **env))

    assert second.returncode == 0, second.stderr
    done = root_calls(cluster)
    assert not any(c[:1] == ["ubuntu-drivers"] for c in done)  # not repeated
    assert TOOLKIT_APT in done and "--gpus=all" in create_call(cluster)


def test_a_driver_that_loads_at_once_needs_no_reboot(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster, driver=False, toolkit=False, default=False, driver_loads=True)
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    assert "no reboot needed" in result.stdout + result.stderr
    assert "--gpus=all" in create_call(cluster)


def test_plan_lists_every_gpu_step_and_runs_none(cluster: FakeCluster) -> None:
    env = workstation(cluster, driver=False, toolkit=False, default=False)
    result = cluster.run("plan", "--json", **env)

    assert result.returncode == 0, result.stderr
    local = json.loads(result.stdout)["local_cluster"]
    shown = local["gpu_host"]["commands"]
    wanted = [
        "sudo -v",
        "sudo -n ubuntu-drivers install --gpgpu",
        "nvidia-smi -L",
        "download https://nvidia.github.io/libnvidia-container/gpgkey",
        "sudo -n env DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a apt-get install "
        "-y -q -o DPkg::Lock::Timeout=600 nvidia-container-toolkit",
        "sudo -n nvidia-ctk runtime configure --runtime=docker --set-as-default",
        "sudo -n systemctl restart docker",
        "docker run --rm --gpus all -e NVIDIA_DISABLE_REQUIRE=1",
    ]
    at = [next((i for i, line in enumerate(shown) if line.startswith(w)), -1) for w in wanted]
    assert -1 not in at and at == sorted(at), shown
    assert any("checked: openpgp:" in line for line in shown)  # the key's fingerprint check
    # Reads only.
    assert [e["argv"] for e in cluster.call_log() if e["tool"] == "sudo"] == [["-n", "true"]]
    assert not (sysroot(cluster) / "etc").exists()
    assert not gpu_check_ran(cluster)


def test_the_gpu_is_verified_on_the_node_and_the_summary_gives_the_smoke_test(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster)
    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    assert "GPU:            verified (1 nvidia.com/gpu advertised)" in result.stdout
    assert "GPU test:       kubectl run gpu-test --rm -it" in result.stdout
    assert [
        "rollout",
        "status",
        "daemonset/nvidia-device-plugin-daemonset",
        "-n",
        "kube-system",
        "--timeout=120s",
    ] in [a[:6] for a in calls(cluster, "kubectl")]


def test_a_node_that_never_advertises_the_gpu_gets_cpu_values_and_says_why(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    env = workstation(cluster)
    advertises(cluster, 0, rollout_rc=1)
    result = cluster.run("install", "--yes", **env_for(backend, TB_GPU_WAIT_S="1", **env))

    assert result.returncode == 0, result.stderr
    assert "GPU:            not verified: no node advertised nvidia.com/gpu" in result.stdout
    assert "did not roll out" in result.stdout
    # The release was applied again without the GPU request: nothing stays Pending on it.
    upgrades = [a for a in calls(cluster, "helm") if a[:2] == ["upgrade", "--install"]]
    assert len(upgrades) == 2
    assert "nvidia.com/gpu" not in values_file(cluster).read_text(encoding="utf-8")


def test_a_docker_restart_under_the_existing_gpu_cluster_starts_it_again_as_listed(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """The cluster runs (made with the GPU); Docker lost its NVIDIA default (a package
    upgrade rewrote daemon.json): the restart that puts it back stops the cluster, and the
    `k3d cluster start` after it is an item of the list shown before the question."""
    from installer.decide import remedy
    from tests.fakes.localcluster import existing, listed
    from tests.test_cli_contract_changes import listed as shown_items
    from tests.test_cli_contract_changes import mutating

    machine_without_cluster(fresh(cluster))
    env = {**linux_host(cluster, "ubuntu", docker="running"), **gpu_machine(cluster, default=False)}
    existing(cluster, "running", gpus=True, agents=0)
    cluster.on("systemctl", "restart", "docker", mark="restarted")  # as the real one: it stops
    cluster.on("k3d", "cluster", "list", stdout=listed("stopped", agents=0), after="restarted")
    cluster.on("k3d", "cluster", "start", stdout="started\n", mark="started")
    cluster.on("k3d", "cluster", "list", stdout=listed("running", agents=0), after="started")
    advertises(cluster)

    result = cluster.run("install", "--yes", **env_for(backend, **env))

    assert result.returncode == 0, result.stderr
    done = root_calls(cluster)
    assert done.count(CONFIGURE) == 1 and done.count(RESTART) == 1
    starts = [a for a in calls(cluster, "k3d") if a[:2] == ["cluster", "start"]]
    assert len(starts) == 1
    log = [[e["tool"], *e["argv"]] for e in cluster.call_log()]
    assert log.index(["systemctl", *RESTART[1:]]) < log.index(["k3d", *starts[0]])
    shown = shown_items(result.stderr)
    assert "starts the local cluster again if Docker's restart stopped it" in " ".join(shown)
    reads = (["nvidia-ctk", "--version"], ["kubectl", "rollout", "status"])
    for call in mutating(cluster):
        if any(call[: len(r)] == r for r in reads):
            continue
        assert any(item.startswith(remedy.command(call) + "  (") for item in shown), call
    assert not [a for a in calls(cluster, "k3d") if a[:2] == ["cluster", "create"]]
