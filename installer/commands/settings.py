"""A run's settings, built once from the options and the environment, in one call.

`build` parses, validates and types everything a command reads before it reads or changes
anything. Bad input is one `BadInput` (exit 2) naming the variable or flag it came from;
`plan` and `install` are built the same way, so what one refuses the other refuses too.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from installer.decide import paths as paths_of
from installer.decide import preflight, yesno
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import KubeTarget, os_name
from installer.decide.paths import Paths
from installer.decide.record import followed_line, stale_line
from installer.decide.redact import Redactor
from installer.decide.settings import (
    InstallSettings,
    PlanConfig,
    ProbeConfig,
    Thresholds,
    ca_variable,
    thresholds,
)

# The commands that install, or decide as install would: every setting is checked for them.
INSTALLING = ("install", "plan")
# The commands that use the data directory (its values file, log, lock or bundles).
WITH_DATA_DIR = (*INSTALLING, "uninstall", "diagnose")


# The commands that find the client where the install record says when no option names it.
FOLLOW_RECORD = (*INSTALLING, "uninstall", "diagnose", "status")


def follow_record(
    args: argparse.Namespace, env: Mapping[str, str], os_: str, probe: ProbeConfig
) -> ProbeConfig:
    """The release, namespace and kube context of the last successful install (said in one
    line), unless -n, --context, --kubeconfig or TB_NAMESPACE name them: options win. A
    record whose context is gone or points at another API server is reported, not followed."""
    from installer.edges import kubeconfig
    from installer.edges import record as records
    from installer.present import output

    if (
        getattr(args, "namespace", None)
        or getattr(args, "context", None)
        or getattr(args, "kubeconfig", None)
        or env.get("TB_NAMESPACE")
    ):
        return probe
    try:
        data_dir = paths_of.data_dir(
            env, os_, from_flag="HOST_DATA_DIR" in (getattr(args, "from_flags", None) or {})
        )
    except BadInput:
        return probe  # the command itself reports a data directory it cannot use
    found, why = records.read(data_dir)
    if found is None:
        if why:
            output.stderr(f"note: {why}\n")
        return probe
    where = records.path_in(data_dir)
    named: KubeTarget | None = None
    current: KubeTarget | None = None
    files = {**env, "KUBECONFIG": found.kubeconfig} if found.kubeconfig else env
    try:
        named = kubeconfig.read_context(files, os_, found.context or None)
        current = kubeconfig.read_context(files, os_)
    except InstallerError:
        pass
    if named is None or not named.readable or (found.context and named.server != found.server):
        output.stderr(f"note: {stale_line(found, where, named.server if named else '')}\n")
        return probe
    output.stderr(f"note: {followed_line(found, where)}\n")
    pinned = found.context if current is None or current.context != found.context else None
    conn = dataclasses.replace(
        probe.conn, context=pinned or None, kubeconfig=found.kubeconfig or None
    )
    return dataclasses.replace(
        probe,
        namespace=found.namespace,
        conn=conn,
        release_name=None if found.release == found.namespace else found.release,
    )


@dataclass(frozen=True)
class Settings:
    probe: ProbeConfig
    paths: Paths | None = None  # None for the commands that keep nothing (probe, status)
    plan: PlanConfig | None = None  # plan and install only
    install: InstallSettings | None = None  # plan and install only
    flags: Mapping[str, bool] = field(default_factory=dict)  # the yes/no variables that are set

    # Preflight, backend and trust settings live in the plan configuration; named here too.
    @property
    def preflight_skipped(self) -> bool:
        return self.plan.preflight_skipped if self.plan is not None else False

    @property
    def thresholds(self) -> Thresholds | None:
        return self.plan.thresholds if self.plan is not None else None

    @property
    def backend_url(self) -> str | None:
        return self.plan.backend_url if self.plan is not None else None

    @property
    def ca_bundle(self) -> str | None:
        return self.plan.ca_bundle if self.plan is not None else None


def build(
    args: argparse.Namespace,
    env: Mapping[str, str],
    redactor: Redactor,
    *,
    from_flags: Mapping[str, str] | None = None,
) -> Settings:
    """Everything `args.command` reads, validated. `from_flags` maps a variable to the scripts'
    flag the command line set it from (`HOST_DATA_DIR` ← `--data-dir`), so an error about
    it names what the user typed."""
    command = args.command
    os_ = os_name(sys.platform)
    if command == "install":
        from installer.commands.runtime import refuse_sudo_wrapped

        refuse_sudo_wrapped(env, os_)  # before any file is made
    probe = probe_settings(args, env)
    if command in FOLLOW_RECORD:
        probe = follow_record(args, env, os_, probe)
    if command not in WITH_DATA_DIR:
        return Settings(probe)
    where = paths_of.paths(env, os_, data_dir_from_flag="HOST_DATA_DIR" in (from_flags or {}))
    if command not in INSTALLING:
        return Settings(probe, where)
    return _installing(args, env, redactor, probe, where, os_)


def _installing(
    args: argparse.Namespace,
    env: Mapping[str, str],
    redactor: Redactor,
    probe: ProbeConfig,
    where: Paths,
    os_: str,
) -> Settings:
    from installer.commands.install_plan import check_paths
    from installer.config import install_settings, plan_config
    from installer.edges import backend, trust

    cfg = plan_config(env, probe, os_=os_, chart=args.chart, host_data_dir=where.data_dir)
    redactor.add(*cfg.secrets)
    check_paths(cfg, env, args.chart, variable=where.data_dir_source)
    install = install_settings(env, keep_context=args.keep_context_namespace)
    flags = yesno.check_all(env)
    chosen = ca_variable(env)
    cfg = dataclasses.replace(
        cfg,
        preflight_skipped=preflight.skipped(env),
        thresholds=thresholds(env),
        backend_url=backend.backend_url(cfg.client_env, env),
        ca_bundle=trust.ca_bundle(env),
        ca_variable=chosen[0] if chosen else "",
    )
    return Settings(probe=probe, paths=where, plan=cfg, install=install, flags=flags)


def probe_settings(args: argparse.Namespace, env: Mapping[str, str]) -> ProbeConfig:
    """The cluster side every command with cluster options reads: `--kubeconfig` (or
    KUBECONFIG) naming a file that exists and is safe to read, the namespace, the context."""
    from installer.config import check_kubeconfig_variable, probe_config
    from installer.edges import kubeconfig as kubeconfig_files

    kubeconfig = os.path.expanduser(args.kubeconfig) if args.kubeconfig else None
    if kubeconfig and not os.path.isfile(kubeconfig):
        raise BadInput(f"--kubeconfig {args.kubeconfig!r} is not a file")
    if not kubeconfig:
        check_kubeconfig_variable(env)
    kubeconfig_files.check_files(
        env,
        os_name(sys.platform),
        kubeconfig,  # no FIFO, no bomb
        parse=args.command != "probe",
    )
    return probe_config(env, namespace=args.namespace, kubeconfig=kubeconfig, context=args.context)
