"""The GPU steps' effects against the bash scripts', for the same workstation.

The scripts' own `install_nvidia_container_toolkit` (tracebloc/client
`scripts/lib/gpu-nvidia.sh` with `common.sh`, read from their repository when it is on this
machine, never copied here) runs in bash against the same fakes as the engine
(tests/fakes/gpu_host.py on runtime_host.py): the NVIDIA toolkit installed, Docker not yet
defaulting to it, the local GPU cluster running. Both sides' calls that change the machine
must be the same, except the one docs/behaviour.md's GPU table gives a reason for
(containerd's runtime: the host's containerd is not the cluster's).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.gpu_host import advertises, gpu_machine
from tests.fakes.localcluster import existing, listed, machine_without_cluster
from tests.fakes.runtime_host import linux_host
from tests.test_cli_install import env_for, fresh
from tests.test_runtime_script_parity import SAFE, TWIN_REPO

HARNESS = r"""
source "$TWIN/common.sh"
source "$TWIN/gpu-nvidia.sh"
export PATH="$FAKE_PATH"
log() { :; }; info() { :; }; success() { :; }; hint() { :; }; warn() { :; }
error() { echo "error: $*" >&2; exit 1; }
sleep() { :; }
install_nvidia_container_toolkit
"""
# Only the scripts: containerd's runtime (not carried, with its reason in docs/behaviour.md).
ONLY_SCRIPTS = {"nvidia-ctk runtime configure --runtime=containerd --set-as-default"}

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the Linux GPU steps"),
    pytest.mark.skipif(not (TWIN_REPO / "HEAD").exists(), reason="the scripts are not here"),
]


def workstation(cluster: FakeCluster) -> dict[str, str]:
    machine_without_cluster(fresh(cluster))
    env = {
        **linux_host(cluster, "ubuntu", docker="running", sudo="nopw"),
        **gpu_machine(cluster, default=False),
    }
    existing(cluster, "running", gpus=True, agents=0)
    cluster.on("systemctl", "restart", "docker", mark="restarted")  # it stops the cluster
    cluster.on("k3d", "cluster", "list", stdout=listed("stopped", agents=0), after="restarted")
    cluster.on("k3d", "cluster", "start", stdout="started\n", mark="started")
    cluster.on("k3d", "cluster", "list", stdout=listed("running", agents=0), after="started")
    # The scripts read k3d's table, not its JSON: the same cluster, running, before the restart.
    cluster.on("k3d", "cluster", "list", "--no-headers", stdout="tracebloc   1/1   0/0   true\n")
    advertises(cluster)
    return env


def changes(cluster: FakeCluster) -> set[str]:
    """The calls that change the machine, as one line each (sudo's own line dropped: the
    program it ran logs itself)."""
    out: set[str] = set()
    for entry in cluster.call_log():
        argv = [entry["tool"], *entry["argv"]]
        if argv[:3] == ["nvidia-ctk", "runtime", "configure"] or argv[:3] == [
            "systemctl",
            "restart",
            "docker",
        ]:
            out.add(" ".join(argv))
        elif argv[:3] == ["k3d", "cluster", "start"]:
            out.add(" ".join(argv))
    return out


def run_scripts(cluster: FakeCluster, env: dict[str, str], where: Path) -> None:
    where.mkdir(parents=True, exist_ok=True)
    for name in ("common.sh", "gpu-nvidia.sh"):
        text = subprocess.run(
            ["git", f"--git-dir={TWIN_REPO}", "show", f"HEAD:scripts/lib/{name}"],
            capture_output=True,
            check=True,
        ).stdout
        (where / name).write_bytes(text)
    safe = cluster.root / "safe-bin"
    safe.mkdir(exist_ok=True)
    for tool in (*SAFE, "awk", "timeout"):
        found = shutil.which(tool)
        if found and not (safe / tool).exists():
            (safe / tool).symlink_to(found)
    subprocess.run(
        [shutil.which("bash") or "/bin/bash", "-c", HARNESS],
        env={
            **cluster.env(**env),
            "TWIN": str(where),
            "FAKE_PATH": f"{cluster.bin}:{safe}",
            "CLUSTER_NAME": "tracebloc",
            "HOST_DATA_DIR": str(cluster.root / "scripts-data"),
        },
        cwd=cluster.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_docker_restart_under_a_running_gpu_cluster_has_the_scripts_effects(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    env = workstation(cluster)
    result = cluster.run("install", "--yes", **env_for(backend, **env))
    assert result.returncode == 0, result.stderr
    engine = changes(cluster)

    cluster.log_path.unlink()
    shutil.rmtree(cluster.scenario_path.parent / "marks", ignore_errors=True)  # a fresh state
    run_scripts(cluster, env, tmp_path / "scripts")
    scripts = changes(cluster)

    assert "k3d cluster start tracebloc --wait --timeout 5m" in scripts, scripts
    assert scripts - engine == ONLY_SCRIPTS
    assert engine - scripts == set()
