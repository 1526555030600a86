"""The GPU steps as pure decisions (decide/gpuhost.py, decide/gpucluster.py): which steps a
machine gets in each state, per distribution, argv exactly; the cluster's shape for one
GPU. The process-level journeys are tests/test_cli_gpu_host.py."""

from __future__ import annotations

import pytest

from installer.decide import gpucluster
from installer.decide import gpuhost as gh
from installer.decide.drift import Container, Inspected
from installer.decide.localcluster import settings
from installer.decide.localcluster_state import ADOPT, CREATE
from installer.decide.runtime import Facts, parse_os_release
from tests.fakes.runtime_host import OS_RELEASES


def facts(distro: str, *, sudo: str = "pw", uid: int = 1000, arch: str = "amd64") -> Facts:
    pm = {
        "debian": "apt-get",
        "ubuntu": "apt-get",
        "fedora": "dnf",
        "rhel9": "dnf",
        "rocky9": "dnf",
        "amzn2023": "dnf",
        "arch": "pacman",
        "opensuse": "zypper",
    }[distro]
    return Facts(
        os="linux",
        docker="running",
        uid=uid,
        sudo=sudo,
        os_release=parse_os_release(OS_RELEASES[distro]),
        tools=frozenset({pm, "systemctl"}),
        arch=arch,
    )


def argvs(plan: object) -> list[tuple[str, ...]]:
    assert plan is not None
    return [s.argv for s in plan.steps]  # type: ignore[attr-defined]


def test_no_nvidia_gpu_is_no_plan() -> None:
    assert gh.decide(gh.GpuFacts(False), facts("ubuntu"), creating=True, primed=False) is None


def test_everything_present_is_the_docker_check_alone_and_needs_no_sudo() -> None:
    ready = gh.GpuFacts(True, driver=True, toolkit=True, default_runtime="nvidia")
    plan = gh.decide(ready, facts("ubuntu"), creating=True, primed=False)
    assert argvs(plan) == [gh.CHECK_ARGV]
    assert gh.decide(ready, facts("ubuntu"), creating=False, primed=False) is None


@pytest.mark.parametrize(
    ("distro", "driver"),
    [
        pytest.param("ubuntu", ("ubuntu-drivers", "install", "--gpgpu"), id="ubuntu"),
        pytest.param(
            "debian",
            (
                "env",
                "DEBIAN_FRONTEND=noninteractive",
                "NEEDRESTART_MODE=a",
                "apt-get",
                "install",
                "-y",
                "-q",
                "-o",
                "DPkg::Lock::Timeout=600",
                "nvidia-driver",
            ),
            id="debian",
        ),
        pytest.param(
            "rhel9", ("dnf", "-y", "module", "install", "nvidia-driver:latest-dkms"), id="rhel-9"
        ),
        pytest.param(
            "rocky9", ("dnf", "-y", "module", "install", "nvidia-driver:latest-dkms"), id="rocky-9"
        ),
    ],
)
def test_a_gpu_without_driver_gets_the_distributions_driver_then_the_reboot_check(
    distro: str, driver: tuple[str, ...]
) -> None:
    bare = gh.GpuFacts(True, driver=False, toolkit=False, default_runtime="runc")
    plan = gh.decide(bare, facts(distro), creating=True, primed=False)
    assert plan is not None and plan.reason == "gpu-driver-missing"
    steps = argvs(plan)
    assert steps[0] == ("sudo", "-v") and driver in steps
    reboot = next(i for i, s in enumerate(plan.steps) if s.kind == gh.REBOOT)
    assert steps.index(driver) < reboot  # the hand-off comes right after the driver
    assert all(s.kind != gh.REBOOT for s in plan.steps[reboot + 1 :])
    if distro.startswith(("rhel", "rocky")):
        repo = next(s for s in plan.steps if s.kind == "fetch")
        assert repo.url == (
            "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/cuda-rhel9.repo"
        )


@pytest.mark.parametrize("distro", ["fedora", "arch", "opensuse"])
def test_no_known_driver_route_is_a_cpu_install_that_says_so(distro: str) -> None:
    bare = gh.GpuFacts(True, driver=False)
    plan = gh.decide(bare, facts(distro), creating=True, primed=False)
    assert plan is not None and not plan.steps and plan.reason in gh.CPU_REASONS
    assert "install the NVIDIA driver" in plan.notes[0]


def test_the_toolkit_on_dnf_uses_nvidias_repository_with_the_checked_key() -> None:
    plan = gh.decide(gh.GpuFacts(True, driver=True), facts("rhel9"), creating=False, primed=False)
    assert plan is not None
    key = next(s for s in plan.steps if s.kind == "fetch")
    assert key.check == f"openpgp:{gh.NVIDIA_KEY_FPR}" and key.argv[-1] == gh.RPM_KEY
    repo = next(s for s in plan.steps if s.kind == "stage")
    assert f"gpgkey=file://{gh.RPM_KEY}" in repo.content and "repo_gpgcheck=1" in repo.content
    assert ("dnf", "-y", "-q", "install", "nvidia-container-toolkit") in argvs(plan)


def test_the_default_runtime_and_restart_come_after_the_toolkit() -> None:
    plan = gh.decide(gh.GpuFacts(True, driver=True), facts("ubuntu"), creating=True, primed=True)
    assert plan is not None
    kinds = [s.kind for s in plan.steps]
    assert ("sudo", "-v") not in argvs(plan)  # the runtime's plan asked for it already
    assert kinds.index(gh.DEFAULT_RUNTIME) < kinds.index(gh.RESTART) < kinds.index(gh.CHECK)
    installed = argvs(plan).index((*gh._apt_install(gh.TOOLKIT),))
    assert installed < kinds.index(gh.DEFAULT_RUNTIME)


def test_without_sudo_the_gpu_is_not_set_up_and_the_install_is_for_cpu() -> None:
    plan = gh.decide(
        gh.GpuFacts(True, driver=True), facts("ubuntu", sudo="none"), creating=True, primed=False
    )
    assert plan is not None and not plan.steps and plan.reason == "gpu-no-sudo"


GPU = Inspected(True, server=Container(gpus=True))
CPU = Inspected(True, server=Container())


@pytest.mark.parametrize(
    ("action", "inspected", "nodes", "access", "said"),
    [
        pytest.param(CREATE, None, (), True, "one server and no agents", id="created-for-one-gpu"),
        pytest.param(
            ADOPT,
            CPU,
            ("k3d-tracebloc-server-0",),
            False,
            "created without GPU access",
            id="cpu-only-cluster",
        ),
        pytest.param(ADOPT, GPU, ("k3d-tracebloc-server-0",), True, "", id="gpu-cluster"),
        pytest.param(
            ADOPT,
            GPU,
            ("k3d-tracebloc-server-0", "k3d-tracebloc-agent-0", "k3d-tracebloc-serverlb"),
            True,
            "has 2 nodes",
            id="two-nodes",
        ),
    ],
)
def test_the_cluster_is_given_the_gpu_only_as_one_node_made_with_it(
    action: str,
    inspected: Inspected | None,
    nodes: tuple[str, ...],
    access: bool,
    said: str,
) -> None:
    s = settings({})
    fit = gpucluster.decide(
        s, host_nvidia=True, docker_nvidia=True, action=action, inspected=inspected, nodes=nodes
    )
    assert fit.access is access
    assert (said in " ".join(fit.notes)) if said else not fit.notes
    if action == CREATE:
        assert (fit.settings.servers, fit.settings.agents) == (1, 0)


def test_a_failed_docker_check_creates_for_cpu() -> None:
    fit = gpucluster.decide(
        settings({}),
        host_nvidia=True,
        docker_nvidia=True,
        action=CREATE,
        inspected=None,
        check_failed="could not select device driver",
    )
    assert not fit.access and "could not select device driver" in fit.notes[0]


def test_the_network_preflight_adds_nvidias_repository_only_when_the_toolkit_is_missing(
    tmp_path: object,
) -> None:
    from pathlib import Path

    from installer.commands.network_hosts import toolkit_urls
    from installer.decide.model import Gpu

    bin_dir = Path(str(tmp_path))
    env = {"PATH": str(bin_dir)}
    nvidia = Gpu("nvidia")
    assert toolkit_urls(env, "linux", nvidia) == (
        "https://nvidia.github.io/libnvidia-container/gpgkey",
        "https://nvidia.github.io/libnvidia-container/stable/",
    )
    assert toolkit_urls(env, "linux", Gpu(None)) == ()
    assert toolkit_urls(env, "darwin", nvidia) == ()
    ctk = bin_dir / "nvidia-ctk"
    ctk.write_text("#!/bin/sh\n", encoding="utf-8")
    ctk.chmod(0o755)
    assert toolkit_urls(env, "linux", nvidia) == ()
