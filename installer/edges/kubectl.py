"""One read of the cluster's nodes: `kubectl get nodes -o json`, parsed into `NodeRead`.

Every expected failure (no kubectl, deadline, non-zero exit, output that is not the JSON we
asked for) becomes an unreadable `NodeRead` with a reason, never an exception.
"""

from __future__ import annotations

import dataclasses
import io
import json
import tempfile
from collections.abc import Mapping
from typing import IO, Any

from installer.decide.model import Connection, KubeTarget, Node, NodeRead, exec_command
from installer.decide.quantity import QuantityError, to_bytes, to_millicores
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import call, childio, jsonstream

NO_KUBECTL = "kubectl was not found"


def get_nodes_args(conn: Connection, timeout: float) -> list[str]:
    return ["get", "nodes", "-o", "json", *conn.kubectl_flags(), conn.request_timeout(timeout)]


def read_nodes(
    tool: Tool | None,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> NodeRead:
    if tool is None:
        return NodeRead(readable=False, reason=NO_KUBECTL)
    # The answer goes to a temporary file, not into memory, and is parsed from there node
    # by node: a large cluster's JSON is tens of MiB, almost all of it fields never read.
    with tempfile.TemporaryFile() as answer:
        result = call.answer(
            tool,
            get_nodes_args(conn, timeout),
            timeout=timeout,
            env=env,
            redactor=redactor,
            stdout=answer,
        )
        if isinstance(result, call.NoAnswer):
            return NodeRead(readable=False, reason=result.reason)
        if result.rc != 0:
            return NodeRead(readable=False, reason=call.reason(result))
        answer.seek(0)
        return read_nodes_json(answer)


def parse_nodes(out: bytes) -> NodeRead:
    return read_nodes_json(io.BytesIO(out))


def read_nodes_json(raw: IO[bytes]) -> NodeRead:
    nodes: list[Node] = []
    try:
        jsonstream.each_element(
            raw, "items", lambda item: nodes.append(parse_node(item)), nodes.clear
        )
    except jsonstream.NotAnObject:
        return NodeRead(readable=False, reason="kubectl printed JSON without a list of nodes")
    except (ValueError, RecursionError):
        return NodeRead(readable=False, reason="kubectl printed output that is not JSON")
    return NodeRead(readable=True, nodes=tuple(nodes))


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
        return Node(
            name, cpu, memory, schedulable, parsed=False, reason=f"allocatable {missing} is missing"
        )
    if cpu < 0 or memory < 0:
        # Grammatical, but no measurement of a real node: not evidence of its size.
        return Node(name, None, None, schedulable, parsed=False, reason="allocatable is negative")
    return Node(name, cpu, memory, schedulable, parsed=True)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# --- which cluster: the kubeconfig's own answer, read locally ------------------------------


def config_view_args(conn: Connection) -> list[str]:
    # Without --raw kubectl masks certificate data and tokens; only names and the server
    # are read here.
    return ["config", "view", "--minify", "-o", "json", *conn.kubectl_flags()]


def read_target(
    tool: Tool | None,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> KubeTarget:
    result = call.answer(
        tool,
        config_view_args(conn),
        timeout=timeout,
        env=env,
        redactor=redactor,
        missing=NO_KUBECTL,
    )
    if isinstance(result, call.NoAnswer):
        return KubeTarget(False, reason=result.reason)
    if result.rc != 0:
        return KubeTarget(False, reason=call.reason(result))
    return parse_target(result.out)


def parse_target(out: bytes) -> KubeTarget:
    try:
        document = json.loads(childio.decode(out))
    except (ValueError, RecursionError):
        return KubeTarget(False, reason="kubectl config view printed output that is not JSON")
    document = _mapping(document)
    context = document.get("current-context")
    first = {key: _first(document.get(key)) for key in ("clusters", "contexts", "users")}
    server = _mapping(first["clusters"].get("cluster")).get("server")
    cluster, user = (
        _mapping(first["contexts"].get("context")).get(key) for key in ("cluster", "user")
    )
    if not isinstance(context, str) or not context:
        return KubeTarget(False, reason="the kubeconfig has no current context")
    # --minify keeps only the current context's entries, so the first of each is its own.
    return KubeTarget(
        True,
        context=context,
        server=server if isinstance(server, str) else "",
        cluster=cluster if isinstance(cluster, str) and first["clusters"] else "",
        user=user if isinstance(user, str) else "",
        exec_command=exec_command(first["users"].get("user")),
    )


def _first(entries: Any) -> dict[str, Any]:
    return _mapping(entries[0]) if isinstance(entries, list) and entries else {}
