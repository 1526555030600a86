"""The local k3d cluster as the first step of an install: survey (reads only, also what
`plan` shows), then bring it up — create, start or adopt — merge and anchor the kube context,
and wait for the API. Nothing is created before Docker, k3d and the drift checks have all
answered; nothing is deleted except a partial cluster this run's own create left behind.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping

from installer.commands import credentials, leftover_data, localcluster_create
from installer.commands.install_checks import recheck_docker_budget
from installer.decide import gpucluster, remedy
from installer.decide import gpuhost as gh
from installer.decide import localcluster as lc
from installer.decide.drift import (
    DockerRead,
    Drift,
    Inspected,
    budget_machine,
    created_by_engine,
    docker_remedy,
    drift,
)
from installer.decide.errors import BadInput, InstallerError, ToolNotFound
from installer.decide.localcluster import ClusterRead
from installer.decide.localcluster_state import ADOPT, CREATE, START, Local
from installer.decide.model import Gpu, KubeTarget, MachineFacts, os_name
from installer.decide.redact import Redactor
from installer.decide.runtime import RuntimePlan
from installer.decide.settings import PlanConfig
from installer.decide.tooling import Tool, ToolChoice
from installer.decide.winhost import HostPlan
from installer.decide.yesno import flag
from installer.edges import childio, datadir, docker, k3d, kubeconfig
from installer.present.ui import Ui


def _windows_host(
    s: lc.Settings,
    decision: lc.Decision,
    machine: MachineFacts,
    info: DockerRead,
    env: Mapping[str, str],
    redactor: Redactor | None,
    min_mem_gib: float,
    host: HostPlan | None = None,
) -> Local:
    """Windows without a Docker that answers: the host preparation (commands/winhost.py) as the
    plan's first steps, or its blocker. `host`: the plan the network preflight read, if any."""
    from installer.commands import winhost

    if host is None:
        opts = winhost.options(env, min_mem_gib)
        # Docker does not answer, so no k3d cluster of ours can hold the API port.
        _, host = winhost.survey(
            env, opts, redactor or Redactor(), our_cluster_running=False, docker_usable=False
        )
    said = info.reason or "Docker is not running"
    if host.blockers:
        message, remedy = host.blockers[0]
        if host.unread:  # what the installer would have done for it is unknown: do it by hand
            remedy = (
                f"{docker_remedy('windows', info.state)} (the installer could not read "
                "this machine to prepare it; if that persists, run it with --verbose "
                "and send the log)"
            )
        return Local(
            s,
            decision,
            machine,
            docker=info,
            problems=((f"{said}; {message}", remedy),),
            windows=host,
        )
    if not host.steps:
        return Local(
            s,
            decision,
            machine,
            docker=info,
            problems=((said, docker_remedy("windows", info.state)),),
        )
    return Local(s, decision, machine, docker=info, windows=host)


def commands_for(
    local: Local, data_dir: str, env: Mapping[str, str], os_: str, release: str
) -> tuple[tuple[str, ...], ...]:
    """Every docker/k3d command bring_up and release_dirs would run, argv exactly."""
    s = local.settings
    if s is None or not local.managed or local.action is None:
        return ()
    out: list[tuple[str, ...]] = []
    if local.action == CREATE:
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
) -> Local:
    """`seen`, `host`, `host_gpu`: what the network preflight just read, not read again.
    `gpu_checked`: the GPU steps ran, and what their Docker-level check saw."""
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
            return _windows_host(
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
            gpu_plan = _gpu_plan(env, info, machine, timeout, creating=True, primed=primed)
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
        )
        return dataclasses.replace(
            local, commands=commands_for(local, cfg.host_data_dir, env, os_, cfg.probe.release)
        )
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
        from installer.commands.signin import cli_as_typed

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

    host_nvidia, docker_nvidia = _host_nvidia(env, os_, timeout, host_gpu), info.nvidia
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
        gpu_plan = _gpu_plan(
            env, info, machine, timeout, creating=action == CREATE, primed=False, gpu=host_gpu
        )
        if gpu_plan is not None and gpu_plan.reason not in gh.CPU_REASONS:
            # The plan's steps make the GPU usable by Docker: the cluster is planned for it.
            host_nvidia = host_nvidia or gpu_plan.reason == "gpu-driver-missing"
            docker_nvidia = docker_nvidia or any(
                st.kind == gh.DEFAULT_RUNTIME for st in gpu_plan.steps
            )
    fit = gpucluster.decide(
        s,
        host_nvidia=host_nvidia,
        docker_nvidia=docker_nvidia,
        action=action,
        inspected=inspected,
        nodes=cluster.nodes,
        check_failed=gpu_checked.failed if gpu_checked else "",
    )
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
    )
    return dataclasses.replace(
        local, commands=commands_for(local, cfg.host_data_dir, env, os_, cfg.probe.release)
    )


def _gpu_plan(
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


def gpu_steps(
    local: Local, env: Mapping[str, str], redactor: Redactor, ui: Ui, timeout: float
) -> gh.Checked:
    """The GPU steps the plan listed, after the question (and after Docker's own)."""
    from installer.edges import gpuhost

    plan = local.gpu_host
    if plan is None or not plan.steps:
        return gh.Checked(ran=False)
    with ui.step("Setting up this machine's NVIDIA GPU for Docker"):
        return gpuhost.carry_out(plan, env, redactor, ui.info, ui.warn, timeout=timeout)


def _host_nvidia(env: Mapping[str, str], os_: str, timeout: float, seen: Gpu | None) -> bool:
    """nvidia-smi lists a GPU here (read only once Docker answers: a cluster is decided)."""
    if seen is None:
        from installer.edges.gpu import detect_gpu

        seen = detect_gpu(env, os_, timeout=timeout)
    return seen.vendor == "nvidia"


def _unused() -> lc.Settings:
    # The decision for an explicitly named cluster reads no settings at all.
    return lc.settings({})


def readable_as_it_is(local: Local, env: Mapping[str, str], os_: str) -> bool:
    """A running cluster of ours that the current kube context already names: it can be
    read before `bring_up`, which for it would only merge the context again and set the
    restart policy (so a healthy re-run need not do either)."""
    s = local.settings
    if s is None or not local.managed or local.action != ADOPT or local.problems:
        return False
    if any(finding.level == "fail" for finding in local.drift):
        return False
    return kubeconfig.read_context(env, os_).context == s.context


def blocker(local: Local, *, terminal: bool) -> InstallerError | None:
    """What stops the local-cluster path before anyone is asked: no Docker, Docker stopped, no
    k3d, a drifted cluster, or a sudo password needed with no terminal. `plan` exits with it too."""
    s = local.settings
    if local.decision.manage is None:
        return InstallerError(
            f"cannot tell which cluster to install into: {local.decision.reason}",
            "fix the kubeconfig, or name the cluster with --kubeconfig/--context",
        )
    if s is None or not local.managed:
        return None
    for message, fix in local.problems:
        return InstallerError(message, fix)
    failed = [f for f in local.drift if f.level == "fail"]
    if failed:
        return InstallerError(
            f"the existing cluster {s.name} does not match this install; nothing was changed",
            failed[0].remedy,
        )
    runtime = local.runtime
    if (
        not terminal
        and runtime is not None
        and runtime.refusal is None
        and any(step.kind == "prime" for step in runtime.steps)
    ):
        return InstallerError(
            f"Docker must be set up as administrator ({runtime.reason}), sudo needs a password "
            "and there is no terminal to type it on; nothing was changed and no credentials "
            "were sent",
            "run it again in a terminal, as root, or as a user whose sudo needs no password; "
            "or ask an administrator to run: sudo TB_PREPARE_USER=<your user> "
            "tracebloc-installer prepare-host",
        )
    return None


def blockers(local: Local, ui: Ui) -> None:
    """Raise the blocker, after showing every drift finding; else show the remedies of
    the warnings."""
    if local.managed:
        for finding in local.drift:
            (ui.error if finding.level == "fail" else ui.warn)(finding.message)
    found = blocker(local, terminal=credentials.open_terminal(os_name(sys.platform)) is not None)
    if found is not None:
        raise found
    if local.managed:
        for finding in local.drift:
            for line in finding.remedy.splitlines():
                ui.info(f"  {line}")


def leftover_choice(
    local: Local, cfg: PlanConfig, env: Mapping[str, str], ui: Ui, *, interactive: bool, os_: str
) -> tuple[Local, leftover_data.Choice]:
    """Before the plan is shown: what to do with an earlier client's data (a choice, not
    the go-ahead). Another directory chosen is the cluster's `-v` mount, so the commands
    the plan lists are built again for it; a wipe waits for the go-ahead (bring_up)."""
    new = local.action == CREATE or (local.runtime is not None and bool(local.leftovers))
    if local.settings is None or not local.managed or not new:
        return local, leftover_data.Choice(cfg)
    chosen = leftover_data.guard(local, cfg, env, ui, interactive=interactive, os_=os_)
    if chosen.cfg.host_data_dir != cfg.host_data_dir:
        local = dataclasses.replace(
            local,
            commands=commands_for(
                local, chosen.cfg.host_data_dir, env, os_, chosen.cfg.probe.release
            ),
        )
    return local, chosen


def bring_up(
    local: Local,
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    *,
    interactive: bool,
    os_: str,
    kubectl: Tool,
    chosen: leftover_data.Choice | None = None,
) -> tuple[PlanConfig, Local]:
    """Create, start or adopt the cluster with the survey's k3d and wait for its API with the
    resolved kubectl; returns the config and the survey the cluster was made from. Called
    after `blockers`, `leftover_choice` and the one question."""
    s = local.settings
    if s is None or not local.managed:
        return cfg, local
    if local.windows is not None:  # WSL2 and Docker Desktop first, as the plan said
        from installer.commands import winhost

        exe, _ = winhost.engine_command()
        terminal = credentials.open_terminal(os_) if interactive else None
        winhost.prepare(
            exe,
            env,
            winhost.options(env, cfg.thresholds.min_mem_gib),
            redactor,
            cfg.host_data_dir,
            ask=terminal.ask if terminal is not None else None,
            say=ui.info,
            our_cluster_running=False,
            resume=flag(env, "TRACEBLOC_RESUME"),
        )
        again = survey(cfg, env, redactor, local.machine, os_, fetch=True)
        if again.windows is not None:
            raise InstallerError(
                "Docker Desktop still does not answer after it was set up",
                "start Docker Desktop, wait until it says it is running, "
                "then run the installer again",
            )
        blockers(again, ui)
        recheck_docker_budget(cfg, ui, again.machine)
        return bring_up(
            again, cfg, env, redactor, ui, interactive=interactive, os_=os_, kubectl=kubectl
        )
    if local.runtime is not None:  # Docker installed or started first, as the plan said
        from installer.commands import runtime

        runtime.carry_out(local.runtime, env, redactor, ui)
        checked = gpu_steps(local, env, redactor, ui, cfg.probe.timeout)
        # The runtime plan held the autostart: none again from the survey that follows.
        again = dataclasses.replace(
            survey(cfg, env, redactor, local.machine, os_, fetch=True, gpu_checked=checked), boot=()
        )
        if again.runtime is not None:
            raise InstallerError(
                "Docker still does not answer after it was set up",
                "check `docker info`, then run the installer again",
            )
        blockers(again, ui)
        unlisted = [argv for argv in again.commands if argv not in local.commands]
        if unlisted:
            raise InstallerError(
                f"once Docker answered, the local cluster {s.name} needs "
                f"`{remedy.command(unlisted[0])}`, which was not in the list you agreed to: "
                "Docker was set up as listed, nothing else was changed",
                "run the installer again: its list then shows what the cluster needs now",
            )
        recheck_docker_budget(cfg, ui, again.machine)
        return bring_up(
            again,
            cfg,
            env,
            redactor,
            ui,
            interactive=interactive,
            os_=os_,
            kubectl=kubectl,
            chosen=chosen if chosen and chosen.said else None,
        )
    if local.gpu_host is not None:  # the GPU made usable by Docker first, as the plan said
        checked = gpu_steps(local, env, redactor, ui, cfg.probe.timeout)
        # Only the Docker-level check ran: Docker and the driver are as they were read.
        same = all(step.kind == gh.CHECK for step in local.gpu_host.steps)
        again = survey(
            cfg,
            env,
            redactor,
            local.machine,
            os_,
            fetch=True,
            gpu_checked=checked,
            seen=local.docker if same else None,
            host_gpu=Gpu("nvidia") if same else None,
        )
        blockers(again, ui)
        # A failed Docker GPU check makes the cluster for CPU, as that check's step says.
        unlisted = [a for a in again.commands if a not in local.commands and not checked.failed]
        if unlisted:
            raise InstallerError(
                f"once the GPU was set up for Docker, the local cluster {s.name} needs "
                f"`{remedy.command(unlisted[0])}`, which was not in the list you agreed to: "
                "the GPU steps ran as listed, nothing else was changed",
                "run the installer again: its list then shows what the cluster needs now",
            )
        return bring_up(
            again,
            cfg,
            env,
            redactor,
            ui,
            interactive=interactive,
            os_=os_,
            kubectl=kubectl,
            chosen=chosen,
        )
    run = localcluster_create.Runner(env, redactor, os_, local.k3d)
    if local.action == CREATE:
        if chosen is None:  # Docker was set up first: no survey before the plan could look
            chosen = leftover_data.guard(local, cfg, env, ui, interactive=interactive, os_=os_)
        cfg = leftover_data.carry_out(chosen, ui)
        localcluster_create.create(local, cfg, env, ui, run, os_)
    elif local.action == START:
        with ui.step(f"Starting the local cluster {s.name}"):
            result = run.k3d(lc.start_args(s), lc.START_TIMEOUT_S + 30, "starting the cluster")
        if result.rc != 0:
            raise InstallerError(
                f"k3d could not start the cluster {s.name}: "
                f"{childio.last_line(result.stderr, result.rc)}",
                "check that Docker is running, then run the installer again",
            )
    else:
        ui.info(f"using the running local cluster {s.name}")
    nodes = (
        lc.node_names(s)
        if local.action == CREATE
        else list(local.cluster.nodes if local.cluster else ())
    )
    if s.autostart and nodes:
        try:
            result = run.docker(lc.restart_args(nodes), cfg.probe.timeout * 3)
            if result.rc != 0:
                ui.warn(
                    f"could not set the restart policy of the cluster's nodes "
                    f"({childio.last_line(result.stderr, result.rc)}); after a reboot run "
                    f"`k3d cluster start {s.name}`"
                )
        except InstallerError as exc:
            ui.warn(f"could not set the restart policy of the cluster's nodes: {exc.message}")
    localcluster_create.merge(s, env, ui, run, os_)
    localcluster_create.wait_for_api(s, env, ui, redactor, kubectl)
    if local.boot:
        from installer.commands import runtime

        runtime.carry_out_boot(local.boot, env, redactor, ui)
    return cfg, local


def created_by_engine_check(
    env: Mapping[str, str], os_: str, name: str, timeout: float
) -> bool | None:
    """Whether the engine created the local cluster `name` (its runtime label); None when
    Docker could not say. For `uninstall --delete-cluster`: delete only on True."""
    s = dataclasses.replace(lc.settings({}), name=name)
    try:
        tool = docker.find_docker(env, os_)
    except ToolNotFound:
        return None
    seen = docker.inspect(tool, s.server0, s.serverlb, env=env, timeout=timeout)
    if not seen.readable:
        return None
    return created_by_engine(seen.server)
