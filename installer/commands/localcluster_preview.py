"""A running local cluster of ours that the kube context does not name yet, read without a
change: `k3d kubeconfig get` into a private owner-only kubeconfig (removed after), so the
guard's verdict is known before the one question. What does not answer is None.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping

from installer.commands import cluster_reads
from installer.decide import localcluster as lc
from installer.decide.cluster_reads import ClusterRead
from installer.decide.errors import InstallerError
from installer.decide.localcluster_state import ADOPT, Local
from installer.decide.model import Gpu
from installer.decide.redact import Redactor
from installer.decide.settings import PlanConfig
from installer.decide.tooling import Tool
from installer.edges import call, kubeconfig
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
    got = call.answer(
        k3d_tool,
        ["kubeconfig", "get", s.name],
        timeout=lc.MERGE_TIMEOUT_S,
        env=env,
        redactor=redactor,
    )
    if isinstance(got, call.NoAnswer) or got.rc != 0 or not got.stdout.strip():
        return None
    directory = tempfile.mkdtemp(prefix="tracebloc-peek-")  # 0700 on POSIX
    try:
        path = os.path.join(directory, "config")
        write_private(path, got.stdout.encode("utf-8"), env=env, os_=os_)
        seen = {**env, "KUBECONFIG": path}
        kubeconfig.anchor(seen, os_, s.context)
        if kubeconfig.read_context(seen, os_).context != s.context:
            return None
        cluster = cluster_reads.read_cluster(
            cfg, seen, redactor, helm_tool=helm_tool, kubectl_tool=kubectl_tool, os_=os_, gpu=gpu
        )
    except (OSError, ValueError, InstallerError):
        return None
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return cluster if cluster.listing.readable else None


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
