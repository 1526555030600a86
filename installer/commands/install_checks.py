"""What install checks and obtains before anything changes: the machine's floors (preflight),
the network, and the credentials (the environment, the previous values file, the prompt, or a
browser sign-in), each stopping the run before the one question when it must."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from installer.commands import credentials, network, network_hosts, signin
from installer.commands.tools import REQUIRED, this_settings
from installer.decide import install_verdict, preflight, reachability
from installer.decide.cluster_reads import ClusterRead
from installer.decide.errors import InstallerError
from installer.decide.model import MachineFacts, os_name
from installer.decide.redact import Redactor
from installer.decide.settings import PlanConfig, credentials_given
from installer.edges import backend
from installer.edges.machine import disk_free, same_filesystem
from installer.edges.tools import resolve_all
from installer.edges.valuesfile import load_yaml
from installer.present.ui import Ui

if TYPE_CHECKING:
    from installer.decide.tooling import ToolChoice


def run_preflight(
    cfg: PlanConfig,
    env: Mapping[str, str],
    ui: Ui,
    machine: MachineFacts,
    cluster: ClusterRead | None = None,
    docker_root: str = "",
) -> None:
    """The floors apply to the machine that runs the pods: this one when the cluster is
    local (or unknown), else the cluster's largest node. `docker_root`: Docker's data root,
    for the local cluster (its free disk is measured too)."""
    if cfg.preflight_skipped:
        ui.warn(
            "preflight checks skipped (TRACEBLOC_SKIP_PREFLIGHT): the machine floors "
            "and the network checks"
        )
        return
    limits = cfg.thresholds
    if cluster is not None and not reachability.is_local(
        cluster.target, cluster.nodes, storage_mode=cfg.storage_mode
    ):
        ui.info(
            f"the cluster ({cluster.target.context}) is not on this machine: its nodes, "
            "not this machine, are checked against the floors"
        )
        findings = preflight.check_cluster(cluster.nodes, limits)
    else:
        findings = preflight.check(machine, disk_free(cfg.host_data_dir), cfg.host_data_dir, limits)
        if docker_root and same_filesystem(docker_root, cfg.host_data_dir) is False:
            findings += preflight.docker_root(
                machine.os, disk_free(docker_root), docker_root, limits
            )
    _report(findings, ui)


def recheck_docker_budget(cfg: PlanConfig, ui: Ui, machine: MachineFacts) -> None:
    """Once the engine started or installed Docker: its budget read again (`machine` from
    the survey after it answers), before the cluster is made in it."""
    if cfg.preflight_skipped:
        return
    _report(
        preflight.docker_budget(machine, cfg.thresholds),
        ui,
        "Docker, now running, has less memory than the client needs (see above)",
    )


def _report(
    findings: list[preflight.Finding],
    ui: Ui,
    said: str = "the machine that would run the client is below the minimum it needs (see above)",
) -> None:
    for finding in findings:
        {"fail": ui.error, "warn": ui.warn}.get(finding.level, ui.info)(finding.message)
    if preflight.failed(findings):
        raise InstallerError(
            said,
            "free memory or disk space, or set TRACEBLOC_SKIP_PREFLIGHT=1 to install anyway",
        )


def check_network(
    cfg: PlanConfig, env: Mapping[str, str], ui: Ui, machine: MachineFacts
) -> tuple[dict[str, ToolChoice] | None, network_hosts.Needs]:
    """The network preflight: a stop raises before downloads, credentials or any change. Returns
    the tool resolutions (None if skipped) and what it read of the local machine for the survey."""
    if cfg.preflight_skipped:
        return None, network_hosts.Needs()
    choices = resolve_all(
        REQUIRED, env, this_settings(env, machine.arch), timeout=cfg.probe.timeout
    )
    needs = network_hosts.before_gate(cfg, env, machine, os_name(sys.platform))
    network.gate(
        cfg,
        env,
        ui,
        tools=[*network.tool_urls(choices), *needs.tools],
        runtime=needs.runtime,
        nvidia=needs.nvidia,
    )
    return choices, needs


def obtain_credentials(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    *,
    interactive: bool,
    cluster: ClusterRead | None = None,
) -> PlanConfig:
    """The config with verified credentials in it. A caller's values file is used as-is."""
    if cfg.values_given:
        given = load_yaml(cfg.values_path, required=True)
        client_id, password = credentials.previous_credentials(
            given if isinstance(given, dict) else None
        )
        redactor.add(password)
        return dataclasses.replace(
            cfg, client_id=cfg.client_id or client_id, credentials_origin="TRACEBLOC_VALUES_FILE"
        )
    previous_doc = load_yaml(cfg.values_path, required=False)
    previous = credentials.previous_credentials(
        previous_doc if isinstance(previous_doc, dict) else None
    )
    redactor.add(previous[1])
    # Both validated by commands/settings.build, before anyone is asked.
    url = cfg.backend_url
    assert url is not None  # built for install

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
        sign_in = signin.hook(
            env,
            redactor,
            interactive=interactive,
            terminal=terminal or credentials.open_terminal(os_name(sys.platform)),
            setting=signin.setting_for(cfg, cluster),
            say=ui.info,
            warn=ui.warn,
        )
    found = credentials.obtain(
        credentials_given(env),
        previous=previous,
        interactive=interactive,
        terminal=terminal,
        check=check,
        say=ui.warn,
        sign_in=sign_in,
        keep_previous=signed_in_before(cfg),
    )
    redactor.add(found.password)
    cfg = signin.with_namespace(cfg, found.namespace)
    return dataclasses.replace(
        cfg,
        client_id=found.client_id,
        client_password=found.password,
        credentials_origin=found.origin,
    )


def signed_in_before(cfg: PlanConfig) -> bool:
    """The last install here signed in: its values file holds the minted client, which a
    re-run installs without asking (as with credentials in the environment)."""
    from installer.edges import record

    found, _ = record.read(cfg.host_data_dir)
    return (
        found is not None
        and found.credentials == credentials.SIGN_IN
        and found.namespace == cfg.probe.namespace
    )


def signin_wanted(
    cfg: PlanConfig, env: Mapping[str, str], previous: tuple[str | None, str | None] | None = None
) -> bool:
    if previous is None:
        try:
            doc = load_yaml(cfg.values_path, required=False) if not cfg.values_given else None
        except InstallerError:  # obtain_credentials reports it, in its place
            return False
        previous = credentials.previous_credentials(doc if isinstance(doc, dict) else None)
    return signin.wanted(credentials_given(env), values_given=cfg.values_given, previous=previous)


def known_client_id(cfg: PlanConfig, env: Mapping[str, str], *, interactive: bool) -> str | None:
    """The client id this run installs with, when it is known before anyone is asked
    (obtain_credentials' order): the caller's values file, the environment, or, under
    --yes, the previous values file. None when it is typed or minted by a sign-in."""
    if cfg.values_given:
        given = load_yaml(cfg.values_path, required=True)
        return (
            cfg.client_id
            or credentials.previous_credentials(given if isinstance(given, dict) else None)[0]
        )
    has_id, has_password = credentials.in_environment(credentials_given(env))
    if has_id and has_password:
        return cfg.client_id
    if has_id or has_password or interactive:
        return None  # one of the pair is missing (obtain says so), or the prompt decides
    try:
        doc = load_yaml(cfg.values_path, required=False)
    except InstallerError:  # obtain_credentials reports it, in its place
        return None
    client_id, password = credentials.previous_credentials(doc if isinstance(doc, dict) else None)
    return client_id if client_id and password and not signin_wanted(cfg, env) else None


def guard_before_credentials(
    cfg: PlanConfig, env: Mapping[str, str], cluster: ClusterRead, *, interactive: bool
) -> None:
    """The guard's refusal from a read already made, raised before credentials are asked
    for or sent (and before the one question). A browser sign-in may name another
    namespace, so with one to come the verdict waits for it."""
    if signin_wanted(cfg, env) and signin.can_sign_in(
        env, credentials.open_terminal(os_name(sys.platform))
    ):
        return
    refused = install_verdict.before_credentials(
        cfg, cluster, known_client_id(cfg, env, interactive=interactive)
    )
    if refused is not None and refused.error is not None:
        raise refused.error
