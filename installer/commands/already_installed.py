"""Is the client already installed, up to date and healthy? Asked by `install` and `plan`
after their one overlapped read, before anything is asked, signed in to or changed.

The cheap evidence (already read) first; only when it all says "nothing to change" are the
chart version this run would install and the workloads' readiness read, at once. The
decision itself is decide/noop.py's.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from installer.commands.install_plan import Plan, chart_version, make_plan, with_saved_credentials
from installer.commands.probe import concurrently
from installer.decide import install_verdict, noop
from installer.decide.cluster_reads import ClusterRead
from installer.decide.errors import InstallerError
from installer.decide.model import MachineFacts, ReleaseState
from installer.decide.readiness import health_problems, ready_lines
from installer.decide.redact import Redactor
from installer.decide.settings import DEFAULT_REPO_NAME, PlanConfig
from installer.decide.tooling import Tool, ToolChoice
from installer.edges import apply, workloads
from installer.edges.valuesfile import read_regular

if TYPE_CHECKING:
    from installer.decide.localcluster_state import Local


@dataclass(frozen=True)
class Settled:
    check: noop.Check
    plan: Plan | None = None  # the plan the check compared with, when it got that far
    index_fresh: bool = False  # `helm repo update` of the tracebloc repository ran
    said: str = ""  # why a re-run of an installed client re-applies (empty: not a re-run)


def check(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    cluster: ClusterRead,
    *,
    tools: apply.Tools | None,
    machine: MachineFacts,
    local: Local | None,
    choices: Mapping[str, ToolChoice] | None,
    force: bool,
) -> Settled:
    """The credentials compared are the ones the run would use without asking: the
    environment's, else the previous values file's (what Enter keeps at the prompt)."""
    guess = with_saved_credentials(cfg, redactor)
    verdict = install_verdict.verdict_for(guess, cluster, guess.client_id)
    first = noop.release_settled(
        force=force, action=verdict.action, recovery=verdict.recovery, status=verdict.status
    )
    if first is not None:
        # Said only to a re-run of an installed client: a new install needs no reason.
        return Settled(first, said=first.why[0] if verdict.action == "upgrade" else "")
    target = verdict.target
    assert target is not None  # an upgrade verdict names its target
    plan = make_plan(
        guess,
        env,
        redactor,
        release=target.release,
        machine=machine,
        nodes=cluster.nodes,
        gpu=cluster.gpu,
        local=local,
        tool_choices=choices,
        kube=cluster.target,
    )
    stored = target.release.values if target.release.state is ReleaseState.PRESENT else None
    try:
        on_disk = read_regular(cfg.values_path) if plan.data is not None else None
    except InstallerError:
        on_disk = None  # unreadable: not "the same bytes"
    second = noop.values_settled(stored, plan.values, file_bytes=on_disk, data=plan.data)
    if second is not None:
        return Settled(second, plan, said=second.why[0])
    if tools is None:
        found = noop.change("helm or kubectl was not found")
        return Settled(found, plan, said=found.why[0])
    wanted, why_not, fresh = None, "", False
    conn, timeout = cfg.probe.conn, cfg.probe.timeout
    with concurrently(3) as pool:
        looked = pool.submit(
            workloads.read_snapshot,
            tools.kubectl,
            target.name,
            target.namespace,
            conn,
            timeout=timeout,
            env=env,
            redactor=redactor,
        )
        defines = pool.submit(
            workloads.read_defined,
            tools.helm,
            target.name,
            target.namespace,
            conn,
            timeout=timeout,
            env=env,
            redactor=redactor,
        )
        try:
            wanted, why_not, fresh = _wanted_version(cfg, cluster, tools)
        except InstallerError as exc:
            why_not = exc.message
        seen, defined = looked.result(), defines.result()
    decided = noop.decide(
        None,
        release=target.name,
        namespace=target.namespace,
        installed_chart=verdict.installed_chart,
        wanted_version=wanted,
        version_reason=why_not,
        ready=seen.snapshot.ready if seen.snapshot else None,
        workloads=ready_lines(seen.snapshot) if seen.snapshot else (),
        readiness_reason=seen.reason,
        problems=health_problems(seen.snapshot, defined) if seen.snapshot else (),
    )
    return Settled(decided, plan, fresh, "" if decided.nothing else decided.why[0])


def _wanted_version(
    cfg: PlanConfig, cluster: ClusterRead, tools: apply.Tools
) -> tuple[str | None, str, bool]:
    """(the version this run would install or None, why not, whether the index was updated)."""
    if os.path.isdir(cfg.chart):
        version = chart_version(cfg.chart)
        if version.startswith("unknown"):
            return None, version, False
        return version, "", False
    fresh = False
    if cfg.chart_is_default:
        repos = cluster.repos if "repos" in cluster.asked and cluster.repos is not None else None
        if repos is None:
            repos = apply.read_repos(tools)
        if DEFAULT_REPO_NAME not in repos:
            return None, f"the chart repository {DEFAULT_REPO_NAME} is not configured", False
        apply.update_index(tools, DEFAULT_REPO_NAME)
        fresh = True
    # Another repository's chart: helm upgrade installs what its local index names, so that
    # index (not updated: the repository is not ours) is what is compared.
    try:
        newest = noop.newest_version(apply.search_index(tools, cfg.chart), cfg.chart)
    except InstallerError as exc:
        return None, exc.message, fresh
    if newest is None:
        return None, f"the repository index names no chart {cfg.chart}", fresh
    return newest, "", fresh


def for_plan(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    cluster: ClusterRead,
    verdict: install_verdict.Verdict,
    *,
    helm_tool: Tool | None,
    kubectl_tool: Tool | None,
    machine: MachineFacts,
    local: Local | None,
    choices: Mapping[str, ToolChoice] | None,
    force: bool,
) -> install_verdict.Verdict:
    """`plan`'s verdict: install's own check, so plan says `nothing-to-change` exactly when
    install would change nothing."""
    if verdict.action != "upgrade":
        return verdict
    tools = (
        apply.Tools(
            helm=helm_tool,
            kubectl=kubectl_tool,
            env=env,
            redactor=redactor,
            read_timeout=cfg.probe.timeout,
        )
        if helm_tool is not None and kubectl_tool is not None
        else None
    )
    found = check(
        cfg,
        env,
        redactor,
        cluster,
        tools=tools,
        machine=machine,
        local=local,
        choices=choices,
        force=force,
    )
    if not found.check.nothing:
        return verdict
    return dataclasses.replace(verdict, action=noop.NOTHING_TO_CHANGE, reason=found.check.line)
