"""`install`: execute the plan, safely, on a machine that may already run a client.

The steps, in order (each a function below; a new step is one more line in `install`),
all under the install lock (edges/lock.py):

  tools (verified downloads when missing) → the local k3d cluster survey → one overlapped
  read of the cluster (reads.read_cluster) → reachable? → preflight → credentials → the
  guard's verdict (judge) → the plan → the operator sees the target and confirms →
  recovery of a wedged release → chart repo → release directories → values file →
  device plugin adoption → metrics API → `helm upgrade --install` → kube context namespace →
  wait until the client is connected (commands/wait.py; exit 0 means connected).

When the engine manages the local k3d cluster, the cluster may not exist yet: then
preflight (Docker's budget) and credentials come first, the cluster is created, started or
adopted, and only then read.

Nothing changes before the operator has confirmed, and nothing is confirmed before the
guard has seen everything that is installed.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from installer.commands import credentials, judge, localcluster, reads, wait
from installer.commands.plan import Plan, chart_version, load_yaml, make_plan
from installer.commands.tools import REQUIRED, ensure_tools, this_settings
from installer.config import DEFAULT_REPO_NAME, DEFAULT_REPO_URL, InstallSettings, PlanConfig
from installer.decide import preflight, reach
from installer.decide.errors import InstallerError
from installer.decide.model import Connection, KubeTarget, MachineFacts, Resolution, os_name
from installer.edges import apply, backend, lock
from installer.edges.machine import disk_free, read_machine
from installer.edges.valuesfile import Written, write_values
from installer.present.provenance import training_words
from installer.present.redact import Redactor
from installer.present.target import target_lines
from installer.present.ui import Ui

if TYPE_CHECKING:
    from installer.edges.tools import ToolChoice


@dataclass(frozen=True)
class Outcome:
    release: str
    namespace: str
    training: Resolution
    values_path: str
    written: Written | None
    notes: tuple[str, ...] = ()
    kube: KubeTarget | None = None
    context_namespace: str = ""  # what was done to the kube context's default namespace
    workloads: tuple[str, ...] = ()  # each ready, as the wait last saw it


class Declined(InstallerError):
    """The operator answered no at the confirmation: nothing was changed."""


def find_tools(
    cfg: PlanConfig, env: Mapping[str, str], redactor: Redactor, machine: MachineFacts
) -> tuple[apply.Tools, dict[str, ToolChoice]]:
    """Before anyone types a password: the tools the install cannot do without, fetched
    (pinned, verified) when missing: see commands/tools.py."""
    chosen = ensure_tools(REQUIRED, env, this_settings(env, machine.arch))
    tools = apply.Tools(helm=chosen["helm"].tool(), kubectl=chosen["kubectl"].tool(),
                        env=env, redactor=redactor, read_timeout=cfg.probe.timeout)  # fmt: skip
    return tools, chosen


def read_cluster(
    cfg: PlanConfig, env: Mapping[str, str], ui: Ui, tools: apply.Tools,
    settings: InstallSettings,
) -> reads.ClusterRead:  # fmt: skip
    """Every read at once; an unreachable cluster or an unreadable release list stops the
    run here, before credentials are asked for or sent (neither depends on who we are)."""
    with ui.step("Reading the cluster") as step:
        cluster = reads.read_cluster(
            cfg, env, tools.redactor, helm_tool=tools.helm, kubectl_tool=tools.kubectl,
            os_=os_name(sys.platform), repos=cfg.chart_is_default,
            metrics=settings.metrics_wait_s > 0)  # fmt: skip
        if not cluster.listing.readable:
            step.fail()
            early = judge.judge(cfg, cluster, None)
            if early.error is not None:
                raise early.error
        if cluster.repos_error is not None:
            step.fail()
            raise cluster.repos_error
    return cluster


def run_preflight(
    cfg: PlanConfig, env: Mapping[str, str], ui: Ui, machine: MachineFacts,
    cluster: reads.ClusterRead | None = None,
) -> None:  # fmt: skip
    """The floors apply to the machine that runs the pods: this one when the cluster is
    local (or unknown), else the cluster's largest node."""
    if preflight.skipped(env):
        ui.warn("preflight checks skipped (TRACEBLOC_SKIP_PREFLIGHT)")
        return
    limits = preflight.thresholds(env)
    if cluster is not None and not reach.is_local(cluster.target):
        ui.info(f"the cluster ({cluster.target.context}) is not on this machine: its nodes, "
                "not this machine, are checked against the floors")  # fmt: skip
        findings = preflight.check_cluster(cluster.nodes, limits)
    else:
        findings = preflight.check(machine, disk_free(cfg.host_data_dir), cfg.host_data_dir,
                                   limits)  # fmt: skip
    for finding in findings:
        {"fail": ui.error, "warn": ui.warn}.get(finding.level, ui.info)(finding.message)
    if preflight.failed(findings):
        raise InstallerError(
            "the machine that would run the client is below the minimum it needs (see above)",
            "free memory or disk space, or set TRACEBLOC_SKIP_PREFLIGHT=1 to install anyway",
        )


def obtain_credentials(
    cfg: PlanConfig, env: Mapping[str, str], redactor: Redactor, ui: Ui, *, interactive: bool
) -> PlanConfig:
    """The config with verified credentials in it. A caller's values file is used as-is."""
    if cfg.values_given:
        given = load_yaml(cfg.values_path, required=True)
        client_id, password = credentials.previous_credentials(given if isinstance(given, dict) else None)
        redactor.add(password)
        return dataclasses.replace(cfg, client_id=cfg.client_id or client_id)
    previous_doc = load_yaml(cfg.values_path, required=False)
    previous = credentials.previous_credentials(previous_doc if isinstance(previous_doc, dict) else None)
    redactor.add(previous[1])
    url = backend.backend_url(cfg.client_env, env)
    backend.ca_bundle(env)  # a bad TRACEBLOC_CA_BUNDLE is bad input before anyone is asked

    def check(username: str, password: str) -> backend.Check:
        redactor.add(password)
        with ui.step("Checking the client credentials") as step:
            result = backend.verify(url, username, password, env=env)
            if result.verdict in (backend.Verdict.REJECTED, backend.Verdict.INACTIVE):
                step.fail()
            elif result.verdict is backend.Verdict.UNVERIFIED:
                step.warn()
            return result

    terminal = credentials.open_terminal(os_name(sys.platform)) if interactive else None
    found = credentials.obtain(env, previous=previous, interactive=interactive,
                               terminal=terminal, check=check, say=ui.warn)  # fmt: skip
    redactor.add(found.password)
    return dataclasses.replace(cfg, client_id=found.client_id, client_password=found.password)


def decide_target(cfg: PlanConfig, cluster: reads.ClusterRead, ui: Ui) -> judge.Verdict:
    verdict = judge.judge(cfg, cluster, cfg.client_id)
    if verdict.error is not None:
        raise verdict.error
    if verdict.action == "upgrade-elsewhere":
        ui.info(verdict.reason)
    return verdict


def confirm(plan: Plan, ui: Ui, *, interactive: bool) -> None:
    """Show what will change; ask, when a person is there to answer (not under --yes)."""
    ui.info("about to change:\n" + "\n".join(target_lines(plan)))
    for note in plan.notes:
        ui.info(f"notice: {note}")
    if not interactive:
        return
    terminal = credentials.open_terminal(os_name(sys.platform))
    if terminal is None:  # no one can answer (no terminal): the lines above are the record
        return
    try:
        answer = terminal.ask("Install? [y/N] ")
    except (EOFError, OSError):
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise Declined("not confirmed: nothing was changed",
                       "run again and answer y, or use --yes to skip the question")  # fmt: skip


def recover(cfg: PlanConfig, ui: Ui, tools: apply.Tools, verdict: judge.Verdict) -> list[str]:
    if verdict.recovery is None:
        return []
    release, namespace = cfg.probe.release, cfg.probe.namespace
    with ui.step(f"Recovering release {release} (state {verdict.status}): "
                 f"helm {verdict.recovery}"):  # fmt: skip
        apply.recover(tools, release, namespace, cfg.probe.conn, verdict.recovery)
    return [f"release {release} was {verdict.status}; recovered with helm {verdict.recovery}"]


def prepare_repo(
    cfg: PlanConfig, env: Mapping[str, str], ui: Ui, tools: apply.Tools, cluster: reads.ClusterRead
) -> None:
    if cfg.chart_is_default:
        with ui.step("Preparing the chart repository"):
            apply.ensure_repo(tools, DEFAULT_REPO_NAME, DEFAULT_REPO_URL, backend.ca_bundle(env),
                              repos=cluster.repos)  # fmt: skip


def wait_for_metrics(
    cfg: PlanConfig, ui: Ui, tools: apply.Tools, cluster: reads.ClusterRead,
    settings: InstallSettings,
) -> None:  # fmt: skip
    if settings.metrics_wait_s <= 0:
        return
    if cluster.metrics is True:
        ui.info("the metrics API is available")
        return
    # Not Available, not registered yet (a fresh cluster, #553 upstream) or unreadable: all
    # are waited out within the bound, never taken for "absent".
    with ui.step(f"Waiting for the metrics API (up to {settings.metrics_wait_s:g}s)") as step:
        seen = apply.wait_for_metrics(tools, cfg.probe.conn, settings.metrics_wait_s)
        if not seen.endswith("is available"):
            step.warn()
    ui.info(seen)


def point_context(cfg: PlanConfig, tools: apply.Tools, settings: InstallSettings,
                  notes: list[str]) -> str:  # fmt: skip
    namespace, conn = cfg.probe.namespace, cfg.probe.conn
    if not settings.set_context_namespace:
        return "left as it is (TB_SET_CONTEXT_NAMESPACE=0 / --keep-context-namespace)"
    if apply.point_context(tools, conn, namespace):
        return f"set to {namespace}"
    notes.append(f"could not point the kube context at namespace {namespace}; "
                 f"use -n {namespace} with kubectl")  # fmt: skip
    return "unchanged (could not be set)"


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
    with lock.hold(locks, what=what) as held:
        return _install(cfg, env, redactor, ui, interactive=interactive, settings=settings,
                        held=held)  # fmt: skip


def _install(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    *,
    interactive: bool,
    settings: InstallSettings,
    held: lock.Held,
) -> Outcome:
    notes: list[str] = []
    os_ = os_name(sys.platform)
    machine = read_machine(env)  # once: the preflight and the sizing read the same facts
    tools, chosen = find_tools(cfg, env, redactor, machine)
    # The local k3d cluster, when nobody named another: Docker's budget is the machine.
    local = localcluster.survey(cfg, env, redactor, machine, os_, fetch=True)
    machine = local.machine
    if local.decision.manage is False:
        cluster = read_cluster(cfg, env, ui, tools, settings)
        run_preflight(cfg, env, ui, machine, cluster)
        cfg = obtain_credentials(cfg, env, redactor, ui, interactive=interactive)
    else:
        # The cluster is this machine's and may not exist yet: it is read once it is up.
        run_preflight(cfg, env, ui, machine)
        cfg = obtain_credentials(cfg, env, redactor, ui, interactive=interactive)
        cfg = localcluster.bring_up(local, cfg, env, redactor, ui, interactive=interactive,
                                    os_=os_)  # fmt: skip
        cluster = read_cluster(cfg, env, ui, tools, settings)
    verdict = decide_target(cfg, cluster, ui)
    cfg = judge.moved(cfg, verdict)
    if verdict.target is not None and verdict.target.moved:  # that release is locked too
        held.add(lock.release_lock(env, cfg.host_data_dir, cfg.probe.namespace,
                                   cfg.probe.release))  # fmt: skip
    plan = make_plan(cfg, env, redactor, release=judge.release_for_sizing(cfg, cluster, verdict),
                     machine=machine, nodes=cluster.nodes, gpu=cluster.gpu, local=local,
                     tool_choices=chosen, kube=cluster.target)  # fmt: skip
    plan = dataclasses.replace(plan, verdict=verdict, kube=cluster.target,
                               chart_version=chart_version(cfg.chart),
                               set_context_namespace=settings.set_context_namespace)  # fmt: skip
    confirm(plan, ui, interactive=interactive)
    # --- from here on, things change ---
    notes += recover(cfg, ui, tools, verdict)
    prepare_repo(cfg, env, ui, tools, cluster)
    release, namespace, conn = cfg.probe.release, cfg.probe.namespace, cfg.probe.conn
    localcluster.release_dirs(local, cfg, release, env, redactor, ui, os_, cluster.target)
    written = None
    if plan.data is not None:
        written = write_values(cfg.values_path, plan.data, env=env, os_=os_)
    adopt_device_plugin(plan, tools, release, namespace, conn, ui)
    notes += [note for note in plan.notes if "device plugin" in note or "CDI" in note]
    wait_for_metrics(cfg, ui, tools, cluster, settings)
    with ui.step(f"Installing the tracebloc client into namespace {namespace}"):
        apply.upgrade_install(tools, plan.argv, release, namespace, settings.helm_timeout_s,
                              conn)  # fmt: skip
    context_done = point_context(cfg, tools, settings, notes)
    with ui.step("Waiting for the client to connect"):
        ready = wait.wait_ready(tools, release, namespace, conn,
                                timeout_s=settings.ready_timeout_s,
                                read_timeout_s=cfg.probe.timeout, ui=ui,
                                training=plan.facts.training)  # fmt: skip
    return Outcome(release, namespace, plan.facts.training, cfg.values_path, written,
                   tuple(notes), cluster.target, context_done, ready.workloads)  # fmt: skip


def adopt_device_plugin(plan: Plan, tools: apply.Tools, release: str, namespace: str,
                        conn: Connection, ui: Ui) -> None:  # fmt: skip
    """An orphaned NVIDIA device plugin becomes the release's (never two on a node)."""
    if plan.site.gpu.adopt is None:
        return
    from installer.edges.cluster import adopt_plugin

    plugin = plan.site.gpu.adopt
    with ui.step(f"Adopting the device plugin {plugin.namespace}/{plugin.name}"):
        adopt_plugin(lambda args: tools.run(tools.kubectl, args, tools.read_timeout),
                     plugin, release, namespace, conn)  # fmt: skip


def summary(outcome: Outcome, log_path: str | None) -> str:
    training = outcome.training
    who = training_words(training)
    kube = outcome.kube
    lines = [
        "The tracebloc client is installed and connected.",
        f"  kube context:   {kube.context} (API server {kube.server or 'unknown'})"
        if kube is not None and kube.readable else "  kube context:   unknown",
        f"  namespace:      {outcome.namespace} (release {outcome.release})",
        f"  training size:  {training.size} ({who}; {training.provenance.value})",
        f"  values file:    {outcome.values_path}",
        f"  context namespace: {outcome.context_namespace}",
    ]
    lines += [f"  ready:          {w}" for w in outcome.workloads]
    if log_path:
        lines.append(f"  log file:       {log_path}")
    lines += [f"  note: {note}" for note in outcome.notes]
    return "\n".join(lines)


def log_path_for(cfg: PlanConfig) -> str:
    return os.path.join(cfg.host_data_dir, "install.log")


def install_json(outcome: Outcome, log_path: str | None) -> dict[str, Any]:
    return {
        "release": outcome.release,
        "namespace": outcome.namespace,
        "training": {"size": outcome.training.size,
                     "provenance": outcome.training.provenance.value,
                     "source": outcome.training.source.value},  # fmt: skip
        "values_file": outcome.values_path,
        "context": outcome.kube.context if outcome.kube and outcome.kube.readable else None,
        "server": outcome.kube.server if outcome.kube and outcome.kube.readable else None,
        "context_namespace": outcome.context_namespace,
        "values_changed": outcome.written.changed if outcome.written else False,
        "log_file": log_path,
        "notes": list(outcome.notes),
        "connected": True,
        "workloads": list(outcome.workloads),
    }
