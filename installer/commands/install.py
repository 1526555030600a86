"""`install`: execute the plan, safely, on a machine that may already run a client.

preflight → tools → credentials → one read of what is installed (the guard) → recovery of
a wedged release → the plan (sizing reuses the guard's read) → chart repo → values file →
metrics API → `helm upgrade --install` → kube context → wait until the client is connected. Nothing in the cluster changes
before the guard has seen everything that is installed.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from installer.commands import credentials, localcluster, wait
from installer.commands.plan import load_yaml, make_plan
from installer.commands.probe import concurrently
from installer.commands.tools import REQUIRED, ensure_tools, this_settings
from installer.config import DEFAULT_REPO_NAME, DEFAULT_REPO_URL, InstallSettings, PlanConfig
from installer.decide import guard, preflight
from installer.decide.errors import InstallerError
from installer.decide.model import MachineFacts, ReleaseRead, ReleaseState, Resolution, os_name
from installer.edges import apply, backend, helm, lock
from installer.edges.machine import disk_free, read_machine
from installer.edges.valuesfile import Written, write_values
from installer.present.redact import Redactor
from installer.present.ui import Ui


@dataclass(frozen=True)
class Outcome:
    release: str
    namespace: str
    training: Resolution
    values_path: str
    written: Written | None
    notes: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()  # each ready, as the wait last saw it


def run_preflight(
    cfg: PlanConfig, env: Mapping[str, str], ui: Ui, machine: MachineFacts
) -> None:
    if preflight.skipped(env):
        ui.warn("preflight checks skipped (TRACEBLOC_SKIP_PREFLIGHT)")
        return
    limits = preflight.thresholds(env)
    findings = preflight.check(machine, disk_free(cfg.host_data_dir), cfg.host_data_dir, limits)
    for finding in findings:
        {"fail": ui.error, "warn": ui.warn}.get(finding.level, ui.info)(finding.message)
    if preflight.failed(findings):
        raise InstallerError(
            "this machine is below the minimum the tracebloc client needs (see above)",
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
        with ui.step("Checking the client credentials"):
            return backend.verify(url, username, password, env=env)

    terminal = credentials.open_terminal(os_name(sys.platform)) if interactive else None
    found = credentials.obtain(env, previous=previous, interactive=interactive,
                               terminal=terminal, check=check, say=ui.warn)  # fmt: skip
    redactor.add(found.password)
    return dataclasses.replace(cfg, client_id=found.client_id, client_password=found.password)


def read_installed(
    cfg: PlanConfig, tools: apply.Tools
) -> tuple[helm.ListRead, dict[tuple[str, str], ReleaseRead]]:
    """`helm list -A` over every state, then each client release's values, once."""
    conn = cfg.probe.conn
    try:
        result = tools.run(tools.helm, helm.list_args(conn), cfg.probe.timeout)
        listing = helm.parse_list(result.rc, result.out, result.err)
    except InstallerError as exc:
        listing = helm.ListRead(False, reason=exc.message)
    clients = [r for r in listing.releases if r.is_client]
    reads: dict[tuple[str, str], ReleaseRead] = {}
    if clients:
        with concurrently(min(4, len(clients))) as pool:
            futures = {
                (r.name, r.namespace): pool.submit(
                    helm.read_release, tools.helm, r.name, r.namespace, conn,
                    timeout=cfg.probe.timeout, env=tools.env, redactor=tools.redactor)  # fmt: skip
                for r in clients
            }
            reads = {key: future.result() for key, future in futures.items()}
    return listing, reads


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
    machine = read_machine(env)  # once: the preflight and the sizing read the same facts
    # The local k3d cluster, when nobody named another: Docker's budget is the machine.
    local = localcluster.survey(cfg, env, redactor, machine, os_name(sys.platform), fetch=True)
    machine = local.machine
    run_preflight(cfg, env, ui, machine)
    # Before anyone types a password: the tools the install cannot do without.
    # Fetched here when missing (pinned, verified): see commands/tools.py.
    chosen = ensure_tools(REQUIRED, env, this_settings(env, machine.arch))
    tools = apply.Tools(helm=chosen["helm"].tool(), kubectl=chosen["kubectl"].tool(),
                        env=env, redactor=redactor, read_timeout=cfg.probe.timeout)  # fmt: skip
    cfg = obtain_credentials(cfg, env, redactor, ui, interactive=interactive)
    cfg = localcluster.bring_up(local, cfg, env, redactor, ui, interactive=interactive,
                                os_=os_name(sys.platform))  # fmt: skip

    with ui.step("Reading what is installed"):
        listing, reads = read_installed(cfg, tools)
        target = guard.decide(listing, reads, name=cfg.probe.release,
                              namespace=cfg.probe.namespace, client_id=cfg.client_id)  # fmt: skip
    if target.moved:
        ui.info(f"this client is installed as release {target.name} in namespace "
                f"{target.namespace}: upgrading it there")  # fmt: skip
        probe = dataclasses.replace(cfg.probe, namespace=target.namespace,
                                    release_name=target.name)  # fmt: skip
        cfg = dataclasses.replace(cfg, probe=probe)
        held.add(lock.release_lock(env, cfg.host_data_dir, target.namespace, target.name))
    release, namespace, conn = cfg.probe.release, cfg.probe.namespace, cfg.probe.conn

    if target.release.state is ReleaseState.PRESENT:
        status = apply.release_status(tools, release, namespace, conn)
        verb = apply.recovery_for(status)
        if verb is not None:
            with ui.step(f"Recovering release {release} (state {status}): helm {verb}"):
                apply.recover(tools, release, namespace, conn, verb)
            notes.append(f"release {release} was {status}; recovered with helm {verb}")

    with ui.step("Sizing the training workload"):
        plan = make_plan(cfg, env, redactor, release=target.release, machine=machine,
                         local=local, tool_choices=chosen)  # fmt: skip
    if cfg.chart_is_default:
        with ui.step("Preparing the chart repository"):
            apply.ensure_repo(tools, DEFAULT_REPO_NAME, DEFAULT_REPO_URL, backend.ca_bundle(env))
    localcluster.release_dirs(local, cfg, release, env, redactor, ui, os_name(sys.platform))
    written = None
    if plan.data is not None:
        written = write_values(cfg.values_path, plan.data, env=env, os_=os_name(sys.platform))
    if plan.site.gpu.adopt is not None:
        from installer.edges.cluster import adopt_plugin

        plugin = plan.site.gpu.adopt
        with ui.step(f"Adopting the device plugin {plugin.namespace}/{plugin.name}"):
            adopt_plugin(lambda args: tools.run(tools.kubectl, args, apply.READ_TIMEOUT_S),
                         plugin, release, namespace, conn)  # fmt: skip
    notes += [note for note in plan.notes if "device plugin" in note or "CDI" in note]
    if settings.metrics_wait_s > 0:
        with ui.step(f"Waiting for the metrics API (up to {settings.metrics_wait_s:g}s)"):
            seen = apply.wait_for_metrics(tools, conn, settings.metrics_wait_s)
        ui.info(seen)
    with ui.step(f"Installing the tracebloc client into namespace {namespace}"):
        apply.upgrade_install(tools, plan.argv, release, namespace, settings.helm_timeout_s)
    if not apply.point_context(tools, conn, namespace):
        notes.append(f"could not point the kube context at namespace {namespace}; "
                     f"use -n {namespace} with kubectl")  # fmt: skip
    with ui.step("Waiting for the client to connect"):
        ready = wait.wait_ready(tools, release, namespace, conn,
                                timeout_s=settings.ready_timeout_s,
                                read_timeout_s=cfg.probe.timeout, ui=ui,
                                training=plan.facts.training)  # fmt: skip
    return Outcome(release, namespace, plan.facts.training, cfg.values_path, written,
                   tuple(notes), ready.workloads)  # fmt: skip


def summary(outcome: Outcome, log_path: str | None) -> str:
    training = outcome.training
    who = {"installer": "measured by the installer", "user": "chosen by a person",
           "unknown": "kept: who chose it is unknown"}[training.provenance.value]  # fmt: skip
    lines = [
        "The tracebloc client is installed and connected.",
        f"  namespace:      {outcome.namespace} (release {outcome.release})",
        f"  training size:  {training.size} ({who}; {training.provenance.value})",
        f"  values file:    {outcome.values_path}",
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
        "values_changed": outcome.written.changed if outcome.written else False,
        "log_file": log_path,
        "notes": list(outcome.notes),
        "connected": True,
        "workloads": list(outcome.workloads),
    }
