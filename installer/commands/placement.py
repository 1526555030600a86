"""Read what the site decisions need and decide them (decide/placement.py).

The kubeconfig view is always read (it is local); the RuntimeClass and the device plugins
only when a GPU is in play, at the same time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from installer.commands.probe import Facts, concurrently
from installer.decide import placement
from installer.decide.model import Gpu, KubeTarget, ReleaseState
from installer.decide.redact import Redactor
from installer.decide.settings import PlanConfig
from installer.edges import cluster


def host_ids() -> tuple[int, int] | None:
    """This user's uid and gid, where the OS has them (not on Windows)."""
    getuid, getgid = getattr(os, "getuid", None), getattr(os, "getgid", None)
    return (getuid(), getgid()) if getuid and getgid else None


def decide_site(
    cfg: PlanConfig,
    env: Mapping[str, str],
    facts: Facts,
    host_gpu: Gpu,
    redactor: Redactor | None = None,
    *,
    target: KubeTarget,
) -> placement.Site:
    """`target`: the kubeconfig's context and API server as plan's and install's overlapped
    reads already saw them (never read a second time)."""
    choice = facts.tools.get("kubectl")  # resolved once, by gather
    kubectl = choice.tool() if choice is not None and choice.ready else None
    conn, timeout = cfg.probe.conn, cfg.probe.timeout
    where = placement.locality(target, facts.nodes, cfg.storage_mode)
    env_single, top_single = placement.single_node(where, facts.nodes, cfg.storage_mode)

    vendor, _ = placement.gpu_vendor(facts.nodes, where, host_gpu)
    runtime_class: bool | None = None
    plugins: placement.Plugins | None = None
    if vendor is not None:
        with concurrently(2) as pool:
            runtime_future = pool.submit(
                cluster.read_runtime_class,
                kubectl,
                "nvidia",
                conn,
                timeout=timeout,
                env=env,
                redactor=redactor,
            )
            plugins_future = pool.submit(
                cluster.read_plugins, kubectl, conn, timeout=timeout, env=env, redactor=redactor
            )
            runtime_class, plugins = runtime_future.result(), plugins_future.result()
    values = facts.release.values if facts.release.state is ReleaseState.PRESENT else {}
    gpu = placement.plan_gpu(
        facts.nodes,
        where,
        host_gpu,
        runtime_class,
        plugins,
        values,
        cfg.probe.release,
        cfg.probe.namespace,
    )

    notes: list[str] = []
    dataset = None
    ids = None
    if cfg.host_dataset_dir:
        dataset = placement.DATASET_MOUNT
        # The ingestion Job writes the dataset as this user (root_squash NFS refuses root).
        ids = host_ids()
        if where.local is False:
            notes.append(
                f"HOST_DATASET_DIR is a directory on this machine, but {where.evidence}: "
                f"the dataset volume points at {dataset} on the nodes"
            )
    return placement.Site(
        single_node_env=env_single,
        single_node=top_single,
        gpu=gpu,
        dataset_path=dataset,
        host_ids=ids,
        where=where,
        notes=tuple(notes) + gpu.notes,
    )
