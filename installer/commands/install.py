"""`install`: execute the plan, safely, on a machine that may already run a client.

Under the install lock (edges/lock.py): first the reads and checks that change nothing
(commands/install_reads.py, install_checks.py), then the one question (commands/asking.py),
then the changes (commands/install_changes.py), ending with the wait until the client is
connected (exit 0). Nothing outside the engine's own directory changes before a yes.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence

from installer.commands import (
    cluster_reads,
    credentials,
    gpuverify,
    install_changes,
    localcluster,
    localcluster_survey,
    shellpath,
    signin,
)
from installer.commands.asking import (
    ask_once,
    leftover_lines,
    local_context,
    local_heading,
    target_context,
    terminal_or_refuse,
)
from installer.commands.install_checks import (
    check_network,
    guard_before_credentials,
    obtain_credentials,
    run_preflight,
    signin_wanted,
)
from installer.commands.install_plan import chart_version, make_plan
from installer.commands.install_reads import decide_target, find_tools, read_cluster, settle
from installer.commands.leftover_data import clear_trash
from installer.commands.localcluster_preview import guard_unmerged, with_merge_hint
from installer.commands.steps import hold_to, minted_later, steps
from installer.commands.tools import typed_conn
from installer.decide import install_verdict
from installer.decide.errors import InstallerError
from installer.decide.localcluster_state import ADOPT, CREATE, RECREATE, Local
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.decide.settings import InstallSettings, PlanConfig
from installer.edges import lock, tempdirs
from installer.edges.machine import read_machine
from installer.present import changes
from installer.present.changes import Change
from installer.present.report import sizing_warnings
from installer.present.summary import Outcome
from installer.present.target import target_lines
from installer.present.ui import Ui


def install(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    *,
    interactive: bool,
    settings: InstallSettings,
) -> Outcome:
    """The whole install under the lock (edges/lock.py): one install at a time per data
    directory and per release; a second one is refused before it asks or changes anything."""
    locks = lock.scope(env, cfg.host_data_dir, cfg.probe.namespace, cfg.probe.release)
    what = f"install of release {cfg.probe.release} in namespace {cfg.probe.namespace}"
    made: list[str] = []
    with lock.hold(locks, what=what) as held:
        clear_trash(cfg.host_data_dir, ui)  # a wipe killed midway, agreed to then
        tempdirs.sweep()  # scratch copies (a kubeconfig, values) a killed run left behind
        try:
            return _install(
                cfg,
                env,
                redactor,
                ui,
                interactive=interactive,
                settings=settings,
                held=held,
                made=made,
            )
        except InstallerError as exc:
            said_after(exc, made)
            raise


def said_after(exc: InstallerError, made: Sequence[str]) -> None:
    """A stop after listed changes were made never says "nothing was changed": it names
    what was made, as agreed to, and that nothing else was."""
    if not made:
        return
    done = "nothing else was changed (made as listed: " + "; ".join(made) + ")"
    exc.message = exc.message.replace("nothing was changed", done)
    exc.remedy = exc.remedy.replace("nothing was changed", done)
    exc.args = (exc.message,)


def local_made(before: Local, after: Local) -> list[str]:
    """What bring_up changed on the machine, in the list's words."""
    running = before.docker is not None and before.docker.state == "running"
    host = before.windows is not None and not running
    made = ["Docker set up"] if before.runtime is not None or host else []
    if before.windows is not None and running:
        made.append(f"the Windows steps for {before.windows.user} run (each result said above)")
    name = after.settings.name if after.settings is not None else "tracebloc"
    if after.action in (CREATE, RECREATE):
        made.append(f"the local cluster {name} {after.action}d")
    elif after.action != ADOPT and after.action is not None:
        made.append(f"the local cluster {name} started")
    return made


def _install(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    *,
    interactive: bool,
    settings: InstallSettings,
    held: lock.Held,
    made: list[str],
) -> Outcome:
    """`made` gathers the listed changes made so far (a later stop names them)."""
    notes: list[str] = []
    approved: list[Change] = []  # the local path's list, agreed to before the cluster is up
    os_ = os_name(sys.platform)
    gpu_wait_s = gpuverify.wait_s(env)  # bad input stops the run here, before any change
    machine = read_machine(env)  # once: the preflight and the sizing read the same facts
    resolved, read = check_network(cfg, env, ui, machine)  # before any download, question, change
    tools, chosen = find_tools(cfg, env, redactor, machine, resolved)
    conn = typed_conn(cfg.probe.conn, env, tools.helm.path, tools.kubectl.path)
    cfg = dataclasses.replace(cfg, probe=dataclasses.replace(cfg.probe, conn=conn))
    # The local k3d cluster, when nobody named another: Docker's budget is the machine.
    local = localcluster_survey.survey(
        cfg,
        env,
        redactor,
        machine,
        os_,
        fetch=True,
        seen=read.docker,
        host=read.windows,
        host_gpu=read.gpu,
    )
    fetched = changes.downloads({**chosen, **local.choices})
    links = shellpath.links({**chosen, **local.choices}, env, os_)
    machine = local.machine
    signs_in = signin_wanted(cfg, env)  # browser sign-in through the tracebloc CLI
    if local.decision.manage is False:
        cluster = read_cluster(cfg, env, ui, tools, settings, read.gpu)
        found, unchanged = settle(
            cfg, env, redactor, ui, tools, cluster, machine, local, chosen, settings
        )
        if unchanged is not None:
            return unchanged
        guard_before_credentials(cfg, env, cluster, interactive=interactive)
        run_preflight(cfg, env, ui, machine, cluster)
        terminal_or_refuse(interactive)
        cfg = obtain_credentials(cfg, env, redactor, ui, interactive=interactive, cluster=cluster)
    else:
        # Blockers (Docker, k3d, drift, the guard) are known before anyone is asked.
        localcluster.blockers(local, ui)
        if local.settings is not None:  # one install at a time makes or adopts this cluster
            held.add(lock.cluster_lock(env, cfg.host_data_dir, local.settings.name))
        # One that runs and is already the current context is read first, as it is.
        early = None
        if localcluster.readable_as_it_is(local, env, os_):
            early = cluster_reads.read_cluster(
                cfg,
                env,
                redactor,
                helm_tool=tools.helm,
                kubectl_tool=tools.kubectl,
                os_=os_,
                repos=cfg.chart_is_default,
                metrics=settings.metrics_wait_s > 0,
                gpu=read.gpu,
            )
            if not early.listing.readable or early.repos_error is not None:
                early = None  # read again once it is up, and stopped there if need be
        if early is not None:
            found, unchanged = settle(
                cfg, env, redactor, ui, tools, early, machine, local, chosen, settings
            )
            if unchanged is not None:
                return unchanged
            guard_before_credentials(cfg, env, early, interactive=interactive)
        unmerged = (
            None
            if early is not None
            else guard_unmerged(
                local,
                cfg,
                env,
                redactor,
                os_,
                helm_tool=tools.helm,
                kubectl_tool=tools.kubectl,
                interactive=interactive,
                gpu=read.gpu,
            )
        )
        run_preflight(
            cfg,
            env,
            ui,
            machine,
            docker_root=local.docker.root_dir if local.docker is not None else "",
        )
        terminal_or_refuse(interactive)
        # A choice, not the go-ahead: the plan below shows the data directory it mounts.
        # This run's log and lock stay where they were written (a declined run names them).
        written_in = cfg.host_data_dir
        local, kept = localcluster.leftover_choice(
            local, cfg, env, ui, interactive=interactive, os_=os_
        )
        cfg = kept.cfg
        # A sign-in waits for the cluster read; without a terminal or CLI, credentials come first.
        signs_in = signs_in and signin.can_sign_in(env, credentials.open_terminal(os_))
        if not signs_in:
            cfg = obtain_credentials(cfg, env, redactor, ui, interactive=interactive)
            seen = early if early is not None else unmerged  # read as it is, before the question
            refused = (
                install_verdict.before_credentials(cfg, seen, cfg.client_id)
                if seen is not None
                else None
            )
            if refused is not None and refused.error is not None:
                raise refused.error if early is not None else with_merge_hint(refused.error, local)
        listed = minted_later(cfg) if signs_in else cfg
        approved = steps(
            listed,
            env,
            local=local,
            set_context_namespace=settings.set_context_namespace,
            links=links,
        )
        ask_once(
            approved,
            fetched,
            ui,
            interactive=interactive,
            data_dir=written_in,
            heading=local_heading(local, listed) + leftover_lines(kept.said),
            context=local_context(local, listed, kept.said),
        )
        # The survey the cluster was made from: when Docker was set up first, it was read
        # again once Docker answered, and the GPU the values request is decided from that.
        before = local
        cfg, local = localcluster.bring_up(
            local,
            cfg,
            env,
            redactor,
            ui,
            interactive=interactive,
            os_=os_,
            kubectl=tools.kubectl,
            chosen=kept,
        )
        made += local_made(before, local)
        cluster = read_cluster(cfg, env, ui, tools, settings, read.gpu)
        if early is None:
            found, unchanged = settle(
                cfg, env, redactor, ui, tools, cluster, machine, local, chosen, settings
            )
            if unchanged is not None:
                return unchanged
        if signs_in:
            cfg = obtain_credentials(
                cfg, env, redactor, ui, interactive=interactive, cluster=cluster
            )
    # A sign-in may have named the namespace: that release is locked too (a no-op otherwise).
    held.add(lock.release_lock(env, cfg.host_data_dir, cfg.probe.namespace, cfg.probe.release))
    verdict = decide_target(cfg, cluster, ui)
    cfg = install_verdict.moved(cfg, verdict)
    if verdict.target is not None and verdict.target.moved:  # that release is locked too
        held.add(lock.release_lock(env, cfg.host_data_dir, cfg.probe.namespace, cfg.probe.release))
    plan = make_plan(
        cfg,
        env,
        redactor,
        release=install_verdict.release_for_sizing(cfg, cluster, verdict),
        machine=machine,
        nodes=cluster.nodes,
        gpu=cluster.gpu,
        local=local,
        tool_choices=chosen,
        kube=cluster.target,
    )
    plan = dataclasses.replace(
        plan,
        verdict=verdict,
        kube=cluster.target,
        chart_version=chart_version(cfg.chart),
        set_context_namespace=settings.set_context_namespace,
    )
    planned = steps(
        cfg,
        env,
        set_context_namespace=settings.set_context_namespace,
        local=None if local.managed else local,
        verdict=verdict,
        plan=plan,
        links=links,
    )
    if local.managed:  # agreed to before the cluster was up: what is left must be in that list
        hold_to(approved, planned, minted=cfg.probe.namespace if signs_in else None)
    for warning in sizing_warnings(plan.facts):  # as `plan` says it, before the question
        ui.warn(warning)
    # On the local path the question came before the cluster: the sizing is shown, not asked.
    ask_once(
        planned,
        [] if local.managed else fetched,
        ui,
        interactive=interactive and not local.managed,
        data_dir=cfg.host_data_dir,
        heading=target_lines(plan),
        notes=plan.notes,
        context=target_context(plan),
        shown_before=local.managed,
    )
    # --- from here on, things change ---
    return install_changes.carry_out(
        cfg,
        env,
        redactor,
        ui,
        tools,
        plan=plan,
        verdict=verdict,
        cluster=cluster,
        local=local,
        settings=settings,
        index_fresh=found.index_fresh,
        notes=notes,
        links=links,
        signs_in=signs_in,
        gpu_wait_s=gpu_wait_s,
    )
