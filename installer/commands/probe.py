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

from installer.decide.model import MachineFacts, NodeRead, ReleaseRead, ReleaseState, Resolution
from installer.decide.redact import Redactor
from installer.decide.resolve import resolve_training
from installer.decide.settings import ProbeConfig
from installer.decide.tooling import Tool, ToolChoice
from installer.edges import helm, kubectl, proc, tools
from installer.edges.machine import read_machine

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
    tools: Mapping[str, ToolChoice]  # kubectl, helm, k3d: where each comes from
    tool_problems: Mapping[str, str]  # the required tools (kubectl, helm) that cannot be had
    nodes: NodeRead
    release: ReleaseRead
    training: Resolution


SHOWN_TOOLS = ("kubectl", "helm", "k3d")
REQUIRED_TOOLS = ("kubectl", "helm")


def find_tools(
    env: Mapping[str, str], machine: MachineFacts, timeout: float
) -> tuple[dict[str, Tool | None], dict[str, ToolChoice], dict[str, str]]:
    """The runnable tools (None: not here yet, or not to be had), every tool's resolution,
    and a problem line for each required tool that cannot be had."""
    cfg = tools.settings(env, machine.os, machine.arch)
    choices = tools.resolve_all(SHOWN_TOOLS, env, cfg, timeout=timeout)
    found = {name: choices[name].tool() if choices[name].ready else None for name in REQUIRED_TOOLS}
    problems = {
        name: f"{name}: {choices[name].problem}"
        for name in REQUIRED_TOOLS
        if choices[name].source is None
    }
    return found, choices, problems


def gather(
    cfg: ProbeConfig,
    env: Mapping[str, str],
    redactor: Redactor | None = None,
    release: ReleaseRead | None = None,
    machine: MachineFacts | None = None,
    tool_choices: Mapping[str, ToolChoice] | None = None,
    nodes: NodeRead | None = None,
    *,
    sizing_only: bool = True,
) -> Facts:
    """`release`, `machine`, `tool_choices` and `nodes`, when given, are reads already made, used
    as-is. `sizing_only` False: the cluster is read even under a size override."""
    machine = machine or read_machine(env)
    if tool_choices is None:
        tools, choices, problems = find_tools(env, machine, cfg.timeout)
    else:
        choices = dict(tool_choices)
        tools = {
            n: choices[n].tool() if n in choices and choices[n].ready else None
            for n in REQUIRED_TOOLS
        }
        problems = {}
    if release is None or nodes is None:
        release, nodes = _read(
            cfg, env, redactor, tools, release, skip=bool(cfg.override) and sizing_only
        )
    return Facts(
        machine=machine,
        tools=choices,
        tool_problems=problems,
        nodes=nodes,
        release=release,
        training=resolve_training(cfg.override, release, nodes),
    )


def _read(
    cfg: ProbeConfig,
    env: Mapping[str, str],
    redactor: Redactor | None,
    tools: Mapping[str, Tool | None],
    release: ReleaseRead | None,
    *,
    skip: bool,
) -> tuple[ReleaseRead, NodeRead]:
    if skip:
        # A human chose the size: the cluster is not asked anything about it.
        nodes = NodeRead(readable=False, reason=SKIP_REASON, skipped=True)
        skipped = ReleaseRead(cfg.release, cfg.namespace, ReleaseState.SKIPPED, reason=SKIP_REASON)
        return release or skipped, nodes
    if release is not None:
        return release, kubectl.read_nodes(
            tools["kubectl"], cfg.conn, timeout=cfg.timeout, env=env, redactor=redactor
        )
    with concurrently(2) as pool:
        release_future = pool.submit(
            helm.read_release,
            tools["helm"],
            cfg.release,
            cfg.namespace,
            cfg.conn,
            timeout=cfg.timeout,
            env=env,
            redactor=redactor,
        )
        nodes_future = pool.submit(
            kubectl.read_nodes,
            tools["kubectl"],
            cfg.conn,
            timeout=cfg.timeout,
            env=env,
            redactor=redactor,
        )
        return release_future.result(), nodes_future.result()
