"""A machine the twins installed keeps behaving the same when the engine re-installs it.

For each scenario the engine runs `plan --values-out` as a process against a scripted
cluster (fake kubectl/helm on PATH), and the values it writes and the values each twin wrote
for the same machine (tests/twins/, read from the twins' scripts) are rendered through the
real upstream chart (tests/upstream/client) with the real `helm template`. The rendered
manifests must be equal, except for the differences listed in DIFFERENCES, each of which is
deliberate and explained in MIGRATION.md ("What the chart sees differently").
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.cluster import FakeCluster, node, release_row

HERE = Path(__file__).resolve().parent
CHART = HERE / "upstream" / "client"
TWINS = HERE / "twins"
HELM = HERE.parent / ".cache" / "bin" / ("helm.exe" if sys.platform == "win32" else "helm")
MIGRATION = HERE.parent / "MIGRATION.md"
CREDENTIALS = {"TRACEBLOC_CLIENT_ID": "client-7f3a", "TRACEBLOC_CLIENT_PASSWORD": "s3cr3t pass"}

pytestmark = [
    pytest.mark.helm,
    pytest.mark.skipif(not HELM.exists(), reason="run tests/tools/fetch_helm.py for the real helm"),
]


def k3d(*, agents: int = 1, gpu: bool = False) -> list[dict[str, Any]]:
    """The local cluster both twins created: k3d, one server and AGENTS agents, amd64."""
    names = ["k3d-tracebloc-server-0"] + [f"k3d-tracebloc-agent-{i}" for i in range(agents)]
    return [
        node(
            n,
            "8",
            "16Gi",
            arch="amd64",
            provider_id=f"k3s://{n}",
            gpus={"nvidia.com/gpu": "1"} if gpu else None,
        )
        for n in names
    ]


@dataclass(frozen=True)
class Scenario:
    env: dict[str, str] = field(default_factory=dict)
    nodes: list[dict[str, Any]] = field(default_factory=k3d)
    release: dict[str, Any] | None = None  # the installed release's values; None: absent
    setup: Callable[[FakeCluster], object] | None = None
    twins: tuple[str, ...] = ("bash",)


def nvidia(cluster: FakeCluster) -> None:
    # A fresh GPU cluster: this machine's GPU, k3s's `nvidia` RuntimeClass, no plugin yet.
    cluster.install("nvidia-smi")
    cluster.on("nvidia-smi", "-L", stdout="GPU 0: NVIDIA RTX A4000 (UUID: GPU-1)\n")
    cluster.runtime_class(True).daemonsets()


SCENARIOS = {
    "fresh-k3d": Scenario(twins=("bash", "ps1")),
    "reinstall-user-marker": Scenario(
        release={
            **{"clientId": "client-7f3a", "clientPassword": "s3cr3t pass"},
            "env": {
                "RESOURCE_LIMITS": "cpu=3,memory=6Gi",
                "RESOURCE_REQUESTS": "cpu=3,memory=6Gi",
                "RESOURCE_PROVENANCE": "user",
            },
        }
    ),
    "proxy-with-credentials": Scenario(
        env={
            "HTTPS_PROXY": "http://ana:p@ss:w0rd@proxy.corp.example:3128",
            "NO_PROXY": "localhost,127.0.0.1,.svc,.cluster.local",
        }
    ),
    "registry-mirror": Scenario(
        env={
            "TRACEBLOC_IMAGE_REGISTRY": "mirror.corp.example:5000",
            "TRACEBLOC_REGISTRY_USERNAME": "robot$tracebloc",
            "TRACEBLOC_REGISTRY_PASSWORD": "reg#pa:ss",
        }
    ),
    "host-dataset-dir": Scenario(env={"HOST_DATASET_DIR": "{datasets}"}),
    "nvidia-gpu": Scenario(setup=nvidia, twins=("bash", "ps1")),
    "node-local-storage": Scenario(env={"TB_STORAGE_MODE": "node-local"}, nodes=k3d(agents=0)),
    "staging-client-env": Scenario(env={"CLIENT_ENV": "staging"}),
}

# (scenario, twin) → {rendered difference: the MIGRATION.md heading that explains it}.
# A difference is "<Kind>/<name> <path>"; everything not listed must render identically.
RUNTIME_CLASS = "RuntimeClass nvidia on an NVIDIA cluster"
PLUGIN = "The device plugin belongs to the release"
DIFFERENCES: dict[tuple[str, str], dict[str, str]] = {
    ("nvidia-gpu", "bash"): {
        "Deployment/tracebloc-jobs-manager env RUNTIME_CLASS_NAME": RUNTIME_CLASS,
    },
    ("nvidia-gpu", "ps1"): {
        "DaemonSet/nvidia-device-plugin-daemonset": PLUGIN,
        # The chart's auto-upgrade may update the plugin it owns.
        "Role/tracebloc-auto-upgrade-gpu-device-plugin": PLUGIN,
        "RoleBinding/tracebloc-auto-upgrade-gpu-device-plugin": PLUGIN,
    },
}


def _identity(obj: dict[str, Any]) -> str:
    return f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"


def render(values: Path, namespace: str = "tracebloc") -> dict[str, dict[str, Any]]:
    result = subprocess.run(
        [
            str(HELM),
            "template",
            namespace,
            str(CHART),
            "--namespace",
            namespace,
            "--values",
            str(values),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"helm template failed for {values.name}:\n{result.stderr}"
    objects = [o for o in yaml.safe_load_all(result.stdout) if isinstance(o, dict)]
    return {_identity(o): o for o in objects}


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e.get("name"): e.get("value", e.get("valueFrom")) for e in container.get("env") or []}


def differences(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> set[str]:
    """What the chart rendered differently: objects only one side has, each container
    environment variable that differs, and any other changed field (checksum annotations,
    which only restate another difference, aside)."""
    found = {name for name in a.keys() ^ b.keys()}
    for name in a.keys() & b.keys():
        x, y = _strip(a[name]), _strip(b[name])
        if x == y:
            continue
        xc, yc = _containers(x), _containers(y)
        for key in set(_env_all(xc)) | set(_env_all(yc)):
            if _env_all(xc).get(key) != _env_all(yc).get(key):
                found.add(f"{name} env {key}")
        if _without_env(x) != _without_env(y):
            found.add(f"{name} {_first_path(_without_env(x), _without_env(y))}")
    return found


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    obj = yaml.safe_load(yaml.safe_dump(obj))
    for meta in (
        obj.get("metadata") or {},
        ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {},
    ):
        notes = meta.get("annotations") or {}
        for key in [k for k in notes if k.startswith("checksum/")]:
            del notes[key]
    return obj


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return list(pod.get("containers") or []) + list(pod.get("initContainers") or [])


def _env_all(containers: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for container in containers:
        merged.update({f"{k}": v for k, v in _env(container).items()})
    return merged


def _without_env(obj: dict[str, Any]) -> dict[str, Any]:
    obj = yaml.safe_load(yaml.safe_dump(obj))
    for container in _containers(obj):
        container.pop("env", None)
    return obj


def _first_path(x: Any, y: Any, path: str = "") -> str:
    if isinstance(x, dict) and isinstance(y, dict):
        for key in sorted(x.keys() | y.keys(), key=str):
            if x.get(key) != y.get(key):
                return _first_path(x.get(key), y.get(key), f"{path}.{key}")
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (p, q) in enumerate(zip(x, y, strict=True)):
            if p != q:
                return _first_path(p, q, f"{path}[{i}]")
    return path or "."


def engine_values(cluster: FakeCluster, scenario: Scenario, out: Path, datasets: Path) -> Path:
    # plan reads what install reads (the release list, its status, the repositories, the
    # metrics API); the kubeconfig's target is scripted last, so the k3d server is the one.
    cluster.nodes(*scenario.nodes)
    if scenario.release is None:
        cluster.installed().release_absent()
    else:
        cluster.installed(release_row()).status_of("tracebloc", "deployed")
        cluster.release_values(scenario.release)
    cluster.installable().view("k3d-tracebloc", "https://0.0.0.0:6550")
    if scenario.setup:
        scenario.setup(cluster)
    env = {k: v.replace("{datasets}", str(datasets)) for k, v in scenario.env.items()}
    result = cluster.run("plan", "--json", "--values-out", str(out), **CREDENTIALS, **env)
    assert result.returncode == 0, result.stderr
    return out


def twin_values(name: str, twin: str, out: Path) -> Path:
    text = (TWINS / f"{name}.{twin}.yaml").read_text(encoding="utf-8")
    if hasattr(os, "getuid"):
        text = text.replace("{uid}", str(os.getuid())).replace("{gid}", str(os.getgid()))
    out.write_text(text, encoding="utf-8")
    return out


CASES = [
    pytest.param(name, twin, id=f"{name}-vs-{twin}")
    for name, scenario in SCENARIOS.items()
    for twin in scenario.twins
]


@pytest.mark.parametrize(("name", "twin"), CASES)
def test_the_chart_sees_what_the_scripts_wrote(
    cluster: FakeCluster, tmp_path: Path, name: str, twin: str
) -> None:
    if name == "host-dataset-dir" and not hasattr(os, "getuid"):
        pytest.skip("HOST_UID/HOST_GID are a POSIX user's ids")
    datasets = tmp_path / "datasets"
    datasets.mkdir()
    ours = render(engine_values(cluster, SCENARIOS[name], tmp_path / "engine.yaml", datasets))
    theirs = render(twin_values(name, twin, tmp_path / f"{twin}.yaml"))
    expected = DIFFERENCES.get((name, twin), {})
    assert differences(ours, theirs) == set(expected)


def test_every_listed_difference_is_explained_in_migration() -> None:
    text = MIGRATION.read_text(encoding="utf-8")
    for reason in {r for listed in DIFFERENCES.values() for r in listed.values()}:
        assert f"### {reason}" in text, f"MIGRATION.md has no section '### {reason}'"


def test_the_comparison_sees_a_difference_the_chart_acts_on(tmp_path: Path) -> None:
    # The comparison itself can fail: SINGLE_NODE "false" (the engine's old answer on a
    # k3d server + agent) turns the chart's GPU→CPU fallback off, and is seen.
    base = yaml.safe_load((TWINS / "fresh-k3d.bash.yaml").read_text(encoding="utf-8"))
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(base), encoding="utf-8")
    base["env"]["SINGLE_NODE"] = "false"
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(base), encoding="utf-8")
    found = differences(render(tmp_path / "a.yaml"), render(tmp_path / "b.yaml"))
    assert "Deployment/tracebloc-jobs-manager env SINGLE_NODE" in found
