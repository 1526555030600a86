"""The GPU side of the local-cluster survey (reads only): the steps that make this machine's
NVIDIA GPU usable by Docker, whether nvidia-smi lists one, and, before a recreate for the
GPU (TRACEBLOC_RECREATE_CLUSTER), what helm lists in the cluster."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from installer.decide import gpuhost as gh
from installer.decide import localcluster as lc
from installer.decide.drift import DockerRead, Inspected, created_by_engine
from installer.decide.localcluster_state import ADOPT, START
from installer.decide.model import Gpu, ListRead, MachineFacts
from installer.decide.redact import Redactor
from installer.decide.runtime import RuntimePlan
from installer.decide.tooling import Tool


def may_recreate(s: lc.Settings, action: str, inspected: Inspected | None) -> bool:
    """TRACEBLOC_RECREATE_CLUSTER may recreate this existing cluster for the GPU: then, as
    before a create, Docker's GPU check comes first."""
    server = inspected.server if inspected is not None else None
    return (
        s.recreate
        and action in (START, ADOPT)
        and created_by_engine(server)
        and server is not None
        and not server.gpus
    )


def releases(
    s: lc.Settings,
    k3d_tool: Tool,
    env: Mapping[str, str],
    redactor: Redactor | None,
    os_: str,
    timeout: float,
    *,
    action: str,
    inspected: Inspected | None,
    wanted: bool,
    empty: ListRead | None,
) -> ListRead | None:
    """What helm lists in a cluster the engine made without GPU access while the GPU is
    wanted (None: no recreate is in question, or it cannot run to be read). `empty`: the
    list read before the question, which the GPU steps since then leave as it was."""
    if not wanted or not may_recreate(s, action, inspected):
        return None
    if empty is not None:
        return empty
    if action != ADOPT:
        return None
    from installer.commands.localcluster_preview import releases_in

    return releases_in(s, k3d_tool, env, redactor, os_, timeout)


def gpu_plan(
    env: Mapping[str, str],
    info: DockerRead,
    machine: MachineFacts,
    timeout: float,
    *,
    creating: bool,
    primed: bool,
    gpu: Gpu | None = None,
) -> RuntimePlan | None:
    """Linux: the steps that make this machine's NVIDIA GPU usable by Docker (reads only);
    None without an NVIDIA GPU. The runtime's facts are read only when there is one."""
    from installer.commands import runtime
    from installer.edges import gpuhost

    facts = gpuhost.read_facts(env, info, timeout=timeout, gpu=gpu)
    if not facts.hardware:
        return None
    machine_facts = runtime.read_facts(env, "linux", info, machine, timeout)
    plan = gh.decide(facts, machine_facts, creating=creating, primed=primed)
    if plan is None:
        return None
    plan = runtime.test_key(plan, env, NVIDIA_TEST_KEY)
    return dataclasses.replace(plan, as_root=runtime.as_root(env))


NVIDIA_TEST_KEY = "TB_TEST_NVIDIA_KEY_FPR"  # tests only: a test key stands in for NVIDIA's


def host_nvidia(env: Mapping[str, str], os_: str, timeout: float, seen: Gpu | None) -> bool:
    """nvidia-smi lists a GPU here (read only once Docker answers: a cluster is decided)."""
    if seen is None:
        from installer.edges.gpu import detect_gpu

        seen = detect_gpu(env, os_, timeout=timeout)
    return seen.vendor == "nvidia"
