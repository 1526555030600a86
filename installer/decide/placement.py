"""Where the client will run, decided from what the cluster shows. Pure.

Does the whole cluster run on this machine (`env.SINGLE_NODE`, the GPU→CPU fallback)? Which
GPU do the pods get, under which RuntimeClass and device plugin? Which CPU architecture do
the nodes have (the MySQL engine)? Each answer carries its evidence, so `plan` can say why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from installer.decide.arch import engine_arch
from installer.decide.locality import Locality
from installer.decide.locality import where as decide_where
from installer.decide.model import Gpu, KubeTarget, NodeRead

WSL_KERNEL = "microsoft"  # a WSL2 kernel's release names Microsoft
CDI_SELECTOR = "nvidia.com/gpu=all"
DATASET_MOUNT = "/tracebloc-data"  # where the local cluster mounts HOST_DATASET_DIR


@dataclass(frozen=True)
class PluginSet:
    """A GPU device-plugin DaemonSet found in the cluster."""

    namespace: str
    name: str
    vendor: str
    release: str | None = None  # meta.helm.sh/release-name
    release_namespace: str | None = None


@dataclass(frozen=True)
class Plugins:
    readable: bool
    found: tuple[PluginSet, ...] = ()
    reason: str = ""


def locality(target: KubeTarget, nodes: NodeRead, storage_mode: str) -> Locality:
    """Does the whole cluster run on this machine? The one decision (decide/locality.py),
    over the kubeconfig's target, the nodes and the storage mode."""
    return decide_where(target, nodes, storage_mode=storage_mode)


def single_node(
    where: Locality, nodes: NodeRead, storage_mode: str
) -> tuple[str | None, bool | None]:
    """(`env.SINGLE_NODE`, `singleNode`); None leaves a key to the chart. `env.SINGLE_NODE` is
    "true" when the whole cluster runs here; `singleNode` is written only where the chart's
    default would be wrong (one measured node with hostPath off)."""
    env = "true" if where.local else None
    top = (
        True
        if (storage_mode == "node-local" and nodes.readable and nodes.schedulable_count == 1)
        else None
    )
    return env, top


def node_arch(nodes: NodeRead, machine_arch: str) -> tuple[str, str]:
    """(arch, where it was read) for the MySQL engine: the schedulable nodes' labels, or
    this machine when no node says (the rule before nodes were read)."""
    labelled = (
        sorted({engine_arch(n.arch) for n in nodes.nodes if n.schedulable and n.arch})
        if nodes.readable
        else []
    )
    if not labelled:
        return machine_arch, "this machine"
    if labelled == ["x86_64"]:
        return "x86_64", "the nodes"
    # A node that is not amd64 could be given the amd64-only 5.7 image: only 8.4 runs on all.
    return "+".join(labelled), "the nodes"


# --- GPU ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuPlan:
    vendor: str | None  # what the pods get; None: no GPU
    source: str  # why
    runtime_class: str = ""  # env.RUNTIME_CLASS_NAME
    visible_devices: str = ""  # env.GPU_VISIBLE_DEVICES, written only when non-empty
    chart_plugin: bool = False  # gpu.devicePlugin.enabled
    adopt: PluginSet | None = None  # an orphaned plugin to hand to the release first
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def gpu(self) -> Gpu:
        return Gpu(self.vendor, reason=self.source)


def cluster_gpu(nodes: NodeRead) -> str | None:
    """The vendor whose GPUs schedulable nodes advertise; NVIDIA first."""
    if not nodes.readable:
        return None
    vendors = {vendor for n in nodes.nodes if n.schedulable for vendor, count in n.gpus if count}
    return next((v for v in ("nvidia", "amd") if v in vendors), None)


def gpu_vendor(nodes: NodeRead, where: Locality, host: Gpu) -> tuple[str | None, str]:
    advertised = cluster_gpu(nodes)
    if advertised:
        return advertised, f"the cluster's nodes advertise {advertised}.com/gpu"
    if where.local and host.vendor:
        # Here and nothing advertises the GPU yet: the device plugin this install brings will.
        return host.vendor, f"this machine has a {host.vendor} GPU and the cluster runs here"
    if host.vendor:
        return None, (
            f"this machine has a {host.vendor} GPU, but the cluster's nodes "
            "advertise none and the cluster does not run here"
        )
    return None, host.reason or "no GPU on the nodes or this machine"


def _wsl_nodes(nodes: NodeRead) -> bool:
    return nodes.readable and any(WSL_KERNEL in n.kernel.lower() for n in nodes.nodes)


def plugin_name(vendor: str) -> str:
    """The chart's DaemonSet name, the one the old `kubectl apply` used."""
    return {"nvidia": "nvidia-device-plugin-daemonset", "amd": "amdgpu-device-plugin-daemonset"}[
        vendor
    ]


def plan_gpu(
    nodes: NodeRead,
    where: Locality,
    host: Gpu,
    runtime_class: bool | None,
    plugins: Plugins | None,
    release_values: Mapping[str, Any],
    release: str,
    namespace: str,
) -> GpuPlan:
    vendor, source = gpu_vendor(nodes, where, host)
    if vendor is None:
        return GpuPlan(None, source)
    runtime = "nvidia" if vendor == "nvidia" and runtime_class else ""
    if vendor == "nvidia" and where.local and _wsl_nodes(nodes):
        # WSL2: NVML cannot see the GPU (the plugin would advertise 0); pods get it through CDI.
        return GpuPlan(
            vendor,
            source,
            runtime,
            CDI_SELECTOR,
            False,
            notes=(
                "WSL2 nodes: the GPU reaches pods through CDI (GPU_VISIBLE_DEVICES); "
                "the chart's device plugin is left off",
            ),
        )
    ours = plugin_name(vendor)
    if plugins is None or not plugins.readable:
        kept = _chart_plugin_in(release_values)
        why = plugins.reason if plugins else "not read"
        return GpuPlan(
            vendor,
            source,
            runtime,
            "",
            kept,
            notes=(
                f"could not list the device plugins ({why}); the chart's plugin is "
                + ("kept on, as installed" if kept else "left off, so no node runs two"),
            ),
        )
    others = [
        p
        for p in plugins.found
        if p.vendor == vendor and not (p.release == release and p.release_namespace == namespace)
    ]
    orphans = [
        p for p in others if p.release is None and p.name == ours and p.namespace == "kube-system"
    ]
    foreign = [p for p in others if p not in orphans]
    if foreign:
        names = ", ".join(f"{p.namespace}/{p.name}" for p in foreign)
        return GpuPlan(
            vendor,
            source,
            runtime,
            "",
            False,
            notes=(
                f"a {vendor} device plugin already runs ({names}); the chart's plugin is left "
                "off so no node runs two",
            ),
        )
    if orphans:
        plugin = orphans[0]
        return GpuPlan(
            vendor,
            source,
            runtime,
            "",
            True,
            adopt=plugin,
            notes=(
                f"the device plugin {plugin.namespace}/{plugin.name}, applied by an older "
                f"installer, is adopted into release {release}",
            ),
        )
    if cluster_gpu(nodes) == vendor and not any(p.vendor == vendor for p in plugins.found):
        return GpuPlan(
            vendor,
            source,
            runtime,
            "",
            False,
            notes=(
                f"the nodes already advertise {vendor}.com/gpu without a device plugin this "
                "release owns; the chart's plugin is left off so no node runs two",
            ),
        )
    return GpuPlan(vendor, source, runtime, "", True)


def _chart_plugin_in(values: Mapping[str, Any]) -> bool:
    node: Any = values
    for key in ("gpu", "devicePlugin", "enabled"):
        node = node.get(key) if isinstance(node, Mapping) else None
    return node is True


# --- everything the values need from here ------------------------------------------------


@dataclass(frozen=True)
class Site:
    """The per-site decisions the values document carries. The default is "nothing seen":
    no key is written that the chart's own default should decide."""

    single_node_env: str | None = None
    single_node: bool | None = None
    gpu: GpuPlan = field(default_factory=lambda: GpuPlan(None, "not decided"))
    dataset_path: str | None = None
    host_ids: tuple[int, int] | None = None
    where: Locality = field(default_factory=lambda: Locality(None, "not read"))
    notes: tuple[str, ...] = ()
