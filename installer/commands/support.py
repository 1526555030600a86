"""What support needs in a `diagnose` bundle besides the release (scripts/lib/diagnose.sh):
Docker's and k3d's state with the nodes' restart policy, every namespace's pods and events,
`describe` of the pods that are not running, free disk, and the proxy settings. Each is one
collector, run by commands/diagnose.py as its own step (one that fails leaves a note); every
byte passes that module's `add`, hence its redactor.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping

from installer.decide.model import Connection, os_name
from installer.decide.redact import Redactor
from installer.decide.settings import proxy_environment, split_proxy_url
from installer.decide.tooling import Tool
from installer.edges import proc, toolpath

Add = Callable[[str, str], None]
Timeout = Callable[[], float]
MAX_DESCRIBED = 10


def _run(
    tool: Tool, args: list[str], env: Mapping[str, str], redactor: Redactor, timeout: float
) -> str:
    result = proc.run(tool, args, timeout=timeout, env=env, redactor=redactor)
    return f"$ {tool.name} {' '.join(args)}\nexit {result.rc}\n{result.stdout}{result.stderr}"


def docker_state(env: Mapping[str, str], redactor: Redactor, timeout: Timeout, add: Add) -> None:
    """`docker info`, every container, and the k3d nodes' restart policy (what brings the
    cluster back after a reboot)."""
    from installer.edges.docker import find_docker

    tool = find_docker(env, os_name(sys.platform))
    add(
        "docker-info.json", _run(tool, ["info", "--format", "{{json .}}"], env, redactor, timeout())
    )
    add(
        "docker-ps.txt",
        _run(
            tool,
            ["ps", "-a", "--no-trunc", "--format", "{{.Names}}\t{{.Status}}\t{{.Image}}"],
            env,
            redactor,
            timeout(),
        ),
    )
    listed = proc.run(
        tool,
        ["ps", "-a", "--filter", "label=app=k3d", "--format", "{{.Names}}"],
        timeout=timeout(),
        env=env,
        redactor=redactor,
    )
    nodes = [n for n in listed.stdout.split() if n] if listed.rc == 0 else []
    if nodes:
        add(
            "k3d-restart-policy.txt",
            _run(
                tool,
                [
                    "inspect",
                    "--format",
                    "{{.Name}} restart={{.HostConfig.RestartPolicy.Name}}",
                    *nodes,
                ],
                env,
                redactor,
                timeout(),
            ),
        )


def k3d_state(env: Mapping[str, str], redactor: Redactor, timeout: Timeout, add: Add) -> None:
    from installer.commands.tools import resolve_tool

    tool = resolve_tool("k3d", env, timeout=timeout()).tool()
    add(
        "k3d-clusters.json", _run(tool, ["cluster", "list", "-o", "json"], env, redactor, timeout())
    )
    add("k3d-nodes.json", _run(tool, ["node", "list", "-o", "json"], env, redactor, timeout()))


def cluster_state(
    env: Mapping[str, str], redactor: Redactor, timeout: Timeout, add: Add, conn: Connection
) -> None:
    """Pods and events of every namespace, and `describe` of each pod that is not running
    (at most MAX_DESCRIBED)."""
    from installer.commands.tools import resolve_tool

    tool = resolve_tool("kubectl", env, timeout=timeout()).tool()
    flags = conn.kubectl_flags()
    add(
        "pods-all-namespaces.txt",
        _run(tool, ["get", "pods", "-A", "-o", "wide", *flags], env, redactor, timeout()),
    )
    add(
        "events-all-namespaces.txt",
        _run(
            tool,
            ["get", "events", "-A", "--sort-by=.lastTimestamp", *flags],
            env,
            redactor,
            timeout(),
        ),
    )
    listed = proc.run(
        tool,
        ["get", "pods", "-A", "-o", "json", *flags],
        timeout=timeout(),
        env=env,
        redactor=redactor,
    )
    for namespace, name in failing_pods(listed.stdout if listed.rc == 0 else "")[:MAX_DESCRIBED]:
        add(
            f"describe/{namespace}.{name}.txt",
            _run(
                tool, ["describe", "pod", name, "-n", namespace, *flags], env, redactor, timeout()
            ),
        )


def failing_pods(text: str) -> list[tuple[str, str]]:
    """(namespace, name) of each pod `kubectl get pods -A -o json` shows not Running or
    Succeeded, or with a container not ready."""
    try:
        doc = json.loads(text) if text.strip() else {}
    except ValueError:
        return []
    out = []
    for pod in doc.get("items", []) if isinstance(doc, dict) else []:
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        phase = status.get("phase")
        ready = all(c.get("ready") for c in status.get("containerStatuses") or [])
        if phase == "Succeeded" or (phase == "Running" and ready):
            continue
        out.append((str(meta.get("namespace", "")), str(meta.get("name", ""))))
    return out


def disk_state(
    env: Mapping[str, str], redactor: Redactor, timeout: Timeout, add: Add, data_dir: str
) -> None:
    """Free disk where the data directory and Docker's data live."""
    from installer.edges.machine import disk_free

    lines = [f"{data_dir}: {_gib(disk_free(data_dir))} free"]
    if os_name(sys.platform) != "windows":
        df = toolpath.find_on_path("df", env, os_name(sys.platform))
        if df is not None:
            lines.append(_run(df, ["-h"], env, redactor, timeout()))
    add("disk.txt", "\n".join(lines) + "\n")


def proxy_state(env: Mapping[str, str], add: Add) -> None:
    """The proxy variables as set, each password masked (the redactor masks it again)."""
    lines = []
    for name, value in sorted(proxy_environment(env).items()):
        scheme, userinfo, host = split_proxy_url(value)
        if userinfo:
            user = userinfo.partition(":")[0]
            value = f"{scheme}://{user}:********@{host}"
        lines.append(f"{name}={value}")
    add("proxy.txt", "\n".join(lines or ["(no proxy variable is set)"]) + "\n")


def _gib(free: int | None) -> str:
    return "unknown" if free is None else f"{free / 2**30:.1f} GiB"
