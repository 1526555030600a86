"""Which hosts beyond the backend, the chart and the registries this install will need: the
container runtime's (or Windows host preparation's) when it will be installed, k3d's when
k3d will be downloaded, NVIDIA's registry for the NVIDIA device plugin.

`plan` reads them off its survey (`from_plan`); `install` asks before its survey, with reads
only (`before_gate`), and hands what it read on to the local-cluster survey.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from installer.decide import endpoints
from installer.decide import localcluster as lc
from installer.decide.drift import DockerRead
from installer.decide.errors import InstallerError
from installer.decide.model import Gpu, MachineFacts
from installer.decide.runtime import RuntimePlan
from installer.decide.settings import PlanConfig
from installer.decide.tooling import ToolChoice
from installer.decide.winhost import HostPlan
from installer.decide.winhostnet import winhost_urls

if TYPE_CHECKING:
    from installer.decide.localcluster_state import Local


@dataclass(frozen=True)
class Needs:
    tools: tuple[str, ...] = ()  # download URLs of tools beyond kubectl and helm (k3d)
    runtime: tuple[str, ...] = ()  # the runtime's hosts (endpoints.runtime_urls)
    nvidia: bool = False  # the chart's NVIDIA device plugin image will be pulled
    # What before_gate read, for the local-cluster survey to use instead of reading again.
    docker: DockerRead | None = None
    windows: HostPlan | None = None
    gpu: Gpu | None = None  # this machine's GPU, which the local cluster's reads reuse


def fetch_mirror(env: Mapping[str, str]) -> str | None:
    """The runtime's downloads come from TRACEBLOC_TOOLS_MIRROR when set: its https base,
    or "" for a directory on this machine (no host to reach)."""
    from installer.edges.tools import parse_mirror

    mirror = parse_mirror(env)
    if mirror is None:
        return None
    return mirror.base if mirror.kind == "url" else ""


def _k3d_url(choice: ToolChoice | None) -> tuple[str, ...]:
    if choice is not None and choice.source == "download" and not choice.fetched and choice.url:
        return (choice.url,)
    return ()


def combine(
    k3d: ToolChoice | None,
    runtime: RuntimePlan | None,
    env: Mapping[str, str],
    nvidia: bool,
    windows: HostPlan | None = None,
    gpu_host: RuntimePlan | None = None,
) -> Needs:
    """`gpu_host`: the GPU steps (NVIDIA's key and repository are fetch steps too)."""
    hosts = [
        *endpoints.runtime_urls(runtime, fetch_mirror(env)),
        *winhost_urls(windows),
        *endpoints.runtime_urls(gpu_host, fetch_mirror(env)),
    ]
    return Needs(_k3d_url(k3d), tuple(hosts), nvidia)


def from_plan(plan: Any, env: Mapping[str, str]) -> Needs:
    """What `plan` already read: the local-cluster survey's k3d and runtime plan, and the
    GPU plan (the chart's NVIDIA device plugin on)."""
    local: Local | None = getattr(plan, "local", None)
    gpu = plan.site.gpu
    nvidia = gpu.vendor == "nvidia" and gpu.chart_plugin
    if local is None or not local.managed:
        return Needs(nvidia=nvidia)
    k3d = local.k3d_choice
    if k3d is None:  # the survey stopped at Docker: k3d is resolved after it, as install does
        k3d = _resolve_k3d(env)
    return combine(k3d, local.runtime, env, nvidia, local.windows, local.gpu_host)


def before_gate(cfg: PlanConfig, env: Mapping[str, str], machine: MachineFacts, os_: str) -> Needs:
    """install's: only the engine's own local cluster brings these hosts, so a named
    kubeconfig or context (or a current context that is not the engine's) reads nothing."""
    from installer.commands import runtime
    from installer.edges import docker, kubeconfig
    from installer.edges.gpu import detect_gpu

    conn = cfg.probe.conn
    if conn.kubeconfig or conn.context:
        return Needs()
    try:
        decision = lc.decide(conn, kubeconfig.read_context(env, os_), lc.settings(env))
    except InstallerError:
        return Needs()  # the survey after the preflight says why, in its place
    if decision.manage is not True:
        return Needs()
    timeout = cfg.probe.timeout
    plan = info = host = None
    if os_ in ("linux", "darwin", "windows"):
        info = docker.read_info(env, os_, timeout=timeout)
        if info.state != "running" and os_ == "windows":
            host = _windows_plan(env, cfg.thresholds.min_mem_gib)
        elif info.state != "running":
            plan = runtime.survey(env, os_, info, machine, timeout=timeout)
    gpu = detect_gpu(env, os_, timeout=timeout)
    needs = combine(_resolve_k3d(env), plan, env, gpu.vendor == "nvidia", host)
    needs = dataclasses.replace(needs, runtime=needs.runtime + toolkit_urls(env, os_, gpu, info))
    return dataclasses.replace(needs, docker=info, windows=host, gpu=gpu)


def toolkit_urls(
    env: Mapping[str, str], os_: str, gpu: Gpu, info: DockerRead | None = None
) -> tuple[str, ...]:
    """NVIDIA's repository, when the GPU steps will install its container toolkit (an
    NVIDIA GPU listed on Linux, no nvidia-ctk, Docker not defaulting to the NVIDIA runtime):
    the key from it (or the mirror), and apt or dnf read the packages from it in any case."""
    from installer.decide.gpuhost import NVIDIA_REPO
    from installer.edges import toolpath

    if (
        os_ != "linux"
        or gpu.vendor != "nvidia"
        or toolpath.find_on_path("nvidia-ctk", env, "linux")
    ):
        return ()
    if info is not None and info.nvidia and info.default_runtime == "nvidia":
        return ()
    mirror = fetch_mirror(env)
    key = (f"{NVIDIA_REPO}/gpgkey",) if mirror is None else ((mirror,) if mirror else ())
    return (*key, f"{NVIDIA_REPO}/stable/")


def _windows_plan(env: Mapping[str, str], min_mem_gib: float) -> HostPlan | None:
    """The host preparation's plan, read as commands/localcluster's survey reads it (Docker
    does not answer, so no k3d cluster of ours holds the API port); None when its settings
    are bad input (the survey after the preflight says so, in its place)."""
    from installer.commands import winhost
    from installer.decide.redact import Redactor

    try:
        opts = winhost.options(env, min_mem_gib)
    except InstallerError:
        return None
    return winhost.survey(env, opts, Redactor(), our_cluster_running=False, docker_usable=False)[1]


def _resolve_k3d(env: Mapping[str, str]) -> ToolChoice | None:
    from installer.commands.tools import resolve_tool

    try:
        return resolve_tool("k3d", env)
    except InstallerError:
        return None
