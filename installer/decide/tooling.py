"""A tool the engine runs, and where each tool comes from: plain data, shared by the layers.

`edges/proc.py` runs a `Tool`; `edges/tools.py` resolves a `ToolChoice` (a variable, PATH, the
engine's cache or a verified download); `plan` and the local-cluster step carry the choices.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from installer.decide import pins
from installer.decide.errors import InstallerError


@dataclass(frozen=True)
class Tool:
    """`name` is what plans and logs show ("helm"); `path` is the executable actually run."""

    name: str
    path: str


def tool_variable(name: str) -> str:
    """The variable naming an explicit binary: TRACEBLOC_KUBECTL, TRACEBLOC_NVIDIA_SMI, …"""
    return "TRACEBLOC_" + name.upper().replace("-", "_")


@dataclass(frozen=True)
class ToolChoice:
    """`source` is env, path, cache or download; None when the tool cannot be had (then
    `problem` says why). For a download, `path` is where it will be put and `url` and
    `sha256` are what will be fetched and required (or were, once `fetched`). `note` says
    why a tool on PATH was passed over."""

    name: str
    path: str | None
    version: str | None
    source: str | None
    url: str | None = None
    sha256: str | None = None
    problem: str = ""
    note: str = ""
    fetched: bool = False  # a download that has been made (verified and in place)

    @property
    def ready(self) -> bool:
        """Usable now, without a download."""
        return self.path is not None and (self.source in ("env", "path", "cache") or self.fetched)

    def tool(self) -> Tool:
        if self.source == "download" and not self.fetched:
            raise InstallerError(self.absent(), self.where_to_get())
        if not self.ready or self.path is None:
            raise InstallerError(f"{self.name} is not available: {self.problem or 'not fetched'}")
        return Tool(self.name, self.path)

    def absent(self) -> str:
        """A tool only a download would bring: what was looked for, and where."""
        return (
            f"{self.name} is not on this machine (not named by "
            f"{tool_variable(self.name)}, no supported one on PATH, none in "
            f"{os.path.dirname(self.path or '') or 'the tools directory'})"
        )

    def where_to_get(self) -> str:
        return (
            f"`tracebloc-installer install` downloads the pinned {self.name} {self.version} "
            f"(verified) into that directory; or put {self.name} "
            f"({pins.supported_range(self.name)}) on PATH, or name it with "
            f"{tool_variable(self.name)}"
        )
