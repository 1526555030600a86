"""The local k3d cluster as `plan` shows it and `install` starts from: the survey (reads
only): Docker, k3d, the cluster and its drift, the GPU's shape, what Docker or the Windows
host needs first, and every command bring_up would run, argv exactly."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from installer.commands import localcluster_create, localcluster_gpu, localcluster_windows
from installer.decide import gpucluster
from installer.decide import gpuhost as gh
from installer.decide import localcluster as lc
from installer.decide.drift import (
    DockerRead,
    Drift,
    Inspected,
    budget_machine,
    docker_remedy,
    drift,
)
from installer.decide.errors import BadInput, InstallerError
from installer.decide.localcluster import ClusterRead
from installer.decide.localcluster_state import ADOPT, CREATE, RECREATE, START, Local
from installer.decide.model import Gpu, KubeTarget, ListRead, MachineFacts
from installer.decide.redact import Redactor
from installer.decide.settings import PlanConfig
from installer.decide.tooling import Tool, ToolChoice
from installer.decide.winhost import HostPlan
from installer.edges import datadir, docker, k3d, kubeconfig


def commands_for(
    local: Local, data_dir: str, env: Mapping[str, str], os_: str, release: str
) -> tuple[tuple[str, ...], ...]:
    """Every docker/k3d command bring_up and release_dirs would run, argv exactly."""
    s = local.settings
    if s is None or not local.managed or local.action is None:
        return ()
    out: list[tuple[str, ...]] = []
    if local.action == RECREATE:  # its data under HOST_DATA_DIR is not touched
        out.append(("k3d", *lc.delete_args(s)))
    if local.action in (CREATE, RECREATE):
        files = localcluster_create.files_for(s, data_dir, env, os_ == "windows")
        args = lc.create_args(
            s, data_dir, gpu=local.gpu, files=files, ca_path=localcluster_create.ca_path(s)
        )
        out.append(("k3d", *args))
        nodes = lc.node_names(s)
    else:
        if local.action == START or restarts_docker(local):
            out.append(("k3d", *lc.start_args(s)))
        # Not read yet (Docker is set up first): the nodes a create of these settings made.
        nodes = list(local.cluster.nodes) if local.cluster else lc.node_names(s)
    if s.autostart and nodes:
        out.append(("docker", *lc.restart_args(nodes)))
    out.append(("k3d", *lc.merge_args(s)))
    if os_ == "windows" and s.storage_mode == "hostpath":
        out.append(("docker", *localcluster_create.exec_args(s, release)))
    return tuple(out)


def listed(local: Local, data_dir: str, env: Mapping[str, str], os_: str, release: str) -> Local:
    """The survey with its commands, and what runs instead if Docker's GPU check fails after
    the question: the cluster created for CPU (the settings as given), or a recreate's
    cluster kept as it is. Both are in the list the person agrees to."""
    commands = commands_for(local, data_dir, env, os_, release)
    plan = local.gpu_host
    cpu: Local | None = None
    if local.gpu and plan is not None and any(st.kind == gh.CHECK for st in plan.steps):
        if local.action == CREATE:
            cpu = dataclasses.replace(local, settings=lc.settings(env), gpu=False)
        elif local.action == RECREATE:
            cpu = dataclasses.replace(local, action=ADOPT, gpu=False)
    instead = commands_for(cpu, data_dir, env, os_, release) if cpu is not None else ()
    return dataclasses.replace(
        local, commands=commands, fallback=tuple(a for a in instead if a not in commands)
    )


def restarts_docker(local: Local) -> bool:
    """The GPU steps restart Docker under a running cluster of ours, which stops it: it is
    started again (listed, so it may run)."""
    plan = local.gpu_host
    return (
        local.action == ADOPT
        and plan is not None
        and any(step.kind == gh.RESTART for step in plan.steps)
    )


def find_k3d(env: Mapping[str, str], *, fetch: bool) -> Tool:
    """k3d through the verified-tools path: TRACEBLOC_K3D, a supported k3d on PATH, the
    cached pinned copy, or (only when `fetch`: install, never plan) the pinned download.
    Raises InstallerError saying why when there is none."""
    return choose_k3d(env, fetch=fetch).tool()


def choose_k3d(env: Mapping[str, str], *, fetch: bool) -> ToolChoice:
    from installer.commands.tools import ensure_tools, resolve_tool

    if fetch:
        return ensure_tools(["k3d"], env)["k3d"]
    return resolve_tool("k3d", env)


def survey(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor | None,
    machine: MachineFacts,
    os_: str,
    *,
    fetch: bool = False,
    seen: DockerRead | None = None,
    host: HostPlan | None = None,
    host_gpu: Gpu | None = None,
    gpu_checked: gh.Checked | None = None,
    empty: ListRead | None = None,
) -> Local:
    """`seen`, `host`, `host_gpu`: what the network preflight just read, not read again.
    `gpu_checked`: the GPU steps ran, and what their Docker-level check saw. `empty`: helm
    listed no release in the cluster before the question (a recreate's evidence)."""
    conn = cfg.probe.conn
    if conn.kubeconfig or conn.context:
        return Local(None, lc.decide(conn, KubeTarget(True), _unused()), machine)
    s = lc.settings(env)
    if s.dataset_dir and not os.path.isdir(s.dataset_dir):
        raise BadInput(
            f"HOST_DATASET_DIR={s.dataset_dir!r} is not a directory",
            "mount the dataset volume first, or unset HOST_DATASET_DIR",
        )
    decision = lc.decide(conn, kubeconfig.read_context(env, os_), s)
    if not decision.manage:
        return Local(s, decision, machine)
    timeout = cfg.probe.timeout
    problems: list[tuple[str, str]] = []
    info = seen or docker.read_info(env, os_, timeout=timeout, redactor=redactor)
    if info.state != "running":
        # Docker is installed or started first (after the confirmation), then surveyed again.
        from installer.commands import runtime

        if os_ == "windows":
            return localcluster_windows.windows_host(
                s, decision, machine, info, env, redactor, cfg.thresholds.min_mem_gib, host
            )
        plan = (
            runtime.survey(env, os_, info, machine, timeout=timeout)
            if os_ in ("linux", "darwin")
            else None
        )
        if plan is None or plan.refusal is not None or not plan.steps:
            said = info.reason or "Docker is not running"
            problems.append(
                (f"{said}; {plan.refusal[0]}", plan.refusal[1])
                if plan is not None and plan.refusal is not None
                else (said, docker_remedy(os_, info.state))
            )
            return Local(s, decision, machine, docker=info, problems=tuple(problems), runtime=plan)
        # No Docker: no cluster of ours exists, so the earlier data is decided now, before the plan.
        earlier = (
            tuple(datadir.leftovers(cfg.host_data_dir))
            if info.state == "missing" and s.leftover_guard
            else ()
        )
        gpu_plan = None
        if os_ == "linux" and gpu_checked is None:
            primed = any(step.kind == "prime" for step in plan.steps)
            gpu_plan = localcluster_gpu.gpu_plan(
                env, info, machine, timeout, creating=True, primed=primed
            )
        # Listed before the question too; bring_up stops if Docker then shows another state.
        known = kubeconfig.read_context(env, os_, f"k3d-{s.name}").server != ""
        predicted = START if info.state != "missing" and known else CREATE
        fit = gpucluster.GpuCluster(False, s)
        if predicted == CREATE and gpu_plan is not None and gpu_plan.reason not in gh.CPU_REASONS:
            # The GPU steps make Docker's GPU usable: the cluster listed is the GPU one.
            fit = gpucluster.decide(
                s,
                host_nvidia=True,
                action=CREATE,
                inspected=None,
                docker_nvidia=any(st.kind == gh.DEFAULT_RUNTIME for st in gpu_plan.steps)
                or info.nvidia,
            )
        # What a stopped cluster holds cannot be read: a recreate cannot be listed, so asked
        # for, it stops here, before the question, rather than after Docker starts.
        unread = predicted == START and s.recreate and gpu_plan is not None
        local = Local(
            fit.settings,
            decision,
            machine,
            docker=info,
            runtime=plan,
            leftovers=earlier,
            action=predicted,
            gpu=fit.access,
            gpu_host=gpu_plan if gpu_plan is not None and gpu_plan.steps else None,
            gpu_notes=gpu_plan.notes if gpu_plan else (),
            problems=(
                (gpucluster.recreate_unread(s, info.reason or "Docker is not running"),)
                if unread
                else ()
            ),
        )
        return listed(local, cfg.host_data_dir, env, os_, cfg.probe.release)
    machine = budget_machine(machine, info)
    try:
        chosen = choose_k3d(env, fetch=fetch)
        if chosen.source == "download" and not chosen.fetched:
            # plan: install downloads k3d first; with no k3d here, no k3d cluster was made
            # by it, so install would create one (plan shows the download and the create).
            cluster = ClusterRead(True, reason="k3d is to be downloaded first")
            tool = None
        else:
            tool = chosen.tool()
    except InstallerError as exc:
        problems.append((exc.message, exc.remedy))
        return Local(s, decision, machine, docker=info, problems=tuple(problems))
    if tool is not None:
        cluster = k3d.read_cluster(tool, s.name, env=env, timeout=timeout, redactor=redactor)
    if not cluster.readable:
        problems.append(
            (
                f"k3d could not list its clusters: {cluster.reason}",
                "check that Docker answers (docker ps), then run the installer again",
            )
        )
        return Local(
            s,
            decision,
            machine,
            docker=info,
            cluster=cluster,
            problems=tuple(problems),
            k3d_choice=chosen,
        )
    inspected: Inspected | None = None
    found: tuple[Drift, ...] = ()
    left: tuple[str, ...] = ()
    action = CREATE
    if cluster.present:
        action = START if not cluster.running else ADOPT
        inspected = docker.inspect(
            docker.find_docker(env, os_),
            s.server0,
            s.serverlb,
            env=env,
            timeout=timeout,
            redactor=redactor,
        )
        if not inspected.readable:
            problems.append(
                (
                    f"could not inspect the existing cluster {s.name}: {inspected.reason}",
                    "check `docker ps -a`, then run again",
                )
            )
        from installer.commands.tracebloc_cli import cli_as_typed

        found = tuple(drift(s, inspected, cli_as_typed(env, os_)))
    else:
        left = tuple(datadir.leftovers(cfg.host_data_dir)) if s.leftover_guard else ()
    if action in (CREATE, START):  # a running cluster of ours holds the port itself
        from installer.edges import ports

        # Tests point the check at a port of their own: the suite runs in parallel.
        address, port = (env.get("TB_TEST_API_PORT_PROBE") or lc.API_PORT).rsplit(":", 1)
        if ports.in_use(address, int(port)):
            problems.append(lc.port_taken(os_))
    from installer.commands.runtime import tier0_autostart

    host_nvidia, docker_nvidia = (
        localcluster_gpu.host_nvidia(env, os_, timeout, host_gpu),
        info.nvidia,
    )
    windows_note: tuple[str, ...] = ()
    if os_ == "windows" and host_nvidia:
        # Docker Desktop's stock k3s nodes cannot hand the card to pods: the scripts built a
        # CUDA node image for that, which the engine does not (MIGRATION.md, GPU machines).
        host_nvidia, windows_note = (
            False,
            (
                "this machine has an NVIDIA GPU, but on Windows the local cluster is created for "
                "CPU (its nodes would need a CUDA node image, which the installer does not build)",
            ),
        )
    gpu_plan = None
    if os_ == "linux" and gpu_checked is None:
        creating = action == CREATE or localcluster_gpu.may_recreate(s, action, inspected)
        gpu_plan = localcluster_gpu.gpu_plan(
            env, info, machine, timeout, creating=creating, primed=False, gpu=host_gpu
        )
        if gpu_plan is not None and gpu_plan.reason not in gh.CPU_REASONS:
            # The plan's steps make the GPU usable by Docker: the cluster is planned for it.
            host_nvidia = host_nvidia or gpu_plan.reason == "gpu-driver-missing"
            docker_nvidia = docker_nvidia or any(
                st.kind == gh.DEFAULT_RUNTIME for st in gpu_plan.steps
            )
    releases = (
        localcluster_gpu.releases(
            s,
            tool,
            env,
            redactor,
            os_,
            timeout,
            action=action,
            inspected=inspected,
            wanted=host_nvidia and docker_nvidia,
            empty=empty,
        )
        if tool is not None
        else None
    )
    fit = gpucluster.decide(
        s,
        host_nvidia=host_nvidia,
        docker_nvidia=docker_nvidia,
        action=action,
        inspected=inspected,
        nodes=cluster.nodes,
        check_failed=gpu_checked.failed if gpu_checked else "",
        recreate=s.recreate,
        releases=releases,
    )
    if fit.problem is not None:
        problems.append(fit.problem)
    action = fit.action or action
    gpu_notes = (*windows_note, *(gpu_plan.notes if gpu_plan else ()), *fit.notes)
    local = Local(
        fit.settings,
        decision,
        machine,
        docker=info,
        cluster=cluster,
        inspected=inspected,
        drift=found,
        action=action,
        gpu=fit.access,
        leftovers=left,
        problems=tuple(problems),
        k3d_choice=chosen,
        gpu_notes=gpu_notes,
        gpu_reason=fit.reason,
        gpu_host=gpu_plan if gpu_plan is not None and gpu_plan.steps else None,
        boot=tier0_autostart(env, os_, info),
        windows=localcluster_windows.daily_user(
            env, os_, redactor, cfg.thresholds.min_mem_gib, cluster.running
        ),
    )
    return listed(local, cfg.host_data_dir, env, os_, cfg.probe.release)


def _unused() -> lc.Settings:
    # The decision for an explicitly named cluster reads no settings at all.
    return lc.settings({})
