"""Which kubectl, helm, k3d and tracebloc CLI the engine runs, and where each comes from.

In order: a `TRACEBLOC_<TOOL>` variable; PATH when its version is supported; the pinned
version in the tools directory; else the pinned version downloaded and SHA-256-verified.
The user's PATH is never changed: downloads go to `TRACEBLOC_TOOLS_DIR`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from installer.decide import pins, tooling
from installer.decide.errors import BadInput, InstallerError
from installer.decide.paths import default_tools_dir
from installer.decide.settings import MAX_WAIT_S, env_number
from installer.decide.tooling import Tool, ToolChoice
from installer.edges import call, files, proc, toolpath

log = logging.getLogger(__name__)

TOOLS_DIR = "TRACEBLOC_TOOLS_DIR"
MIRROR = "TRACEBLOC_TOOLS_MIRROR"
DOWNLOAD_TIMEOUT = "TRACEBLOC_DOWNLOAD_TIMEOUT_S"
DEFAULT_DOWNLOAD_TIMEOUT_S = 600.0
# Tests only: a manifest replacing the embedded one, honoured only with a mirror on this
# machine (a directory or loopback https), and announced.
TEST_MANIFEST = "TB_TEST_TOOLS_MANIFEST"
SOURCES = ("env", "path", "cache", "download")


@dataclass(frozen=True)
class Mirror:
    kind: str  # "url" or "dir"
    base: str


@dataclass(frozen=True)
class Settings:
    os: str
    arch: str
    tools_dir: str
    mirror: Mirror | None
    deadline_s: float
    manifest: pins.Manifest

    @property
    def platform(self) -> str:
        return pins.platform_key(self.os, self.arch)


# --- settings ------------------------------------------------------------------------------


def tools_dir(env: Mapping[str, str], os_: str) -> str:
    raw = env.get(TOOLS_DIR, "").strip()
    if raw:
        return os.path.abspath(os.path.expanduser(raw))
    return default_tools_dir(env, os_)


def parse_mirror(env: Mapping[str, str]) -> Mirror | None:
    """An https URL, or a directory that exists; anything else is bad input."""
    raw = env.get(MIRROR, "").strip()
    if not raw:
        return None
    if "://" in raw:
        parts = urlsplit(raw)
        try:
            port_ok = parts.port is None or parts.port > 0  # .port raises on a bad port
        except ValueError:
            port_ok = False
        if (
            parts.scheme.lower() != "https"
            or not parts.hostname
            or not port_ok
            or parts.query
            or parts.fragment
            or parts.username is not None
        ):
            raise BadInput(
                f"{MIRROR}={raw!r} is neither an https:// URL nor a directory",
                "use https://host[:port]/path/ or a local directory",
            )
        return Mirror("url", raw.rstrip("/") + "/")
    path = os.path.abspath(os.path.expanduser(raw))
    if not os.path.isdir(path):
        raise BadInput(
            f"{MIRROR}={raw!r} is not a directory",
            "fill one with: tracebloc-installer tools --download-to DIR",
        )
    return Mirror("dir", path)


def settings(env: Mapping[str, str], os_: str, arch: str) -> Settings:
    mirror = parse_mirror(env)
    return Settings(
        os=os_,
        arch=arch,
        tools_dir=tools_dir(env, os_),
        mirror=mirror,
        deadline_s=env_number(
            env, DOWNLOAD_TIMEOUT, DEFAULT_DOWNLOAD_TIMEOUT_S, zero_ok=False, most=MAX_WAIT_S
        ),
        manifest=load_manifest(env, mirror),
    )


def load_manifest(env: Mapping[str, str], mirror: Mirror | None) -> pins.Manifest:
    override = env.get(TEST_MANIFEST, "").strip()
    if override:
        if not _local(mirror):
            raise BadInput(
                f"{TEST_MANIFEST} is for tests only and needs {MIRROR} on this "
                "machine (a directory, or https:// to a loopback address)"
            )
        try:
            data = files.read_bounded(override, limit=4 * 2**20, what="a tools manifest")
            if data is None:
                raise FileNotFoundError(2, "no such file")
            manifest = pins.parse_manifest(json.loads(data), origin=override)
        except (OSError, ValueError, RecursionError, InstallerError) as exc:
            raise BadInput(
                f"{TEST_MANIFEST}={override!r} is not a usable manifest: {exc}"
            ) from None
        log.warning("tool checksums come from the test manifest %s, not from this build", override)
        return manifest
    from importlib import resources

    try:
        data = (resources.files("installer") / "data" / "tools.json").read_bytes()
        return pins.parse_manifest(json.loads(data))
    except (OSError, ValueError) as exc:
        raise InstallerError(
            f"this build's tool manifest cannot be read: {exc}",
            "this is a bug in tracebloc-installer; please report it",
        ) from None


def _local(mirror: Mirror | None) -> bool:
    if mirror is None:
        return False
    if mirror.kind == "dir":
        return True
    from installer.edges.trust import is_loopback

    return is_loopback(urlsplit(mirror.base).hostname or "")


def location(artifact: pins.Artifact, mirror: Mirror | None) -> str:
    """Where the artifact is fetched from: the official URL, or its place in the mirror."""
    if mirror is None:
        return artifact.url
    if mirror.kind == "url":
        return mirror.base + quote(artifact.mirror_path)
    return os.path.join(mirror.base, *artifact.mirror_path.split("/"))


def executable_name(name: str, os_: str) -> str:
    return name + ".exe" if os_ == "windows" else name


# --- resolution ----------------------------------------------------------------------------


def read_version(name: str, path: str, env: Mapping[str, str], timeout: float) -> str | None:
    """What the binary at `path` says its version is; None when it cannot say."""
    result = call.answer(Tool(name, path), pins.VERSION_ARGS[name], timeout=timeout, env=env)
    if isinstance(result, call.NoAnswer):
        log.debug("%s at %s: no version (%s)", name, path, result.reason)
        return None
    return pins.reported_version(name, result.stdout) if result.rc == 0 else None


def explicit_paths(env: Mapping[str, str]) -> dict[str, str]:
    """TRACEBLOC_KUBECTL, TRACEBLOC_HELM, TRACEBLOC_K3D, TRACEBLOC_CLI: the binaries a
    person named."""
    return {
        "kubectl": env.get("TRACEBLOC_KUBECTL", "").strip(),
        "helm": env.get("TRACEBLOC_HELM", "").strip(),
        "k3d": env.get("TRACEBLOC_K3D", "").strip(),
        "tracebloc": env.get("TRACEBLOC_CLI", "").strip(),
    }


_VARIABLES = {
    "kubectl": "TRACEBLOC_KUBECTL",
    "helm": "TRACEBLOC_HELM",
    "k3d": "TRACEBLOC_K3D",
    "tracebloc": "TRACEBLOC_CLI",
}


def variable(name: str) -> str:
    """The variable naming a tool's binary; the tracebloc CLI's is TRACEBLOC_CLI."""
    return _VARIABLES.get(name) or tooling.tool_variable(name)


def wanted_range(name: str) -> str:
    if name == pins.CLI:
        return "0.10.0 or later, with `tracebloc login` and `tracebloc client create`"
    return pins.supported_range(name)


def usable_on_path(name: str, path: str, version: str | None, env: Mapping[str, str]) -> bool:
    """kubectl, helm and k3d by their version; the CLI by what it can do
    (`login --help`, `client create --help`)."""
    if name == pins.CLI:
        from installer.edges.tbcli import supports_signin

        return not pins.cli_outdated(version) and supports_signin(Tool(name, path), env)
    return pins.supported(name, version)


def resolve_tool(
    name: str, env: Mapping[str, str], cfg: Settings, *, timeout: float = 10.0
) -> ToolChoice:
    """Where `name` comes from; reads only (runs `<tool> version`), never downloads."""
    named_by = variable(name)
    explicit = explicit_paths(env).get(name, "")
    if explicit:
        if not toolpath.is_executable(explicit, cfg.os):
            return ToolChoice(
                name,
                None,
                None,
                None,
                problem=f"{named_by} names {explicit!r}, which is not an executable file",
            )
        return ToolChoice(name, explicit, read_version(name, explicit, env, timeout), "env")
    note = ""
    on_path = toolpath.find_on_path(name, env, cfg.os)
    if on_path is not None:
        version = read_version(name, on_path.path, env, timeout)
        if usable_on_path(name, on_path.path, version, env):
            return ToolChoice(name, on_path.path, version, "path")
        note = (
            f"{name} {version or '(version unknown)'} at {on_path.path} is outside the "
            f"supported range ({wanted_range(name)})"
        )
    pinned = cfg.manifest.versions.get(name)
    if pinned is None:
        return ToolChoice(
            name,
            None,
            None,
            None,
            note=note,
            problem=f"this build pins no {name}; put {name} ({wanted_range(name)}) "
            f"on PATH, or name it with {named_by}",
        )
    cached = os.path.join(cfg.tools_dir, executable_name(name, cfg.os))
    if os.path.isfile(cached) and (cfg.os == "windows" or os.access(cached, os.X_OK)):
        if pins.same_version(pinned, read_version(name, cached, env, timeout)):
            return ToolChoice(name, cached, pinned, "cache", note=note)
    artifact = cfg.manifest.artifact(name, cfg.platform)
    if artifact is None or artifact.pending:
        why = (
            "no verified checksum for it is pinned in this build"
            if artifact is not None
            else "this build pins none for this platform"
        )
        problem = (
            f"{name} {pinned} for {cfg.platform} cannot be downloaded: {why}; put {name} "
            f"({wanted_range(name)}) on PATH, or name it with {named_by}"
        )
        return ToolChoice(name, None, None, None, problem=problem, note=note)
    return ToolChoice(
        name,
        cached,
        pinned,
        "download",
        url=location(artifact, cfg.mirror),
        sha256=artifact.sha256,
        note=note,
    )


def resolve_all(
    names: Iterable[str], env: Mapping[str, str], cfg: Settings, *, timeout: float = 10.0
) -> dict[str, ToolChoice]:
    """`resolve_tool` for each name, at the same time (each may run a version query)."""
    names = list(names)
    pool = ThreadPoolExecutor(max_workers=max(1, len(names)), thread_name_prefix="tools")
    try:
        futures = {n: pool.submit(resolve_tool, n, env, cfg, timeout=timeout) for n in names}
        return {name: future.result() for name, future in futures.items()}
    except BaseException:
        proc.terminate_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
