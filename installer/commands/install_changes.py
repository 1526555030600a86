"""What `install` does after the one answer, in the order the list showed: recovery of a
wedged release, the chart repository, release directories, the values file, the device
plugin's adoption, the metrics wait, helm, the GPU's verification, the wait until the
client is connected (the kube context pointed meanwhile), the notes and the install record."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from installer.commands import (
    gpuverify,
    localcluster_create,
    shellpath,
    tracebloc_cli,
    wait,
)
from installer.commands.amd64_emulation import check_amd64
from installer.commands.install_plan import Plan
from installer.commands.reboot import after_reboot
from installer.decide import install_verdict, remedy
from installer.decide.cluster_reads import ClusterRead
from installer.decide.errors import InstallerError
from installer.decide.localcluster_state import Local
from installer.decide.model import Connection, os_name
from installer.decide.redact import Redactor
from installer.decide.settings import (
    DEFAULT_REPO_NAME,
    DEFAULT_REPO_URL,
    InstallSettings,
    PlanConfig,
)
from installer.edges import apply
from installer.edges.valuesfile import write_values
from installer.present.summary import Outcome
from installer.present.ui import Ui


def recover(
    cfg: PlanConfig, ui: Ui, tools: apply.Tools, verdict: install_verdict.Verdict
) -> list[str]:
    if verdict.recovery is None:
        return []
    release, namespace = cfg.probe.release, cfg.probe.namespace
    with ui.step(f"Recovering release {release} (state {verdict.status}): helm {verdict.recovery}"):
        apply.recover(tools, release, namespace, cfg.probe.conn, verdict.recovery)
    return [f"release {release} was {verdict.status}; recovered with helm {verdict.recovery}"]


def prepare_repo(
    cfg: PlanConfig,
    env: Mapping[str, str],
    ui: Ui,
    tools: apply.Tools,
    cluster: ClusterRead,
    fresh: bool = False,
) -> None:
    if cfg.chart_is_default:
        with ui.step("Preparing the chart repository"):
            apply.ensure_repo(
                tools,
                DEFAULT_REPO_NAME,
                DEFAULT_REPO_URL,
                cfg.ca_bundle,
                repos=cluster.repos,
                fresh=fresh,
            )


def wait_for_metrics(
    cfg: PlanConfig,
    ui: Ui,
    tools: apply.Tools,
    cluster: ClusterRead,
    settings: InstallSettings,
) -> None:
    if settings.metrics_wait_s <= 0:
        return
    if cluster.metrics is True:
        ui.detail("the metrics API is available")
        return
    # Not Available, not registered yet (a fresh cluster, #553 upstream) or unreadable: all
    # are waited out within the bound, never taken for "absent".
    with ui.step(f"Waiting for the metrics API (up to {settings.metrics_wait_s:g}s)") as step:
        seen = apply.wait_for_metrics(tools, cfg.probe.conn, settings.metrics_wait_s)
        if not seen.endswith("is available"):
            step.warn()
    (ui.detail if seen.endswith("is available") else ui.info)(seen)


def point_context(
    cfg: PlanConfig, tools: apply.Tools, settings: InstallSettings, notes: list[str]
) -> str:
    namespace, conn = cfg.probe.namespace, cfg.probe.conn
    if not settings.set_context_namespace:
        return "left as it is (TB_SET_CONTEXT_NAMESPACE=0 / --keep-context-namespace)"
    if apply.point_context(tools, conn, namespace):
        return f"set to {namespace}"
    notes.append(
        f"could not point the kube context at namespace {namespace}; "
        f"use -n {namespace} with kubectl"
    )
    return "unchanged (could not be set)"


def remember(
    cfg: PlanConfig, env: Mapping[str, str], os_: str, plan: Plan, cluster: ClusterRead
) -> list[str]:
    """The install record (decide/record.py), in the engine's own data directory: where the
    next run without options finds this client. A failure to write it is a note, not a
    failed install."""
    from installer.decide.record import Record
    from installer.edges import record

    target = cluster.target
    found = Record(
        cfg.probe.release,
        cfg.probe.namespace,
        target.context,
        target.server,
        cfg.chart,
        plan.chart_version,
        cfg.host_data_dir,
        cfg.credentials_origin,
        cfg.probe.conn.kubeconfig or "",
    )
    try:
        record.write(found, env=env, os_=os_)
    except InstallerError as exc:
        return [f"the install record could not be written: {exc.message}"]
    return []


def verify_gpu(
    cfg: PlanConfig,
    env: Mapping[str, str],
    ui: Ui,
    tools: apply.Tools,
    plan: Plan,
    settings: InstallSettings,
    os_: str,
    wait_s: float,
) -> gpuverify.GpuSeen | None:
    """When the values request a GPU: verified on the nodes, or the release re-applied for
    CPU (the values never keep requesting a GPU no node advertises)."""
    vendor = plan.gpu.vendor
    if vendor not in gpuverify.RESOURCE or plan.data is None:
        return None
    conn = cfg.probe.conn
    with ui.step(f"Verifying the GPU: {gpuverify.RESOURCE[vendor]} on the nodes") as step:
        seen = gpuverify.verify(
            tools, conn, vendor, chart_plugin=plan.site.gpu.chart_plugin, nodes_s=wait_s
        )
        if not seen.verified:
            step.warn()
    if seen.verified:
        return seen
    write_values(cfg.values_path, gpuverify.cpu_values(plan, seen.reason), env=env, os_=os_)
    with ui.step("Re-applying the client for CPU (no node advertises the GPU)"):
        apply.upgrade_install(
            tools, plan.argv, cfg.probe.release, cfg.probe.namespace, settings.helm_timeout_s, conn
        )
    return seen


def adopt_device_plugin(
    plan: Plan, tools: apply.Tools, release: str, namespace: str, conn: Connection, ui: Ui
) -> None:
    """An orphaned NVIDIA device plugin becomes the release's (never two on a node)."""
    if plan.site.gpu.adopt is None:
        return
    from installer.edges.cluster import adopt_plugin

    plugin = plan.site.gpu.adopt
    with ui.step(f"Adopting the device plugin {plugin.namespace}/{plugin.name}"):
        adopt_plugin(
            lambda args: tools.run(tools.kubectl, args, tools.read_timeout),
            plugin,
            release,
            namespace,
            conn,
        )


def carry_out(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    tools: apply.Tools,
    *,
    plan: Plan,
    verdict: install_verdict.Verdict,
    cluster: ClusterRead,
    local: Local,
    settings: InstallSettings,
    index_fresh: bool,
    notes: list[str],
    links: Sequence[tuple[str, str]],
    signs_in: bool,
    gpu_wait_s: float,
) -> Outcome:
    """After the answer: the listed changes in their order, then the wait until the client
    is connected, the notes, the record, and the summary's facts."""
    os_ = os_name(sys.platform)
    if local.managed:  # the pods run in this Mac's Docker only on the engine's own cluster
        check_amd64(env, redactor, ui, os_=os_, arch=plan.facts.machine.arch, mysql=plan.mysql)
    notes += recover(cfg, ui, tools, verdict)
    prepare_repo(cfg, env, ui, tools, cluster, fresh=index_fresh)
    release, namespace, conn = cfg.probe.release, cfg.probe.namespace, cfg.probe.conn
    localcluster_create.release_dirs(
        local, cfg, release, env, redactor, ui, os_, cluster.target, cluster.nodes
    )
    written = None
    if plan.data is not None:
        written = write_values(cfg.values_path, plan.data, env=env, os_=os_)
    adopt_device_plugin(plan, tools, release, namespace, conn, ui)
    notes += [
        note
        for note in plan.notes
        if "device plugin" in note or "CDI" in note or note in local.gpu_notes
    ]
    wait_for_metrics(cfg, ui, tools, cluster, settings)
    with ui.step(f"Installing the tracebloc client into namespace {namespace}"):
        apply.upgrade_install(tools, plan.argv, release, namespace, settings.helm_timeout_s, conn)
    gpu_seen = verify_gpu(cfg, env, ui, tools, plan, settings, os_, gpu_wait_s)
    # The kube context is pointed during the first readiness poll; never killed mid-write.
    pointing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="context")
    context_f = pointing.submit(point_context, cfg, tools, settings, notes)
    try:
        with ui.step("Waiting for the client to connect"):
            ready = wait.wait_ready(
                tools,
                release,
                namespace,
                conn,
                timeout_s=settings.ready_timeout_s,
                read_timeout_s=cfg.probe.timeout,
                ui=ui,
                training=plan.facts.training,
            )
    finally:
        pointing.shutdown(wait=True)
    context_done = context_f.result()
    notes += shellpath.make(links, env, ui)
    notes += tracebloc_cli.cli_notes(env) if signs_in else tracebloc_cli.cli_check(env, os_)
    notes += remember(cfg, env, os_, plan, cluster)
    if gpu_seen is not None and not gpu_seen.verified:
        listing = remedy.kubectl(["get", "nodes", "-o", "jsonpath={..allocatable}"], cfg.probe.conn)
        notes.append(
            f"no node advertised the GPU, so the client was installed for CPU (jobs "
            f"would stay Pending on a GPU no node offers): {gpu_seen.reason}; once "
            f"`{listing}` lists {gpuverify.RESOURCE[gpu_seen.vendor]}, run the installer again"
        )
    return Outcome(
        release,
        namespace,
        plan.facts.training,
        cfg.values_path,
        written,
        tuple(notes),
        cluster.target,
        context_done,
        ready.workloads,
        gpu=gpu_seen.line() if gpu_seen else "",
        gpu_test=gpuverify.smoke_test(gpu_seen.vendor) if gpu_seen and gpu_seen.verified else "",
        after_reboot=after_reboot(local, env, os_, timeout=cfg.probe.timeout),
    )
