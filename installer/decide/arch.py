"""Each tool's name for a CPU architecture, decided here and nowhere else. Pure.

The engine's own name is `x86_64` or `arm64`. A name a tool does not know is silently
nothing there (apt ignores `[arch=x86_64]`), so each is mapped here; dnf fills `$basearch`.
"""

from __future__ import annotations

import re

# platform.machine() on Linux, macOS and Windows, and kubernetes.io/arch labels (Go's names).
_ENGINE = {
    "x86_64": "x86_64",
    "amd64": "x86_64",
    "x64": "x86_64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "armv8": "arm64",
    "armv8l": "arm64",
}
# dpkg's names (dpkg-architecture -L), for a machine without dpkg to ask.
_DPKG = {
    "x86_64": "amd64",
    "arm64": "arm64",
    "armv7l": "armhf",
    "armv6l": "armel",
    "i386": "i386",
    "i686": "i386",
    "ppc64le": "ppc64el",
    "s390x": "s390x",
    "riscv64": "riscv64",
    "loongarch64": "loong64",
    "mips64": "mips64el",
}
# Go's GOARCH: Kubernetes, helm, k3d and Docker name their downloads with it.
_GO = {"x86_64": "amd64", "arm64": "arm64"}
_DPKG_WORD = re.compile(r"[a-z0-9][a-z0-9-]*")


def engine_arch(raw: str) -> str:
    """The engine's name for `platform.machine()` or a node's kubernetes.io/arch label."""
    word = raw.strip().lower()
    return _ENGINE.get(word, word or "unknown")


def apt_arch(arch: str, dpkg_says: str = "") -> str:
    """apt's name for this machine: what `dpkg --print-architecture` answered when it could
    be asked (a multiarch or armhf userland on a 64-bit kernel is dpkg's to say), else the
    mapping. Empty when neither knows: no apt source is written for a guess."""
    said = dpkg_says.strip()
    if _DPKG_WORD.fullmatch(said):
        return said
    return _DPKG.get(engine_arch(arch), "")


def go_arch(arch: str) -> str:
    """The download name (`…/linux/amd64/kubectl`, `k3d-linux-arm64`, Docker.dmg's path)."""
    return _GO.get(engine_arch(arch), "")
