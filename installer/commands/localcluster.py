"""The local k3d cluster as the first step of an install: the survey
(commands/localcluster_survey.py), then bring it up — create, start or adopt — merge and anchor the kube context,
and wait for the API. Nothing is created before Docker, k3d and the drift checks have all
answered; nothing is deleted except a partial cluster this run's own create left behind, or
(listed, TRACEBLOC_RECREATE_CLUSTER) the engine's own cluster recreated for the GPU.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping

from installer.commands import credentials, leftover_data, localcluster_create
from installer.commands.install_checks import recheck_docker_budget
from installer.commands.localcluster_survey import listed, survey
from installer.decide import gpuhost as gh
from installer.decide import localcluster as lc
from installer.decide import remedy
from installer.decide.drift import (
    created_by_engine,
)
from installer.decide.errors import InstallerError, ToolNotFound
from installer.decide.localcluster_state import ADOPT, CREATE, RECREATE, START, Local
from installer.decide.model import Gpu, ListRead, os_name
from installer.decide.redact import Redactor
from installer.decide.settings import PlanConfig
from installer.decide.tooling import Tool
from installer.decide.yesno import flag
from installer.edges import childio, docker, kubeconfig
from installer.present.ui import Ui


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


def readable_as_it_is(local: Local, env: Mapping[str, str], os_: str) -> bool:
    """A running cluster of ours that the current kube context already names: it can be
    read before `bring_up`, which for it would only merge the context again and set the
    restart policy (so a healthy re-run need not do either)."""
    s = local.settings
    if s is None or not local.managed or local.action != ADOPT or local.problems:
        return False
    if local.windows is not None:  # a daily user's steps are listed: the run carries them out
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
        local = listed(local, chosen.cfg.host_data_dir, env, os_, chosen.cfg.probe.release)
    return local, chosen


def _prepare_windows(
    local: Local,
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    *,
    interactive: bool,
    os_: str,
) -> None:
    from installer.commands import winhost

    exe, _ = winhost.engine_command()
    terminal = credentials.open_terminal(os_) if interactive else None
    running = local.cluster.running if local.cluster is not None else False
    shown = local.windows.steps if local.windows is not None else ()
    usable = local.docker is not None and local.docker.state == "running"
    winhost.prepare(
        exe,
        env,
        winhost.options(env, cfg.thresholds.min_mem_gib),
        redactor,
        cfg.host_data_dir,
        ask=terminal.ask if terminal is not None else None,
        say=ui.info,
        our_cluster_running=running,
        resume=flag(env, "TRACEBLOC_RESUME"),
        listed=tuple(step.key for step in shown),
        docker_usable=True if usable else None,
    )


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
    if local.windows is not None and local.docker is not None and local.docker.state == "running":
        # Docker works already: the daily user's half first, then this survey's cluster steps.
        _prepare_windows(local, cfg, env, redactor, ui, interactive=interactive, os_=os_)
        local = dataclasses.replace(local, windows=None)
    if local.windows is not None:  # WSL2 and Docker Desktop first, as the plan said
        _prepare_windows(local, cfg, env, redactor, ui, interactive=interactive, os_=os_)
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
        # The first survey listed what runs instead if Docker's GPU check fails.
        agreed = local.commands + (local.fallback if checked.failed else ())
        unlisted = [argv for argv in again.commands if argv not in agreed]
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
            empty=ListRead(True) if local.action == RECREATE else None,
        )
        blockers(again, ui)
        # A failed Docker GPU check makes the cluster for CPU, as that check's step says.
        agreed = local.commands + (local.fallback if checked.failed else ())
        unlisted = [a for a in again.commands if a not in agreed]
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
    elif local.action == RECREATE:  # listed as delete, then create; HOST_DATA_DIR untouched
        localcluster_create.delete(s, ui, run)
        try:
            localcluster_create.create(local, cfg, env, ui, run, os_)
        except InstallerError as exc:
            exc.message += (
                f" (the cluster {s.name} made without GPU access was deleted as listed; its "
                "data under HOST_DATA_DIR is kept)"
            )
            exc.args = (exc.message,)
            raise
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
        if local.action in (CREATE, RECREATE)
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
