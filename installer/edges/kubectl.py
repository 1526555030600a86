"""One read of the cluster's nodes: `kubectl get nodes -o json`, parsed into `NodeRead`.

Every expected failure (no kubectl, deadline, non-zero exit, output that is not the JSON we
asked for) becomes an unreadable `NodeRead` with a reason, never an exception.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

from installer.decide.errors import InstallerError
from installer.decide.model import Connection, Node, NodeRead
from installer.decide.quantity import QuantityError, to_bytes, to_millicores
from installer.edges import proc
from installer.present.redact import Redactor


def get_nodes_args(conn: Connection, timeout: float) -> list[str]:
    # --request-timeout is kubectl's own limit; proc's deadline is the one that is enforced.
    return [
        "get", "nodes", "-o", "json", *conn.kubectl_flags(),
        f"--request-timeout={max(1, math.ceil(timeout))}s",
    ]  # fmt: skip


def read_nodes(
    tool: proc.Tool | None,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> NodeRead:
    if tool is None:
        return NodeRead(readable=False, reason="kubectl was not found")
    try:
        result = proc.run(tool, get_nodes_args(conn, timeout), timeout=timeout, env=env,
                          redactor=redactor)  # fmt: skip
    except InstallerError as exc:
        return NodeRead(readable=False, reason=exc.message)
    if result.rc != 0:
        return NodeRead(readable=False, reason=proc.last_line(result.stderr, result.rc))
    return parse_nodes(result.out)


def parse_nodes(out: bytes) -> NodeRead:
    try:
        document = json.loads(proc.decode(out))
    except (ValueError, RecursionError):
        return NodeRead(readable=False, reason="kubectl printed output that is not JSON")
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        return NodeRead(readable=False, reason="kubectl printed JSON without a list of nodes")
    return NodeRead(readable=True, nodes=tuple(parse_node(item) for item in items))


def parse_node(item: Any) -> Node:
    node = _parse_size(item)
    return dataclasses.replace(node, **_other_facts(item if isinstance(item, dict) else {}))


GPU_RESOURCES = (("nvidia", "nvidia.com/gpu"), ("amd", "amd.com/gpu"))


def _other_facts(item: dict[str, Any]) -> dict[str, Any]:
    """Arch label, allocatable GPUs, kernel and provider id; whatever is malformed is left
    out (an unknown fact), never guessed."""
    labels = _mapping(_mapping(item.get("metadata")).get("labels"))
    status = _mapping(item.get("status"))
    allocatable = _mapping(status.get("allocatable"))
    arch = labels.get("kubernetes.io/arch")
    gpus = []
    for vendor, resource in GPU_RESOURCES:
        count = allocatable.get(resource)
        if isinstance(count, str) and count.isascii() and count.isdigit() and int(count) > 0:
            gpus.append((vendor, int(count)))
    kernel = _mapping(status.get("nodeInfo")).get("kernelVersion")
    provider = _mapping(item.get("spec")).get("providerID")
    return {
        "arch": arch if isinstance(arch, str) and arch else None,
        "gpus": tuple(gpus),
        "kernel": kernel if isinstance(kernel, str) else "",
        "provider_id": provider if isinstance(provider, str) else "",
    }


def _parse_size(item: Any) -> Node:
    item = item if isinstance(item, dict) else {}
    metadata = _mapping(item.get("metadata"))
    name = metadata.get("name")
    name = name if isinstance(name, str) and name else "<unnamed>"
    schedulable = _mapping(item.get("spec")).get("unschedulable") is not True
    allocatable = _mapping(_mapping(item.get("status")).get("allocatable"))
    cpu_text, memory_text = allocatable.get("cpu"), allocatable.get("memory")
    try:
        cpu = to_millicores(cpu_text) if isinstance(cpu_text, str) else None
        memory = to_bytes(memory_text) if isinstance(memory_text, str) else None
    except QuantityError as exc:
        return Node(name, None, None, schedulable, parsed=False, reason=str(exc))
    if cpu is None or memory is None:
        missing = "cpu" if cpu is None else "memory"
        return Node(name, cpu, memory, schedulable, parsed=False,
                    reason=f"allocatable {missing} is missing")  # fmt: skip
    if cpu < 0 or memory < 0:
        # Grammatical, but no measurement of a real node: not evidence of its size.
        return Node(name, None, None, schedulable, parsed=False, reason="allocatable is negative")
    return Node(name, cpu, memory, schedulable, parsed=True)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
