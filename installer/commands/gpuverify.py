"""After helm: the GPU verified, not assumed.

When the values request a GPU, wait (bounded) for the device plugin and a node advertising
the GPU; if none does, the release is upgraded once more with the CPU values and the
summary says why. Either way the summary gives the smoke-test command.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from installer.commands.install_plan import Plan
from installer.decide.gpuhost import CHECK_IMAGE
from installer.decide.model import Connection, Gpu, NodeRead
from installer.decide.placement import GpuPlan, plugin_name
from installer.decide.render import to_yaml, values_document
from installer.decide.settings import MAX_WAIT_S, env_number
from installer.edges import kubectl, poll
from installer.edges.apply import Tools
from installer.edges.call import NoAnswer

ROLLOUT_S = 120.0  # the scripts' bound on the plugin's rollout
NODES_S = 90.0  # and on the node advertising the GPU (18 looks, 5 s apart)
NODES_POLL_S = 5.0
RESOURCE = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu"}


@dataclass(frozen=True)
class GpuSeen:
    vendor: str
    count: int  # how many the nodes advertise, all schedulable nodes together
    reason: str = ""  # why not verified

    @property
    def verified(self) -> bool:
        return self.count > 0

    def line(self) -> str:
        if self.verified:
            return f"verified ({self.count} {RESOURCE[self.vendor]} advertised)"
        return f"not verified: {self.reason}"


def smoke_test(vendor: str) -> str:
    """A pod that asks for one GPU and runs the vendor's own tool (the scripts' GPU test)."""
    image, tool = (
        (CHECK_IMAGE, "nvidia-smi") if vendor == "nvidia" else ("rocm/rocm-terminal", "rocm-smi")
    )
    overrides = (
        '{"spec":{"containers":[{"name":"gpu-test","image":"' + image + '",'
        '"command":["' + tool + '"],"resources":{"limits":{"' + RESOURCE[vendor] + '":"1"}}}]}}'
    )
    return (
        f"kubectl run gpu-test --rm -it --restart=Never --image={image} --overrides='{overrides}'"
    )


def wait_s(env: Mapping[str, str]) -> float:
    """TB_GPU_WAIT_S: how long a node may take to advertise the GPU after helm."""
    return env_number(env, "TB_GPU_WAIT_S", NODES_S, zero_ok=False, most=MAX_WAIT_S)


def advertised(nodes: NodeRead, vendor: str) -> int:
    if not nodes.readable:
        return 0
    return sum(count for n in nodes.nodes if n.schedulable for v, count in n.gpus if v == vendor)


def verify(
    tools: Tools,
    conn: Connection,
    vendor: str,
    *,
    chart_plugin: bool,
    plugin_namespace: str = "kube-system",
    rollout_s: float = ROLLOUT_S,
    nodes_s: float = NODES_S,
    sleep: Callable[[float], None] = time.sleep,
) -> GpuSeen:
    """Bounded: the rollout (when the chart brings the plugin), then the nodes."""
    said = ""
    if chart_plugin:
        name = plugin_name(vendor)
        args = [
            "rollout",
            "status",
            f"daemonset/{name}",
            "-n",
            plugin_namespace,
            f"--timeout={int(rollout_s)}s",
            *conn.kubectl_flags(),
        ]
        result = tools.caller.answer(tools.kubectl, args, timeout=rollout_s + 15)
        if isinstance(result, NoAnswer):
            said = f"the device plugin's rollout could not be read ({result.reason})"
        elif result.rc != 0:
            said = (
                f"the device plugin {plugin_namespace}/{name} did not roll out within "
                f"{rollout_s:g}s"
            )

    def look() -> int:
        return advertised(
            kubectl.read_nodes(
                tools.kubectl,
                conn,
                timeout=tools.read_timeout,
                env=tools.env,
                redactor=tools.redactor,
            ),
            vendor,
        )

    polled = poll.until(look, nodes_s, NODES_POLL_S, sleep=sleep)
    count = polled.last or 0
    if count:
        return GpuSeen(vendor, count)
    reason = f"no node advertised {RESOURCE[vendor]} within {nodes_s:g}s" + (
        f" ({said})" if said else ""
    )
    return GpuSeen(vendor, 0, reason)


def cpu_values(plan: Plan, reason: str) -> bytes:
    """The plan's values with no GPU request and no device plugin: what the release carries
    when no node advertised the GPU."""
    site = dataclasses.replace(plan.site, gpu=GpuPlan(None, reason))
    values = values_document(
        plan.cfg, plan.facts.training, plan.facts.nodes, Gpu(None, reason=reason), plan.mysql, site
    )
    return to_yaml(values)
