"""A Linux workstation with one NVIDIA card, in the states the GPU steps meet: no driver,
a driver without NVIDIA's container toolkit, the toolkit without Docker's default runtime,
everything present. Fake `nvidia-smi`, `lspci`, `nvidia-ctk`, `ubuntu-drivers` and Docker's
GPU answers, on top of tests/fakes/runtime_host.py's machine (sudo, apt-get, install, …).

Installing a package writes its executable (the driver's nvidia-smi, the toolkit's
nvidia-ctk); `nvidia-ctk runtime configure` and `systemctl restart docker` set marks after
which `docker info` reports nvidia as the default runtime."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fakes.cluster import FakeCluster
from tests.fakes.runtime_host import TEST_KEY, TEST_KEY_FPR

GPU_LINE = "GPU 0: NVIDIA RTX A4000 (UUID: GPU-6a1b)\n"
LSPCI = (
    "00:02.0 VGA compatible controller: Intel Corporation UHD Graphics 770\n"
    "01:00.0 VGA compatible controller: NVIDIA Corporation GA104GL [RTX A4000] (rev a1)\n"
)
LSPCI_NO_NVIDIA = "00:02.0 VGA compatible controller: Intel Corporation UHD Graphics 770\n"
SMI = "NVIDIA-SMI 550.54.14    Driver Version: 550.54.14    CUDA Version: 12.4\n"
CONFIGURED, RESTARTED, DRIVER = "nvidia-configured", "docker-restarted", "driver-installed"


def info(default: str, runtimes: tuple[str, ...]) -> str:
    return json.dumps(
        {
            "MemTotal": 16 * 2**30,
            "NCPU": 8,
            "OperatingSystem": "Ubuntu",
            "Runtimes": {r: {} for r in runtimes},
            "DefaultRuntime": default,
            "ServerErrors": None,
        }
    )


def gpu_machine(
    cluster: FakeCluster,
    *,
    hardware: bool = True,
    driver: bool = True,
    toolkit: bool = True,
    default: bool = True,
    driver_loads: bool = False,
) -> dict[str, str]:
    """Script the GPU side of a machine whose Docker runs (runtime_host's `running`);
    returns the test environment's additions. `driver_loads`: the driver installed in this
    run answers at once (no reboot needed)."""
    program = f"#!{sys.executable}\n"
    cluster.install("lspci")
    cluster.on("lspci", stdout=LSPCI if hardware else LSPCI_NO_NVIDIA)
    smi = program + cluster.program("nvidia-smi")
    if driver:
        cluster.install("nvidia-smi")
    cluster.on("nvidia-smi", "-L", stdout=GPU_LINE)
    cluster.install("ubuntu-drivers")
    cluster.on(
        "ubuntu-drivers",
        "install",
        mark=DRIVER,
        write=[(str(cluster.bin / "nvidia-smi"), smi, "755")] if driver_loads else None,
    )
    ctk = program + cluster.program("nvidia-ctk")
    if toolkit:
        cluster.install("nvidia-ctk")
    cluster.on("nvidia-ctk", "--version", stdout="NVIDIA Container Toolkit CLI version 1.17.8\n")
    cluster.on("nvidia-ctk", "runtime", "configure", mark=CONFIGURED)
    cluster.on(
        "apt-get",
        "install",
        "nvidia-container-toolkit",
        write=[(str(cluster.bin / "nvidia-ctk"), ctk, "755")],
    )
    cluster.on("systemctl", "restart", "docker", mark=RESTARTED)
    before = info("nvidia" if default else "runc", ("nvidia", "runc") if toolkit else ("runc",))
    cluster.on("docker", "info", stdout=before)
    cluster.on(
        "docker",
        "info",
        "--format",
        "{{.DefaultRuntime}}",
        stdout="nvidia\n" if default else "runc\n",
    )
    cluster.on("docker", "info", stdout=info("nvidia", ("nvidia", "runc")), after=RESTARTED)
    cluster.on(
        "docker", "info", "--format", "{{.DefaultRuntime}}", stdout="nvidia\n", after=RESTARTED
    )
    cluster.on("docker", "run", "--gpus", stdout=SMI)
    cluster.on("docker", "update", stdout="ok\n")
    mirror = cluster.root / "mirror" / "nvidia.github.io" / "libnvidia-container"
    mirror.mkdir(parents=True, exist_ok=True)
    (mirror / "gpgkey").write_bytes(Path(TEST_KEY).read_bytes())
    return {"TB_TEST_NVIDIA_KEY_FPR": TEST_KEY_FPR}


UPGRADED = "helm-upgraded"


def advertises(cluster: FakeCluster, count: int = 1, *, rollout_rc: int = 0) -> FakeCluster:
    """After `helm upgrade` the chart's device plugin rolls out (`rollout_rc`) and the node
    advertises `count` nvidia.com/gpu (0: never)."""
    from tests.fakes.cluster import node

    cluster.on("helm", "upgrade", "--install", stdout="Release has been upgraded.\n", mark=UPGRADED)
    cluster.on(
        "kubectl",
        "rollout",
        "status",
        rc=rollout_rc,
        stdout='daemon set "nvidia-device-plugin-daemonset" successfully rolled out\n',
    )
    cluster.on("kubectl", "get", "daemonsets", stdout='{"kind": "List", "items": []}')
    gpus = {"nvidia.com/gpu": str(count)} if count else None
    return cluster.nodes(node("laptop", "8", "16Gi", gpus=gpus), after=UPGRADED)
