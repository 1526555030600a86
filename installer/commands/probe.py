"""Gather the facts: machine, tools, the release's values and the nodes — reads only.

The release read and the node read are independent, so they run at the same time and a
fresh install pays one round trip. Expected failures come back as data (an unreadable read
with a reason), never as exceptions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from installer.config import ProbeConfig
from installer.decide.errors import ToolNotFound
from installer.decide.model import MachineFacts, NodeRead, ReleaseRead, ReleaseState, Resolution
from installer.decide.resolve import resolve_training
from installer.edges import helm, kubectl, proc
from installer.edges.machine import read_machine
from installer.present.redact import Redactor

SKIP_REASON = "not read: TRACEBLOC_TRAINING_RESOURCES chooses the size"


@contextlib.contextmanager
def concurrently(workers: int) -> Iterator[ThreadPoolExecutor]:
    """A thread pool whose tool calls are killed, not awaited, when the caller is interrupted."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="probe")
    try:
        yield pool
    except BaseException:
        proc.terminate_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class Facts:
    machine: MachineFacts
    tools: Mapping[str, str | None]
    tool_problems: Mapping[str, str]
    nodes: NodeRead
    release: ReleaseRead
    training: Resolution


def find_tools(
    env: Mapping[str, str], os_: str
) -> tuple[dict[str, proc.Tool | None], dict[str, str]]:
    found: dict[str, proc.Tool | None] = {}
    problems: dict[str, str] = {}
    for name in ("kubectl", "helm"):
        try:
            found[name] = proc.find_tool(name, env, os_)
        except ToolNotFound as exc:
            found[name] = None
            problems[name] = f"{exc.message}; {exc.remedy}"
    return found, problems


def gather(
    cfg: ProbeConfig,
    env: Mapping[str, str],
    redactor: Redactor | None = None,
    release: ReleaseRead | None = None,
    machine: MachineFacts | None = None,
    nodes: NodeRead | None = None,
) -> Facts:
    """`release`, `machine` and `nodes`, when given, are reads already made (plan and
    install read every client release once for the guard, the nodes beside it, and the
    machine for the preflight); they are used as-is, never read a second time."""
    machine = machine or read_machine(env)
    tools, problems = find_tools(env, machine.os)
    if release is None or nodes is None:
        release, nodes = _read(cfg, env, redactor, tools, release)
    return Facts(
        machine=machine,
        tools={name: tool.path if tool else None for name, tool in tools.items()},
        tool_problems=problems,
        nodes=nodes,
        release=release,
        training=resolve_training(cfg.override, release, nodes),
    )


def _read(
    cfg: ProbeConfig,
    env: Mapping[str, str],
    redactor: Redactor | None,
    tools: Mapping[str, proc.Tool | None],
    release: ReleaseRead | None,
) -> tuple[ReleaseRead, NodeRead]:
    if cfg.override:
        # A human chose the size: the cluster is not asked anything about it.
        nodes = NodeRead(readable=False, reason=SKIP_REASON, skipped=True)
        skipped = ReleaseRead(cfg.release, cfg.namespace, ReleaseState.SKIPPED,
                              reason=SKIP_REASON)  # fmt: skip
        return release or skipped, nodes
    if release is not None:
        return release, kubectl.read_nodes(tools["kubectl"], cfg.conn, timeout=cfg.timeout,
                                           env=env, redactor=redactor)  # fmt: skip
    with concurrently(2) as pool:
        release_future = pool.submit(
            helm.read_release, tools["helm"], cfg.release, cfg.namespace, cfg.conn,
            timeout=cfg.timeout, env=env, redactor=redactor)  # fmt: skip
        nodes_future = pool.submit(
            kubectl.read_nodes, tools["kubectl"], cfg.conn,
            timeout=cfg.timeout, env=env, redactor=redactor)  # fmt: skip
        return release_future.result(), nodes_future.result()
