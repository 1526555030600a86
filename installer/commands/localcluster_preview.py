"""A running local cluster of ours that the kube context does not name yet, read without a
change: `k3d kubeconfig get` into a private owner-only kubeconfig (removed after), so the
guard's verdict (or, before a recreate, what helm lists in it) is known before the one
question. What does not answer is None (or unreadable).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Mapping

from installer.commands import cluster_reads
from installer.decide import localcluster as lc
from installer.decide.cluster_reads import ClusterRead
from installer.decide.errors import InstallerError
from installer.decide.localcluster_state import ADOPT, Local
from installer.decide.model import Connection, Gpu, ListRead
from installer.decide.redact import Redactor
from installer.decide.settings import PlanConfig
from installer.decide.tooling import Tool
from installer.edges import call, helm, kubeconfig, tempdirs
from installer.edges.cluster import HOLDINGS_ARGS, parse_holdings
from installer.edges.valuesfile import write_private


def read_unmerged(
    local: Local,
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    os_: str,
    *,
    helm_tool: Tool | None,
    kubectl_tool: Tool | None,
    gpu: Gpu | None = None,
) -> ClusterRead | None:
    s, k3d_tool = local.settings, local.k3d
    if s is None or not local.managed or local.action != ADOPT or local.problems:
        return None
    if k3d_tool is None or helm_tool is None or kubectl_tool is None:
        return None
    if any(finding.level == "fail" for finding in local.drift):
        return None
    try:
        with _k3d_kubeconfig(s, k3d_tool, env, redactor, os_) as seen:
            if seen is None:
                return None
            cluster = cluster_reads.read_cluster(
                cfg,
                seen,
                redactor,
                helm_tool=helm_tool,
                kubectl_tool=kubectl_tool,
                os_=os_,
                gpu=gpu,
            )
    except (OSError, ValueError, InstallerError):
        return None
    return cluster if cluster.listing.readable else None


def releases_in(
    s: lc.Settings,
    k3d_tool: Tool,
    env: Mapping[str, str],
    redactor: Redactor | None,
    os_: str,
    timeout: float,
) -> ListRead:
    """`helm list -A` of the running cluster `s` through k3d's own kubeconfig (a read), with
    helm's default storage whatever HELM_DRIVER says; unreadable, with the reason, when any
    part does not answer or the cluster holds a namespace or volume claim of anyone's
    (`kubectl get namespaces,pvc -A`): a release helm does not list is still someone's."""
    from installer.commands.tools import resolve_tool

    helm_choice, kubectl_choice = resolve_tool("helm", env), resolve_tool("kubectl", env)
    if not helm_choice.ready or not kubectl_choice.ready:
        return ListRead(False, reason="helm or kubectl is not on this machine yet")
    try:
        with _k3d_kubeconfig(s, k3d_tool, env, redactor, os_) as seen:
            if seen is None:
                return ListRead(False, reason=f"k3d gave no kubeconfig for {s.name}")
            seen.pop("HELM_DRIVER", None)
            got = call.answer(
                helm_choice.tool(),
                helm.list_args(Connection()),
                timeout=timeout,
                env=seen,
                redactor=redactor,
            )
            held, why = call.parsed(
                kubectl_choice.tool(),
                HOLDINGS_ARGS,
                parse_holdings,
                timeout=timeout,
                env=seen,
                redactor=redactor,
            )
    except (OSError, ValueError, InstallerError) as exc:
        return ListRead(False, reason=str(exc))
    if isinstance(got, call.NoAnswer):
        return ListRead(False, reason=got.reason)
    listing = helm.parse_list(got.rc, got.out, got.err)
    if not listing.readable or listing.releases:
        return listing
    if held is None:
        return ListRead(False, reason=f"kubectl: {why}")
    return ListRead(False, reason=f"it holds {', '.join(held)}") if held else listing


@contextlib.contextmanager
def _k3d_kubeconfig(
    s: lc.Settings, k3d_tool: Tool, env: Mapping[str, str], redactor: Redactor | None, os_: str
) -> Iterator[dict[str, str] | None]:
    """`env` with KUBECONFIG at a private copy of k3d's kubeconfig for `s` (removed after),
    anchored to 127.0.0.1; None when k3d gave none that names the cluster."""
    got = call.answer(
        k3d_tool,
        ["kubeconfig", "get", s.name],
        timeout=lc.MERGE_TIMEOUT_S,
        env=env,
        redactor=redactor,
    )
    if isinstance(got, call.NoAnswer) or got.rc != 0 or not got.stdout.strip():
        yield None
        return
    directory = tempdirs.make("peek")
    try:
        path = os.path.join(directory, "config")
        write_private(path, got.stdout.encode("utf-8"), env=env, os_=os_)
        seen = {**env, "KUBECONFIG": path}
        kubeconfig.anchor(seen, os_, s.context)
        yield seen if kubeconfig.read_context(seen, os_).context == s.context else None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def guard_unmerged(
    local: Local,
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    os_: str,
    *,
    helm_tool: Tool | None,
    kubectl_tool: Tool | None,
    interactive: bool,
    gpu: Gpu | None = None,
) -> ClusterRead | None:
    """The read above and the guard's refusal from it, before credentials (install_checks.py); the
    remedy says how to reach the cluster, which the kubeconfig does not name yet."""
    from installer.commands.install_checks import guard_before_credentials

    cluster = read_unmerged(
        local, cfg, env, redactor, os_, helm_tool=helm_tool, kubectl_tool=kubectl_tool, gpu=gpu
    )
    if cluster is not None:
        try:
            guard_before_credentials(cfg, env, cluster, interactive=interactive)
        except InstallerError as exc:
            raise with_merge_hint(exc, local) from None
    return cluster


def with_merge_hint(exc: InstallerError, local: Local) -> InstallerError:
    s = local.settings
    if s is not None:
        merge = " ".join(["k3d", *lc.merge_args(s)])
        exc.remedy = (exc.remedy + "\n" if exc.remedy else "") + (
            f"the cluster {s.name} is not in your kubeconfig yet: `{merge}` adds it (and "
            "makes it the current context), so that the commands above reach it"
        )
    return exc
