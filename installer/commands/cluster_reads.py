"""Every read `plan` and `install` make of the cluster, overlapped, before anything changes.

Two rounds: first everything that depends on nothing (including the asked-for release's
values and state); then the other client releases `helm list` names. A first-round read is
used only if the list shows that release. Expected failures come back as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from typing import TypeVar

from installer.commands.probe import concurrently
from installer.decide.cluster_reads import ClusterRead, Key, StatusRead
from installer.decide.errors import InstallerError
from installer.decide.model import Gpu, ListRead, ReleaseRead
from installer.decide.redact import Redactor
from installer.decide.settings import PlanConfig
from installer.decide.tooling import Tool
from installer.edges import apply, call, helm, kubectl
from installer.edges.gpu import detect_gpu

T = TypeVar("T")


def _outcome(future: Future[T]) -> tuple[T, None] | tuple[None, InstallerError]:
    try:
        return future.result(), None
    except InstallerError as exc:
        return None, exc


def read_cluster(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor,
    *,
    helm_tool: Tool | None,
    kubectl_tool: Tool | None,
    os_: str,
    repos: bool = False,
    metrics: bool = False,
    gpu: Gpu | None = None,
) -> ClusterRead:
    """The nodes are read even under a size override (it replaces the size decision only).
    `gpu`: this machine's GPU as already read this run, not read again."""
    probe = cfg.probe
    conn, timeout = probe.conn, probe.timeout
    tools = (
        apply.Tools(helm=helm_tool, kubectl=kubectl_tool, env=env, redactor=redactor)
        if helm_tool and kubectl_tool
        else None
    )

    def listing() -> ListRead:
        result = call.answer(
            helm_tool,
            helm.list_args(conn),
            timeout=timeout,
            env=env,
            redactor=redactor,
            missing="helm was not found",
        )
        if isinstance(result, call.NoAnswer):
            return ListRead(False, reason=result.reason)
        return helm.parse_list(result.rc, result.out, result.err)

    def status(name: str, namespace: str) -> StatusRead:
        if helm_tool is None:
            return StatusRead(error=InstallerError("helm was not found"))
        result = call.answer(
            helm_tool,
            helm.status_args(name, namespace, conn),
            timeout=timeout,
            env=env,
            redactor=redactor,
        )
        if isinstance(result, call.NoAnswer):
            return StatusRead(error=result.error or InstallerError(result.reason))
        try:
            return StatusRead(helm.parse_status(result.rc, result.out, result.err, namespace))
        except InstallerError as exc:
            return StatusRead(error=exc)

    with concurrently(8) as pool:
        target_f = pool.submit(
            kubectl.read_target, kubectl_tool, conn, timeout=timeout, env=env, redactor=redactor
        )
        list_f = pool.submit(listing)
        nodes_f = pool.submit(
            kubectl.read_nodes, kubectl_tool, conn, timeout=timeout, env=env, redactor=redactor
        )
        gpu_f = pool.submit(lambda: detect_gpu(env, os_, timeout=timeout) if gpu is None else gpu)
        repos_f = pool.submit(apply.read_repos, tools) if repos and tools else None
        metrics_f = pool.submit(apply.metrics_available, tools, conn) if metrics and tools else None

        value_fs: dict[Key, Future[ReleaseRead]] = {}
        status_fs: dict[Key, Future[StatusRead]] = {}

        def read_release(key: Key) -> None:
            if key not in value_fs:
                value_fs[key] = pool.submit(
                    helm.read_release,
                    helm_tool,
                    *key,
                    conn,
                    timeout=timeout,
                    env=env,
                    redactor=redactor,
                )
                status_fs[key] = pool.submit(status, *key)

        if helm_tool is not None:
            read_release((probe.release, probe.namespace))
        listed = list_f.result()
        clients = {(r.name, r.namespace) for r in listed.releases if r.is_client}
        for key in sorted(clients):
            read_release(key)

        nodes = nodes_f.result()
        found_repos, repos_error = _outcome(repos_f) if repos_f else (None, None)
        available, _ = _outcome(metrics_f) if metrics_f else (None, None)
        return ClusterRead(
            target=target_f.result(),
            listing=listed,
            values={key: f.result() for key, f in value_fs.items() if key in clients},
            statuses={key: f.result() for key, f in status_fs.items() if key in clients},
            nodes=nodes,
            gpu=gpu_f.result(),
            repos=found_repos,
            repos_error=repos_error,
            metrics=available,
            asked=frozenset(
                name for name, f in (("repos", repos_f), ("metrics", metrics_f)) if f is not None
            ),
        )
