"""The pinned tools (installer/data/tools.json) and which versions of a user's own tools we
accept. Pure. A pin is usable only with its SHA-256 (`PENDING` is no entry): nothing is
downloaded without the checksum that travels inside this build.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

TOOLS = ("kubectl", "helm", "k3d")  # what a mirror carries (`tools --download-to`)
# The tracebloc CLI: pinned like the others, but needed only to sign in through the browser,
# and accepted from PATH by what it can do (`login`, `client create`), not by a version range.
CLI = "tracebloc"
PINNED = (*TOOLS, CLI)
PLATFORMS = ("linux-x86_64", "linux-arm64", "darwin-x86_64", "darwin-arm64", "windows-x86_64")
PENDING = "PENDING"
ARCHIVES = ("none", "tar.gz", "zip")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")

# Versions on PATH used as they are (the flags the engine relies on exist in all of them):
# lower bound inclusive, upper exclusive.
SUPPORTED: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "kubectl": ((1, 28), (2, 0)),
    "helm": ((3, 14), (5, 0)),
    "k3d": ((5, 6), (6, 0)),
}


class ManifestError(ValueError):
    """The manifest's shape is wrong: a bug in this build, or a bad test manifest."""


# The largest official file is about 60 MB (kubectl); a mirror file past this is not one.
MAX_ARTIFACT_BYTES = 512 * 2**20


@dataclass(frozen=True)
class Artifact:
    tool: str
    version: str
    platform: str
    file: str  # the official file name
    url: str
    sha256: str  # 64 lowercase hex digits, or PENDING
    checksum_source: str  # where the checksum was published
    archive: str  # "none" (the file is the binary), "tar.gz" or "zip"
    member: str = ""  # the binary's path inside an archive
    others: tuple[str, ...] = ()  # the other files an official archive holds
    size: int | None = None  # bytes of the official file, where the manifest pins it

    @property
    def most_bytes(self) -> int:
        """No copy of this artifact reads past this: its pinned size, else a ceiling no
        official kubectl, helm or k3d comes near."""
        return self.size if self.size is not None else MAX_ARTIFACT_BYTES

    @property
    def pending(self) -> bool:
        return self.sha256 == PENDING

    @property
    def mirror_path(self) -> str:
        """Where a mirror holds this file: the official URL's path, so the three hosts'
        files share one tree without clashing (every kubectl is named `kubectl`)."""
        return urlsplit(self.url).path.lstrip("/")


@dataclass(frozen=True)
class Manifest:
    artifacts: Mapping[tuple[str, str], Artifact]  # (tool, platform) → artifact
    versions: Mapping[str, str]
    origin: str = "embedded"  # "embedded", or the path of a test manifest

    def artifact(self, tool: str, platform: str) -> Artifact | None:
        return self.artifacts.get((tool, platform))

    def pending(self) -> list[Artifact]:
        return [a for a in self.artifacts.values() if a.pending]


def platform_key(os_: str, arch: str) -> str:
    return f"{os_}-{arch}"


def parse_manifest(document: Any, origin: str = "embedded") -> Manifest:
    """The manifest from its parsed JSON; ManifestError names the first thing wrong."""
    if not isinstance(document, dict) or document.get("format") != 1:
        raise ManifestError("not a format-1 tools manifest")
    tools = document.get("tools")
    if not isinstance(tools, dict) or set(tools) not in (set(TOOLS), set(PINNED)):
        raise ManifestError(f"tools must be exactly {', '.join(TOOLS)} (and optionally {CLI})")
    artifacts: dict[tuple[str, str], Artifact] = {}
    versions: dict[str, str] = {}
    for tool in [t for t in PINNED if t in tools]:
        pins = tools[tool]
        version = pins.get("version") if isinstance(pins, dict) else None
        if not isinstance(version, str) or parse_version(version) is None:
            raise ManifestError(f"{tool}: version must look like v1.2.3")
        versions[tool] = version
        platforms = pins.get("platforms")
        if not isinstance(platforms, dict) or not set(platforms) <= set(PLATFORMS):
            raise ManifestError(f"{tool}: platforms must be among {', '.join(PLATFORMS)}")
        for key, entry in platforms.items():
            artifacts[(tool, key)] = _artifact(tool, version, key, entry)
    return Manifest(artifacts, versions, origin)


def _artifact(tool: str, version: str, platform: str, entry: Any) -> Artifact:
    where = f"{tool} {platform}"
    if not isinstance(entry, dict):
        raise ManifestError(f"{where}: not an object")
    text = {k: entry.get(k) for k in ("file", "url", "sha256", "checksum_source", "archive")}
    for name, value in text.items():
        if not isinstance(value, str) or not value:
            raise ManifestError(f"{where}: {name} must be a non-empty string")
    file, url, sha256 = str(entry["file"]), str(entry["url"]), str(entry["sha256"])
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.path.rsplit("/", 1)[-1] != file:
        raise ManifestError(f"{where}: url must be https and end in the file name {file!r}")
    if sha256 != PENDING and not _SHA256.fullmatch(sha256):
        raise ManifestError(f"{where}: sha256 must be 64 lowercase hex digits or {PENDING}")
    archive = str(entry["archive"])
    if archive not in ARCHIVES:
        raise ManifestError(f"{where}: archive must be one of {', '.join(ARCHIVES)}")
    member = entry.get("member", "")
    others = entry.get("others", [])
    if archive != "none" and (not isinstance(member, str) or not _relative(member)):
        raise ManifestError(f"{where}: an archive needs the binary's relative path as member")
    if not isinstance(others, list) or not all(isinstance(o, str) and _relative(o) for o in others):
        raise ManifestError(f"{where}: others must be a list of relative paths")
    size = entry.get("size")
    if size is not None and (type(size) is not int or size <= 0):
        raise ManifestError(f"{where}: size must be a positive number of bytes")
    return Artifact(
        tool,
        version,
        platform,
        file,
        url,
        sha256,
        str(entry["checksum_source"]),
        archive,
        member if archive != "none" else "",
        tuple(others),
        size,
    )


def _relative(name: str) -> bool:
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and all(p not in ("", ".", "..") for p in parts)


# --- versions ------------------------------------------------------------------------------


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = _VERSION.search(text or "")
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


# The tracebloc CLI's floor: from 0.10.0 the CLI tells its user about its own updates.
CLI_FLOOR = (0, 10, 0)


def cli_outdated(version: str | None) -> bool:
    """Below the floor. A version that cannot be read is not evidence of age (the scripts
    fail open too: else every run would replace the CLI)."""
    parsed = parse_version(version or "")
    return parsed is not None and parsed < CLI_FLOOR


def supported(tool: str, version: str | None) -> bool:
    """Is `version` (as the tool printed it) within the range the engine uses as-is?"""
    parsed = parse_version(version or "")
    if parsed is None or tool not in SUPPORTED:
        return False
    low, high = SUPPORTED[tool]
    return low <= parsed[:2] < high


def supported_range(tool: str) -> str:
    """In words, e.g. "3.14 or later, up to 4.x" (every upper bound is a major version)."""
    (lo_major, lo_minor), (hi_major, _) = SUPPORTED[tool]
    return f"{lo_major}.{lo_minor} or later, up to {hi_major - 1}.x"


def same_version(pinned: str, reported: str | None) -> bool:
    parsed = parse_version(reported or "")
    return parsed is not None and parsed == parse_version(pinned)


# --- what each tool says its version is ------------------------------------------------------

# Each tool's own version query; kubectl and helm answer in a form made for machines.
VERSION_ARGS: dict[str, tuple[str, ...]] = {
    "kubectl": ("version", "--client", "-o", "json"),
    "helm": ("version", "--template", "{{.Version}}"),
    "k3d": ("version",),
    CLI: ("version",),
}


def reported_version(tool: str, out: str) -> str | None:
    """The version in a tool's answer to VERSION_ARGS, as it wrote it; None if absent."""
    text = out.strip()
    if tool == "kubectl":
        try:
            document = json.loads(text)
        except ValueError:
            return None
        client = document.get("clientVersion") if isinstance(document, dict) else None
        version = client.get("gitVersion") if isinstance(client, dict) else None
        return version if isinstance(version, str) and parse_version(version) else None
    if tool == "k3d":
        # k3d prints "k3d version v5.9.0" then the k3s line; it has no structured form.
        match = re.search(r"^k3d version (v\S+)", text, re.MULTILINE)
        return match[1] if match and parse_version(match[1]) else None
    if tool == CLI:  # "tracebloc 0.10.10 (<sha>, built <date>, go1.x on linux/amd64)"
        match = re.search(r"^tracebloc (v?\d+\.\d+\.\d+\S*)", text, re.MULTILINE)
        return match[1] if match else None
    first = text.splitlines()[0].strip() if text else ""
    return first if parse_version(first) and len(first) <= 64 else None
