"""What install reads before its one question and changes nothing: the tools it cannot do
without, the one overlapped cluster read, the guard's verdict, and whether a healthy client
is already there (then the run ends, left as it is)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from installer.commands import already_installed, cluster_reads, tracebloc_cli
from installer.commands.reboot import after_reboot
from installer.commands.tools import REQUIRED, ensure_tools, this_settings
from installer.decide import install_verdict
from installer.decide.cluster_reads import ClusterRead
from installer.decide.localcluster_state import Local
from installer.decide.model import Gpu, MachineFacts, os_name
from installer.decide.redact import Redactor
from installer.decide.settings import InstallSettings, PlanConfig
from installer.edges import apply
from installer.present.summary import Outcome
from installer.present.ui import Ui

if TYPE_CHECKING:
    from installer.decide.tooling import ToolChoice


def find_tools(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    machine: MachineFacts,
    choices: Mapping[str, ToolChoice] | None = None,
) -> tuple[apply.Tools, dict[str, ToolChoice]]:
    """Before anyone types a password: the tools the install cannot do without, fetched
    (pinned, verified) when missing: see commands/tools.py. `choices`: already resolved."""
    chosen = ensure_tools(REQUIRED, env, this_settings(env, machine.arch), choices=choices)
    tools = apply.Tools(
        helm=chosen["helm"].tool(),
        kubectl=chosen["kubectl"].tool(),
        env=env,
        redactor=redactor,
        read_timeout=cfg.probe.timeout,
    )
    return tools, chosen


def read_cluster(
    cfg: PlanConfig,
    env: Mapping[str, str],
    ui: Ui,
    tools: apply.Tools,
    settings: InstallSettings,
    gpu: Gpu | None,
) -> ClusterRead:
    """Every read at once; an unreachable cluster or an unreadable release list stops the
    run here, before credentials are asked for or sent (neither depends on who we are)."""
    with ui.step("Reading the cluster") as step:
        cluster = cluster_reads.read_cluster(
            cfg,
            env,
            tools.redactor,
            helm_tool=tools.helm,
            kubectl_tool=tools.kubectl,
            os_=os_name(sys.platform),
            repos=cfg.chart_is_default,
            metrics=settings.metrics_wait_s > 0,
            gpu=gpu,
        )
        if not cluster.listing.readable:
            step.fail()
            early = install_verdict.verdict_for(cfg, cluster, None)
            if early.error is not None:
                raise early.error
        if cluster.repos_error is not None:
            step.fail()
            raise cluster.repos_error
    return cluster


def decide_target(cfg: PlanConfig, cluster: ClusterRead, ui: Ui) -> install_verdict.Verdict:
    verdict = install_verdict.verdict_for(cfg, cluster, cfg.client_id)
    if verdict.error is not None:
        raise verdict.error
    if verdict.action == "upgrade-elsewhere":
        ui.info(verdict.reason)
    return verdict


def settle(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    tools: apply.Tools,
    cluster: ClusterRead,
    machine: MachineFacts,
    local: Local,
    chosen: Mapping[str, ToolChoice],
    settings: InstallSettings,
) -> tuple[already_installed.Settled, Outcome | None]:
    """Right after the read, before any question, sign-in or change: a healthy, up-to-date
    client is left as it is (the Outcome); otherwise the run goes on, saying why."""
    found = already_installed.check(
        cfg,
        env,
        redactor,
        cluster,
        tools=tools,
        machine=machine,
        local=local,
        choices=chosen,
        force=settings.force,
    )
    if found.said:
        ui.info(f"re-applying: {found.said}")
    if not found.check.nothing or found.plan is None:
        return found, None
    done = found.check
    cli = tuple(tracebloc_cli.cli_check(env, os_name(sys.platform)))
    return found, Outcome(
        done.release,
        done.namespace,
        found.plan.facts.training,
        cfg.values_path,
        None,
        cli,
        cluster.target,
        "left as it is",
        done.ready,
        unchanged=done.line,
        after_reboot=after_reboot(local, env, os_name(sys.platform), timeout=cfg.probe.timeout),
    )
