"""`status`: is the client healthy? Reads only, all at once, each bounded.

Healthy: both tools found, the cluster answers, the release is deployed, and every workload
its manifest defines exists, wants a replica and is rolled out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from installer.commands.probe import concurrently, find_tools
from installer.commands.tools import typed_conn
from installer.decide.model import ListRead
from installer.decide.redact import Redactor
from installer.decide.settings import ProbeConfig
from installer.decide.status import Status
from installer.decide.tooling import Tool
from installer.edges import call, helm, kubectl, workloads
from installer.edges.machine import read_machine


def gather_status(cfg: ProbeConfig, env: Mapping[str, str], redactor: Redactor) -> Status:
    found, choices, problems = find_tools(env, read_machine(env), cfg.timeout)
    # status never downloads: a tool only a download would bring is a problem, with its remedy.
    problems = {
        **problems,
        **{
            name: f"{choice.absent()}; {choice.where_to_get()}"
            for name, choice in choices.items()
            if name in found and choice.source == "download"
        },
    }
    helm_tool, kubectl_tool = found["helm"], found["kubectl"]
    cfg = dataclasses.replace(
        cfg, conn=typed_conn(cfg.conn, env, choices["helm"].path, choices["kubectl"].path)
    )
    release, namespace, conn, timeout = cfg.release, cfg.namespace, cfg.conn, cfg.timeout
    with concurrently(5) as pool:
        listed = pool.submit(_list_release, helm_tool, release, namespace, cfg, env, redactor)
        values = pool.submit(
            helm.read_release,
            helm_tool,
            release,
            namespace,
            conn,
            timeout=timeout,
            env=env,
            redactor=redactor,
        )
        nodes = pool.submit(
            kubectl.read_nodes, kubectl_tool, conn, timeout=timeout, env=env, redactor=redactor
        )
        snapshot = pool.submit(
            workloads.read_snapshot,
            kubectl_tool,
            release,
            namespace,
            conn,
            timeout=timeout,
            env=env,
            redactor=redactor,
        )
        defines = pool.submit(
            workloads.read_defined,
            helm_tool,
            release,
            namespace,
            conn,
            timeout=timeout,
            env=env,
            redactor=redactor,
        )
        # Inside the pool: leaving it cancels whatever has not started yet.
        listing, values_read = listed.result(), values.result()
        nodes_read, snapshot_read = nodes.result(), snapshot.result()
        defined = defines.result()
    row = next(
        (r for r in listing.releases if r.name == release and r.namespace == namespace), None
    )
    return Status(
        release,
        namespace,
        {k: t.path if t else None for k, t in found.items()},
        problems,
        row,
        listing,
        values_read,
        nodes_read,
        snapshot_read,
        defined,
    )


def _list_release(
    tool: Tool | None,
    release: str,
    namespace: str,
    cfg: ProbeConfig,
    env: Mapping[str, str],
    redactor: Redactor,
) -> ListRead:
    result = call.answer(
        tool,
        helm.release_list_args(release, namespace, cfg.conn),
        timeout=cfg.timeout,
        env=env,
        redactor=redactor,
        missing="helm was not found",
    )
    if isinstance(result, call.NoAnswer):
        return ListRead(False, reason=result.reason)
    return helm.parse_list(result.rc, result.out, result.err)
