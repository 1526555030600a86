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
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from installer.commands import credentials, localcluster, network, reads, settled, signin, wait
from installer.commands.plan import Plan, chart_version, make_plan
from installer.commands.steps import steps
from installer.commands.tools import REQUIRED, ensure_tools, this_settings
from installer.config import DEFAULT_REPO_NAME, DEFAULT_REPO_URL, InstallSettings, PlanConfig
from installer.decide import judge, preflight, reach
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import Connection, KubeTarget, MachineFacts, Resolution, os_name
from installer.decide.redact import Redactor
from installer.edges import apply, backend, lock
from installer.edges.machine import disk_free, read_machine
from installer.edges.tools import resolve_all
from installer.edges.valuesfile import Written, load_yaml, write_values
from installer.present import changes
from installer.present.changes import Change
from installer.present.provenance import training_words
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
    unchanged: str = ""  # a healthy re-run: the one line saying nothing was changed


class Declined(InstallerError):
    """The operator answered no at the one question: none of the listed changes was made."""


def local_heading(local: localcluster.Local, cfg: PlanConfig) -> list[str]:
    s = local.settings
    name = s.name if s is not None else "tracebloc"
    verb = {"create": "created", "start": "started"}.get(local.action or "", "used")
    return [f"  local cluster:  {name}, to be {verb} (Docker on this machine)",
            f"  namespace:      {cfg.probe.namespace} (release {cfg.probe.release})",
            f"  chart:          {cfg.chart}",
            "  training size:  decided from the new cluster's nodes once it is up"
            if local.action == "create" else
            "  training size:  decided from the cluster's nodes once it answers"]  # fmt: skip


def find_tools(
    cfg: PlanConfig, env: Mapping[str, str], redactor: Redactor, machine: MachineFacts,
    choices: Mapping[str, ToolChoice] | None = None,
) -> tuple[apply.Tools, dict[str, ToolChoice]]:  # fmt: skip
    """Before anyone types a password: the tools the install cannot do without, fetched
    (pinned, verified) when missing: see commands/tools.py. `choices`: already resolved."""
    chosen = ensure_tools(REQUIRED, env, this_settings(env, machine.arch), choices=choices)
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
        ui.warn("preflight checks skipped (TRACEBLOC_SKIP_PREFLIGHT): the machine floors "
                "and the network checks")  # fmt: skip
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


def check_network(
    cfg: PlanConfig, env: Mapping[str, str], ui: Ui, machine: MachineFacts
) -> dict[str, ToolChoice] | None:
    """The network preflight (commands/network.py): a stop raises before the tools are
    downloaded, credentials asked for or anything changed. Returns the tool resolutions it
    read (which tools will be downloaded decides which hosts are needed), None if skipped."""
    if preflight.skipped(env):
        return None
    choices = resolve_all(REQUIRED, env, this_settings(env, machine.arch),
                          timeout=cfg.probe.timeout)  # fmt: skip
    network.gate(cfg, env, ui, tools=network.tool_urls(choices))
    return choices


def obtain_credentials(
    cfg: PlanConfig, env: Mapping[str, str], redactor: Redactor, ui: Ui, *, interactive: bool,
    cluster: reads.ClusterRead | None = None,
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
    sign_in = None
    if signin_wanted(cfg, env, previous):  # browser sign-in through the tracebloc CLI
        sign_in = signin.hook(env, redactor, interactive=interactive,
                              terminal=terminal or credentials.open_terminal(os_name(sys.platform)),
                              setting=signin.setting_for(cfg, cluster), say=ui.info,
                              warn=ui.warn)  # fmt: skip
    found = credentials.obtain(env, previous=previous, interactive=interactive,
                               terminal=terminal, check=check, say=ui.warn,
                               sign_in=sign_in)  # fmt: skip
    redactor.add(found.password)
    cfg = signin.with_namespace(cfg, found.namespace)
    return dataclasses.replace(cfg, client_id=found.client_id, client_password=found.password)


def signin_wanted(cfg: PlanConfig, env: Mapping[str, str],
                  previous: tuple[str | None, str | None] | None = None) -> bool:  # fmt: skip
    if previous is None:
        try:
            doc = load_yaml(cfg.values_path, required=False) if not cfg.values_given else None
        except InstallerError:  # obtain_credentials reports it, in its place
            return False
        previous = credentials.previous_credentials(doc if isinstance(doc, dict) else None)
    return signin.wanted(env, values_given=cfg.values_given, previous=previous)


def decide_target(cfg: PlanConfig, cluster: reads.ClusterRead, ui: Ui) -> judge.Verdict:
    verdict = judge.judge(cfg, cluster, cfg.client_id)
    if verdict.error is not None:
        raise verdict.error
    if verdict.action == "upgrade-elsewhere":
        ui.info(verdict.reason)
    return verdict


def terminal_or_refuse(interactive: bool) -> None:
    """No terminal to ask on and no --yes: no change. Refused (exit 2) after the blockers
    and before credentials are asked for or sent. Under `curl … | sh` the controlling
    terminal (/dev/tty) still counts."""
    if interactive and credentials.open_terminal(os_name(sys.platform)) is None:
        raise BadInput("install asks before it changes anything, and there is no terminal "
                       "to ask on", "run it again with --yes to install without the question "
                       "(the credentials then come from TRACEBLOC_CLIENT_ID and "
                       "TRACEBLOC_CLIENT_PASSWORD)")  # fmt: skip


def ask_once(found: Sequence[Change], fetched: Sequence[str], ui: Ui, *, interactive: bool,
             data_dir: str, heading: Sequence[str] = (), notes: Sequence[str] = ()) -> None:  # fmt: skip
    """The one question, before the first change: every change outside the engine's data
    directory, in order, with its argv. Under --yes the same lines are the record."""
    lines = list(heading) + ["changes, in order:", *changes.text(found, fetched)]
    ui.info("about to change:\n" + "\n".join(lines))
    for note in notes:
        ui.info(f"notice: {note}")
    if not interactive:
        return
    terminal = credentials.open_terminal(os_name(sys.platform))
    if terminal is None:  # checked before credentials; the terminal went away since
        terminal_or_refuse(interactive)
        return
    try:
        answer = terminal.ask("Install? [y/N] ")
    except (EOFError, OSError):
        answer = ""
    if not yes(answer):
        kept = "; the tools downloaded into the engine's tools directory stay there" if fetched else ""
        raise Declined(f"not confirmed: none of the changes above was made; only the "
                       f"engine's own files in {data_dir} (its log and lock) were "
                       f"written{kept}", "run again and answer y, or use --yes to skip "
                       "the question")  # fmt: skip


def yes(answer: str) -> bool:
    return answer.strip().lower() in ("y", "yes")


def recover(cfg: PlanConfig, ui: Ui, tools: apply.Tools, verdict: judge.Verdict) -> list[str]:
    if verdict.recovery is None:
        return []
    release, namespace = cfg.probe.release, cfg.probe.namespace
    with ui.step(f"Recovering release {release} (state {verdict.status}): "
                 f"helm {verdict.recovery}"):  # fmt: skip
        apply.recover(tools, release, namespace, cfg.probe.conn, verdict.recovery)
    return [f"release {release} was {verdict.status}; recovered with helm {verdict.recovery}"]


def prepare_repo(
    cfg: PlanConfig, env: Mapping[str, str], ui: Ui, tools: apply.Tools, cluster: reads.ClusterRead,
    fresh: bool = False,
) -> None:  # fmt: skip
    if cfg.chart_is_default:
        with ui.step("Preparing the chart repository"):
            apply.ensure_repo(tools, DEFAULT_REPO_NAME, DEFAULT_REPO_URL, backend.ca_bundle(env),
                              repos=cluster.repos, fresh=fresh)  # fmt: skip


def settle(
    cfg: PlanConfig, env: Mapping[str, str], redactor: Redactor, ui: Ui, tools: apply.Tools,
    cluster: reads.ClusterRead, machine: MachineFacts, local: localcluster.Local,
    chosen: Mapping[str, ToolChoice], settings: InstallSettings,
) -> tuple[settled.Settled, Outcome | None]:  # fmt: skip
    """Right after the read, before any question, sign-in or change: a healthy, up-to-date
    client is left as it is (the Outcome); otherwise the run goes on, saying why."""
    found = settled.check(cfg, env, redactor, cluster, tools=tools, machine=machine, local=local,
                          choices=chosen, force=settings.force)  # fmt: skip
    if found.said:
        ui.info(f"re-applying: {found.said}")
    if not found.check.nothing or found.plan is None:
        return found, None
    done = found.check
    return found, Outcome(done.release, done.namespace, found.plan.facts.training,
                          cfg.values_path, None, (), cluster.target, "left as it is",
                          done.ready, unchanged=done.line)  # fmt: skip


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
    resolved = check_network(cfg, env, ui, machine)  # before any download, question, change
    tools, chosen = find_tools(cfg, env, redactor, machine, resolved)
    # The local k3d cluster, when nobody named another: Docker's budget is the machine.
    local = localcluster.survey(cfg, env, redactor, machine, os_, fetch=True)
    fetched = changes.downloads({**chosen, **local.choices})
    machine = local.machine
    signs_in = signin_wanted(cfg, env)  # browser sign-in through the tracebloc CLI
    if local.decision.manage is False:
        cluster = read_cluster(cfg, env, ui, tools, settings)
        found, unchanged = settle(cfg, env, redactor, ui, tools, cluster, machine, local, chosen,
                                  settings)  # fmt: skip
        if unchanged is not None:
            return unchanged
        run_preflight(cfg, env, ui, machine, cluster)
        terminal_or_refuse(interactive)
        cfg = obtain_credentials(cfg, env, redactor, ui, interactive=interactive, cluster=cluster)
    else:
        # The cluster is this machine's and may not exist yet: Docker, k3d and the existing
        # cluster's drift are blockers, known before anyone is asked anything; the one
        # question lists the cluster's steps; the cluster is read once it is up.
        localcluster.blockers(local, ui)
        # One that runs and is already the current context is read first, as it is.
        early = None
        if localcluster.readable_as_it_is(local, env, os_):
            early = reads.read_cluster(
                cfg, env, redactor, helm_tool=tools.helm, kubectl_tool=tools.kubectl, os_=os_,
                repos=cfg.chart_is_default, metrics=settings.metrics_wait_s > 0)  # fmt: skip
            if not early.listing.readable or early.repos_error is not None:
                early = None  # read again once it is up, and stopped there if need be
        if early is not None:
            found, unchanged = settle(cfg, env, redactor, ui, tools, early, machine, local,
                                      chosen, settings)  # fmt: skip
            if unchanged is not None:
                return unchanged
        run_preflight(cfg, env, ui, machine)
        terminal_or_refuse(interactive)
        # A sign-in registers against what is installed: it waits until the cluster is read.
        # Without a terminal or the CLI, the credentials (or their refusal) come first.
        signs_in = signs_in and signin.can_sign_in(env, credentials.open_terminal(os_))
        if not signs_in:
            cfg = obtain_credentials(cfg, env, redactor, ui, interactive=interactive)
        planned = steps(cfg, env, set_context_namespace=settings.set_context_namespace,
                        local=local)  # fmt: skip
        ask_once(planned, fetched, ui, interactive=interactive, data_dir=cfg.host_data_dir,
                 heading=local_heading(local, cfg))  # fmt: skip
        cfg = localcluster.bring_up(local, cfg, env, redactor, ui, interactive=interactive,
                                    os_=os_, kubectl=tools.kubectl)  # fmt: skip
        cluster = read_cluster(cfg, env, ui, tools, settings)
        if early is None:
            found, unchanged = settle(cfg, env, redactor, ui, tools, cluster, machine, local,
                                      chosen, settings)  # fmt: skip
            if unchanged is not None:
                return unchanged
        if signs_in:
            cfg = obtain_credentials(cfg, env, redactor, ui, interactive=interactive,
                                     cluster=cluster)  # fmt: skip
    # A sign-in may have named the namespace: that release is locked too (a no-op otherwise).
    held.add(lock.release_lock(env, cfg.host_data_dir, cfg.probe.namespace, cfg.probe.release))
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
    planned = steps(cfg, env, set_context_namespace=settings.set_context_namespace,
                    local=None if local.managed else local, verdict=verdict, plan=plan)  # fmt: skip
    # On the local path the question was asked before the cluster was made: the rest of
    # the steps were in it, and the sizing read now is shown, not asked about again.
    ask_once(planned, [] if local.managed else fetched, ui,
             interactive=interactive and not local.managed, data_dir=cfg.host_data_dir,
             heading=target_lines(plan), notes=plan.notes)  # fmt: skip
    # --- from here on, things change ---
    notes += recover(cfg, ui, tools, verdict)
    prepare_repo(cfg, env, ui, tools, cluster, fresh=found.index_fresh)
    release, namespace, conn = cfg.probe.release, cfg.probe.namespace, cfg.probe.conn
    localcluster.release_dirs(local, cfg, release, env, redactor, ui, os_, cluster.target)
    written = None
    if plan.data is not None:
        written = write_values(cfg.values_path, plan.data, env=env, os_=os_)
    adopt_device_plugin(plan, tools, release, namespace, conn, ui)
    notes += [note for note in plan.notes if "device plugin" in note or "CDI" in note
              or "NVIDIA container toolkit" in note]  # fmt: skip
    wait_for_metrics(cfg, ui, tools, cluster, settings)
    with ui.step(f"Installing the tracebloc client into namespace {namespace}"):
        apply.upgrade_install(tools, plan.argv, release, namespace, settings.helm_timeout_s,
                              conn)  # fmt: skip
    # The kube context is pointed while the first readiness poll is out: a local edit of
    # the kubeconfig need not wait for the cluster's answer, nor the answer for it. Never
    # killed mid-write: the wait ending (or failing) waits for it.
    pointing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="context")
    context_f = pointing.submit(point_context, cfg, tools, settings, notes)
    try:
        with ui.step("Waiting for the client to connect"):
            ready = wait.wait_ready(tools, release, namespace, conn,
                                    timeout_s=settings.ready_timeout_s,
                                    read_timeout_s=cfg.probe.timeout, ui=ui,
                                    training=plan.facts.training)  # fmt: skip
    finally:
        pointing.shutdown(wait=True)
    context_done = context_f.result()
    notes += signin.cli_notes(env) if signs_in else []
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
    if outcome.unchanged:
        return outcome.unchanged
    training = outcome.training
    who = training_words(training)
    kube = outcome.kube
    lines = [
        "The tracebloc client is installed and connected.",
        f"  connected:      {CONNECTED_SIGNAL}",
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
    lines += next_steps()
    return "\n".join(lines)


# What the engine saw before it says "connected" (commands/wait.py): nothing else.
CONNECTED_SIGNAL = ("every workload of the release reported ready to Kubernetes (its "
                    "readiness checks passed), as the readiness wait saw it")  # fmt: skip
WEB_APP = "https://ai.tracebloc.io"
CLI_RELEASES = "https://github.com/tracebloc/cli/releases/latest"


def next_steps() -> list[str]:
    return [
        "next:",
        f"  the client appears in the tracebloc web app: {WEB_APP}",
        "  check it later:  tracebloc-installer status",
        "  then ingest your data with the tracebloc CLI (`tracebloc data ingest`); get it "
        f"from {CLI_RELEASES}",
    ]


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
        "connected_signal": CONNECTED_SIGNAL,
        "workloads": list(outcome.workloads),
        "action": "nothing-to-change" if outcome.unchanged else "applied",
        "next": {"web_app": WEB_APP, "status": "tracebloc-installer status",
                 "ingest": f"the tracebloc CLI (tracebloc data ingest), from {CLI_RELEASES}"},
    }
