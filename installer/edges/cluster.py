"""Reads of the cluster beyond its nodes, for the site decisions; and the one change they
may call for (adopting an orphaned device plugin).

Each read says "absent" only when kubectl said NotFound; any other failure is unreadable,
with the reason, never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from installer.decide import remedy
from installer.decide.errors import InstallerError
from installer.decide.model import Connection
from installer.decide.placement import Plugins, PluginSet
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import call, childio, proc

_NOT_FOUND = ("NotFound", "not found")
_NO_KUBECTL = "kubectl was not found"


def runtime_class_args(name: str, conn: Connection, timeout: float) -> list[str]:
    return [
        "get",
        "runtimeclass",
        name,
        "-o",
        "name",
        *conn.kubectl_flags(),
        Connection.request_timeout(timeout),
    ]


def read_runtime_class(
    tool: Tool | None,
    name: str,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> bool | None:
    """True: it exists; False: kubectl said NotFound; None: could not tell."""
    result = call.answer(
        tool,
        runtime_class_args(name, conn, timeout),
        timeout=timeout,
        env=env,
        redactor=redactor,
        missing=_NO_KUBECTL,
    )
    if isinstance(result, call.NoAnswer):
        return None
    if result.rc == 0:
        return True
    return False if any(word in result.stderr for word in _NOT_FOUND) else None


def daemonsets_args(conn: Connection, timeout: float) -> list[str]:
    return [
        "get",
        "daemonsets",
        "--all-namespaces",
        "-o",
        "json",
        *conn.kubectl_flags(),
        Connection.request_timeout(timeout),
    ]


def read_plugins(
    tool: Tool | None,
    conn: Connection,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> Plugins:
    result = call.answer(
        tool,
        daemonsets_args(conn, timeout),
        timeout=timeout,
        env=env,
        redactor=redactor,
        missing=_NO_KUBECTL,
    )
    if isinstance(result, call.NoAnswer):
        return Plugins(False, reason=result.reason)
    if result.rc != 0:
        return Plugins(False, reason=call.reason(result))
    return parse_plugins(result.out)


def _vendor(name: str, images: list[str]) -> str | None:
    """A DaemonSet is a device plugin when its name or an image says so."""
    text = " ".join([name, *images]).lower()
    if "device-plugin" not in text:
        return None
    if "nvidia" in text:
        return "nvidia"
    if "amdgpu" in text or "rocm" in text:
        return "amd"
    return None


def parse_plugins(out: bytes) -> Plugins:
    try:
        document = json.loads(childio.decode(out))
    except (ValueError, RecursionError):
        return Plugins(False, reason="kubectl printed output that is not JSON")
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        return Plugins(False, reason="kubectl printed JSON without a list of DaemonSets")
    found = []
    for item in items:
        item = item if isinstance(item, dict) else {}
        metadata = _mapping(item.get("metadata"))
        name, namespace = metadata.get("name"), metadata.get("namespace")
        if not (isinstance(name, str) and isinstance(namespace, str)):
            continue
        pod = _mapping(_mapping(_mapping(item.get("spec")).get("template")).get("spec"))
        containers = pod.get("containers")
        images: list[str] = (
            [
                c["image"]
                for c in containers
                if isinstance(c, dict) and isinstance(c.get("image"), str)
            ]
            if isinstance(containers, list)
            else []
        )
        vendor = _vendor(name, images)
        if vendor is None:
            continue
        notes = _mapping(metadata.get("annotations"))
        release, release_ns = (
            notes.get("meta.helm.sh/release-name"),
            notes.get("meta.helm.sh/release-namespace"),
        )
        found.append(
            PluginSet(
                namespace,
                name,
                vendor,
                release if isinstance(release, str) else None,
                release_ns if isinstance(release_ns, str) else None,
            )
        )
    return Plugins(True, tuple(found))


def adopt_args(
    plugin: PluginSet, release: str, namespace: str, conn: Connection
) -> list[list[str]]:
    """The two calls that hand an unowned DaemonSet to the release, so helm takes it over in
    place instead of failing with "exists and cannot be imported"."""
    target = ["daemonset", plugin.name, "-n", plugin.namespace, *conn.kubectl_flags()]
    return [
        ["label", *target, "app.kubernetes.io/managed-by=Helm", "--overwrite"],
        [
            "annotate",
            *target,
            f"meta.helm.sh/release-name={release}",
            f"meta.helm.sh/release-namespace={namespace}",
            "--overwrite",
        ],
    ]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def adopt_plugin(
    run: Callable[[list[str]], proc.Result],
    plugin: PluginSet,
    release: str,
    namespace: str,
    conn: Connection,
) -> None:
    """Hand the orphaned plugin to the release (both calls), or raise with the way out."""
    for args in adopt_args(plugin, release, namespace, conn):
        result = run(args)
        if result.rc != 0:
            raise InstallerError(
                f"could not adopt the device plugin {plugin.namespace}/{plugin.name} into "
                f"release {release}: {childio.last_line(result.stderr, result.rc)}",
                "remove it and run again: "
                + remedy.kubectl(["delete", "daemonset", plugin.name], conn, plugin.namespace)
                + " (the chart brings its own)",
            )


# What k3s itself makes in a new cluster: nothing of anyone's.
K3S_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
HOLDINGS_ARGS = ("get", "namespaces,persistentvolumeclaims", "-A", "-o", "json")


def parse_holdings(out: bytes) -> tuple[str, ...]:
    """From HOLDINGS_ARGS' answer: the namespaces beyond k3s's own and every volume claim,
    in words. Raises ValueError on an answer that is not such a list."""
    try:
        document = json.loads(childio.decode(out))
    except (ValueError, RecursionError):
        raise ValueError("kubectl printed output that is not JSON") from None
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise ValueError("kubectl printed JSON without a list of items")
    found: list[str] = []
    for item in map(_mapping, items):
        metadata = _mapping(item.get("metadata"))
        name = metadata.get("name", "")
        if item.get("kind") == "Namespace" and name not in K3S_NAMESPACES:
            found.append(f"namespace {name}")
        elif item.get("kind") == "PersistentVolumeClaim":
            found.append(f"volume claim {metadata.get('namespace', '')}/{name}")
    return tuple(found)
