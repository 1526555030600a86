"""Where the client runs, from what the cluster shows (issue 10, reqs 1, 3, 4)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from installer.decide.locality import Locality
from installer.decide.model import Gpu, KubeTarget, NodeRead
from installer.decide.placement import (
    Plugins,
    PluginSet,
    locality,
    node_arch,
    plan_gpu,
    single_node,
)
from installer.edges.cluster import parse_plugins
from installer.edges.kubectl import parse_nodes, parse_target
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, daemonset, kubeconfig_view, node, nodes_json


def nodes(*items: dict[str, Any]) -> NodeRead:
    return parse_nodes(nodes_json(*items).encode())


K3D = nodes(
    node("k3d-tb-server-0", provider_id="k3s://k3d-tb-server-0"),
    node("k3d-tb-agent-0", provider_id="k3s://k3d-tb-agent-0"),
)
EKS = nodes(
    node("ip-10-0-1-7.ec2.internal", provider_id="aws:///eu-west-1a/i-0abc"),
    node("ip-10-0-2-9.ec2.internal", provider_id="aws:///eu-west-1b/i-0def"),
)
NO_VIEW = KubeTarget(False, reason="no kubeconfig")
UNREAD = NodeRead(readable=False, reason="refused")


@pytest.mark.parametrize(
    ("view", "read", "mode", "local"),
    [
        pytest.param(NO_VIEW, K3D, "hostpath", True, id="k3d-server-and-agent-names"),
        pytest.param(
            KubeTarget(True, "default", "https://127.0.0.1:6443"),
            nodes(node("box")),
            "hostpath",
            True,
            id="loopback-api-server",
        ),
        pytest.param(
            KubeTarget(True, "kind-dev", ""), nodes(node("x")), "hostpath", True, id="kind-context"
        ),
        pytest.param(
            KubeTarget(True, "kind-dev", "https://10.9.0.2:6443"),
            nodes(node("x")),
            "hostpath",
            None,
            id="kind-context-on-another-address-is-unknown",
        ),
        pytest.param(
            KubeTarget(True, "docker-desktop", "https://kubernetes.docker.internal:6443"),
            nodes(node("docker-desktop")),
            "hostpath",
            True,
            id="docker-desktop",
        ),
        pytest.param(NO_VIEW, UNREAD, "node-local", True, id="node-local-storage"),
        pytest.param(
            KubeTarget(True, "tunnel", "https://127.0.0.1:8443"),
            EKS,
            "hostpath",
            False,
            id="tunnel-to-a-cloud-cluster-is-not-local",
        ),
        pytest.param(
            KubeTarget(True, "prod", "https://10.1.2.3:6443"),
            nodes(node("a")),
            "hostpath",
            False,
            id="remote-bare-metal",
        ),
        pytest.param(NO_VIEW, UNREAD, "hostpath", None, id="nothing-readable"),
    ],
)
def test_locality_needs_positive_evidence(
    view: KubeTarget, read: NodeRead, mode: str, local: bool | None
) -> None:
    assert locality(view, read, mode).local is local


@pytest.mark.parametrize(
    ("where", "read", "mode", "expected"),
    [
        pytest.param(
            Locality(True, ""), K3D, "hostpath", ("true", None), id="k3d-one-host-two-nodes"
        ),
        pytest.param(Locality(False, ""), EKS, "hostpath", (None, None), id="cloud-left-to-chart"),
        pytest.param(
            Locality(True, ""),
            nodes(node("k3d-tb-server-0")),
            "node-local",
            ("true", True),
            id="node-local-one-node",
        ),
        pytest.param(
            Locality(True, ""), K3D, "node-local", ("true", None), id="node-local-two-nodes"
        ),
        pytest.param(Locality(True, ""), UNREAD, "node-local", ("true", None), id="nodes-unread"),
    ],
)
def test_single_node_keys(
    where: Locality, read: NodeRead, mode: str, expected: tuple[str | None, bool | None]
) -> None:
    assert single_node(where, read, mode) == expected


@pytest.mark.parametrize(
    ("read", "machine", "expected"),
    [
        pytest.param(
            nodes(node("a", arch="amd64")), "arm64", "x86_64", id="amd64-nodes-arm-laptop"
        ),
        pytest.param(
            nodes(node("a", arch="arm64")), "x86_64", "arm64", id="arm-nodes-rosetta-binary"
        ),
        pytest.param(
            nodes(node("a", arch="amd64"), node("b", arch="arm64")),
            "x86_64",
            "arm64+x86_64",
            id="mixed-nodes",
        ),
        pytest.param(
            nodes(node("a", arch="arm64", unschedulable=True), node("b", arch="amd64")),
            "arm64",
            "x86_64",
            id="cordoned-arm-node-does-not-count",
        ),
        pytest.param(nodes(node("a")), "arm64", "arm64", id="no-label-falls-back-to-machine"),
        pytest.param(UNREAD, "x86_64", "x86_64", id="unreadable-falls-back-to-machine"),
    ],
)
def test_mysql_arch_comes_from_the_nodes(read: NodeRead, machine: str, expected: str) -> None:
    assert node_arch(read, machine)[0] == expected


GPU_NODE = nodes(node("ip-1", gpus={"nvidia.com/gpu": "4"}, provider_id="aws:///a/i-1"))
LOCAL = Locality(True, "")
REMOTE = Locality(False, "")
NONE = Plugins(True)


def gpu(
    read: NodeRead = K3D,
    where: Locality = LOCAL,
    host: str | None = "nvidia",
    runtime: bool | None = True,
    plugins: Plugins | None = NONE,
    values: dict[str, Any] | None = None,
) -> Any:
    return plan_gpu(
        read, where, Gpu(host), runtime, plugins, values or {}, "tracebloc", "tracebloc"
    )


def test_remote_gpu_is_the_nodes_not_the_laptop() -> None:
    assert gpu(read=EKS, where=REMOTE, host="nvidia").vendor is None
    plan = gpu(
        read=GPU_NODE,
        where=REMOTE,
        host=None,
        plugins=Plugins(
            True, (PluginSet("gpu-operator", "nvidia-device-plugin-daemonset", "nvidia"),)
        ),
    )
    assert plan.vendor == "nvidia" and plan.chart_plugin is False
    assert "gpu-operator/nvidia-device-plugin-daemonset" in plan.notes[0]


def test_runtime_class_only_where_it_exists() -> None:
    assert gpu(runtime=True).runtime_class == "nvidia"
    assert gpu(runtime=False).runtime_class == ""
    assert gpu(runtime=None).runtime_class == ""
    assert gpu(host="amd", runtime=True).runtime_class == ""


def test_an_orphaned_plugin_from_an_older_installer_is_adopted() -> None:
    orphan = PluginSet("kube-system", "nvidia-device-plugin-daemonset", "nvidia")
    plan = gpu(plugins=Plugins(True, (orphan,)))
    assert plan.chart_plugin is True and plan.adopt == orphan


def test_the_releases_own_plugin_stays_on() -> None:
    ours = PluginSet(
        "kube-system", "nvidia-device-plugin-daemonset", "nvidia", "tracebloc", "tracebloc"
    )
    plan = gpu(
        read=nodes(node("k3d-tb-server-0", gpus={"nvidia.com/gpu": "1"})),
        plugins=Plugins(True, (ours,)),
    )
    assert plan.chart_plugin is True and plan.adopt is None and plan.notes == ()


def test_unlisted_plugins_keep_what_the_release_had() -> None:
    unread = Plugins(False, reason="forbidden")
    assert gpu(plugins=unread).chart_plugin is False
    kept = gpu(plugins=unread, values={"gpu": {"devicePlugin": {"enabled": True}}})
    assert kept.chart_plugin is True and "forbidden" in kept.notes[0]


def test_wsl2_nodes_get_cdi_not_the_nvml_plugin() -> None:
    wsl = nodes(node("k3d-tb-server-0", kernel="5.15.153.1-microsoft-standard-WSL2"))
    plan = gpu(read=wsl)
    assert plan.visible_devices == "nvidia.com/gpu=all" and plan.chart_plugin is False


def test_parsers_read_what_kubectl_prints() -> None:
    view = parse_target(json.dumps(kubeconfig_view("k3d-tb", "https://0.0.0.0:6550")).encode())
    assert (view.readable, view.context, view.server) == (True, "k3d-tb", "https://0.0.0.0:6550")
    assert parse_target(b"not json").readable is False
    found = parse_plugins(
        json.dumps(
            {
                "items": [
                    daemonset(
                        "nvidia-device-plugin-daemonset",
                        "kube-system",
                        "nvcr.io/nvidia/k8s-device-plugin:v0.14.5",
                    ),
                    daemonset("kube-proxy", "kube-system", "registry.k8s.io/kube-proxy:v1.29"),
                    daemonset(
                        "amdgpu-device-plugin-daemonset",
                        "kube-system",
                        "rocm/k8s-device-plugin",
                        ("x", "y"),
                    ),
                ]
            }
        ).encode()
    )
    assert [(p.name, p.vendor, p.release) for p in found.found] == [
        ("nvidia-device-plugin-daemonset", "nvidia", None),
        ("amdgpu-device-plugin-daemonset", "amd", "x"),
    ]


# --- through the CLI ------------------------------------------------------------------


def test_install_adopts_the_orphaned_plugin_before_helm(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cluster.nodes(node("k3d-tb-server-0", "8", "16Gi")).installed().installable()
    cluster.view("k3d-tb", "https://0.0.0.0:6550").runtime_class(True)
    cluster.daemonsets(
        daemonset(
            "nvidia-device-plugin-daemonset",
            "kube-system",
            "nvcr.io/nvidia/k8s-device-plugin:v0.14.5",
        )
    )
    cluster.on("kubectl", "label", stdout="daemonset labeled\n")
    cluster.on("kubectl", "annotate", stdout="daemonset annotated\n")
    cluster.install("nvidia-smi")
    cluster.on("nvidia-smi", "-L", stdout="GPU 0: NVIDIA RTX A4000 (UUID: GPU-1)\n")
    # Once the release owns the plugin, the node advertises the card (the GPU is verified).
    cluster.on("helm", "upgrade", "--install", stdout="upgraded\n", mark="upgraded")
    cluster.on("kubectl", "rollout", "status", stdout="rolled out\n")
    cluster.nodes(
        node("k3d-tb-server-0", "8", "16Gi", gpus={"nvidia.com/gpu": "1"}), after="upgraded"
    )
    result = cluster.run(
        "install",
        "--yes",
        TRACEBLOC_CLIENT_ID="client-7f3a",
        TRACEBLOC_CLIENT_PASSWORD="S3cret-pw",
        TRACEBLOC_BACKEND_URL=backend.url,
        TRACEBLOC_SKIP_PREFLIGHT="1",
        TB_METRICS_WAIT_S="0",
        TB_PLAIN="1",
    )
    assert result.returncode == 0, result.stderr
    order = [
        " ".join(a[:2]) for a in cluster.calls() if a[:1] in (["label"], ["annotate"], ["upgrade"])
    ]
    assert order == ["label daemonset", "annotate daemonset", "upgrade --install"]
    annotate = next(a for a in cluster.calls("kubectl") if a[0] == "annotate")
    assert "meta.helm.sh/release-name=tracebloc" in annotate
    assert "adopted into release tracebloc" in result.stdout
    written = yaml.safe_load(
        (cluster.home / ".tracebloc" / "values.yaml").read_text(encoding="utf-8")
    )
    assert written["env"]["RUNTIME_CLASS_NAME"] == "nvidia"
    assert written["env"]["SINGLE_NODE"] == "true"
    assert written["gpu"] == {"devicePlugin": {"enabled": True, "vendor": "nvidia"}}
    assert "GPU:            verified (1 nvidia.com/gpu advertised)" in result.stdout
