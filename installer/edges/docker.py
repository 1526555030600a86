"""Docker: whether it runs and its budget (`docker info`), what a node container carries
(`docker inspect`), and the few changes the engine makes to node containers. Expected
failures are data: a wedged daemon is "unreadable", not "running" and not "stopped".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from installer.decide.drift import Container, DockerRead, Inspected
from installer.decide.errors import ToolNotFound
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import call, childio, toolpath

INFO_ARGS = ["info", "--format", "{{json .}}"]


def find_docker(env: Mapping[str, str], os_: str) -> Tool:
    return toolpath.find_tool("docker", env, os_)


def read_info(
    env: Mapping[str, str], os_: str, *, timeout: float, redactor: Redactor | None = None
) -> DockerRead:
    try:
        tool = find_docker(env, os_)
    except ToolNotFound as exc:
        return DockerRead("missing", reason=exc.message)
    result = call.answer(tool, INFO_ARGS, timeout=timeout, env=env, redactor=redactor)
    if isinstance(result, call.NoAnswer) and result.timed_out:
        return DockerRead(
            "unreadable",
            reason=f"`docker info` did not answer within {timeout:g}s "
            "(the Docker daemon may be wedged)",
        )
    if isinstance(result, call.NoAnswer):
        return DockerRead("missing", reason=result.reason)
    return parse_info(result.rc, result.stdout, result.stderr)


def parse_info(rc: int, out: str, err: str) -> DockerRead:
    try:
        doc = json.loads(out) if out.strip() else None
    except ValueError:
        doc = None
    server_errors = doc.get("ServerErrors") if isinstance(doc, dict) else None
    if rc != 0 or server_errors or not isinstance(doc, dict):
        said = "; ".join(str(e) for e in server_errors) if server_errors else ""
        reason = said or childio.last_line(err or out, rc)
        if rc == 0 and not server_errors:
            return DockerRead("unreadable", reason="`docker info` printed output that is not JSON")
        return DockerRead("stopped", reason=f"Docker is not running ({reason})")
    memory, cpus = doc.get("MemTotal"), doc.get("NCPU")
    runtimes = doc.get("Runtimes")
    return DockerRead(
        "running",
        memory_bytes=memory if isinstance(memory, int) and memory > 0 else None,
        cpus=cpus if isinstance(cpus, int) and cpus > 0 else None,
        runtimes=tuple(sorted(runtimes)) if isinstance(runtimes, dict) else (),
        operating_system=str(doc.get("OperatingSystem") or ""),
        root_dir=str(doc.get("DockerRootDir") or ""),
        default_runtime=str(doc.get("DefaultRuntime") or ""),
    )


def inspect_args(names: list[str]) -> list[str]:
    return ["inspect", *names]


def inspect(
    tool: Tool,
    server: str,
    serverlb: str,
    *,
    env: Mapping[str, str],
    timeout: float,
    redactor: Redactor | None = None,
) -> Inspected:
    """Both node containers in one call. A missing load balancer is tolerated (a cluster
    created with --no-lb); a server that cannot be inspected makes the read unreadable."""
    result = call.answer(
        tool, inspect_args([server, serverlb]), timeout=timeout, env=env, redactor=redactor
    )
    if isinstance(result, call.NoAnswer):
        return Inspected(False, reason=result.reason)
    try:
        items = json.loads(result.stdout) if result.stdout.strip() else []
    except ValueError:
        return Inspected(False, reason="`docker inspect` printed output that is not JSON")
    found = {_name(item): _container(item) for item in items if isinstance(item, dict)}
    if server not in found:
        return Inspected(False, reason=childio.last_line(result.stderr, result.rc))
    return Inspected(True, server=found[server], serverlb=found.get(serverlb))


def _name(item: dict[str, Any]) -> str:
    return str(item.get("Name") or "").lstrip("/")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _container(item: dict[str, Any]) -> Container:
    config = _dict(item.get("Config"))
    env: list[Any] = config["Env"] if isinstance(config.get("Env"), list) else []
    mounts: list[Any] = item["Mounts"] if isinstance(item.get("Mounts"), list) else []
    ports = _dict(_dict(item.get("NetworkSettings")).get("Ports"))
    host_ips = tuple(
        str(binding.get("HostIp") or "")
        for bindings in ports.values()
        if isinstance(bindings, list)
        for binding in bindings
        if isinstance(binding, dict)
    )
    labels = _dict(config.get("Labels"))
    requests = _dict(item.get("HostConfig")).get("DeviceRequests")
    return Container(
        env_names=frozenset(str(e).split("=", 1)[0] for e in env),
        mounts=frozenset(str(_dict(m).get("Destination") or "") for m in mounts),
        image=str(config.get("Image") or ""),
        labels={str(k): str(v) for k, v in labels.items()},
        host_ips=host_ips,
        gpus=_asks_gpu(requests),
    )


def _asks_gpu(requests: Any) -> bool:
    """`--gpus` on the container: a device request with the `gpu` capability."""
    if not isinstance(requests, list):
        return False
    return any(
        isinstance(r, dict)
        and any(isinstance(c, list) and "gpu" in c for c in r.get("Capabilities") or [])
        for r in requests
    )
