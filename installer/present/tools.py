"""How a tool choice reads: one line for people, one object for `--json`."""

from __future__ import annotations

from typing import Any

from installer.decide.tooling import ToolChoice
from installer.edges import tools


def choice_json(choice: ToolChoice) -> dict[str, Any]:
    out: dict[str, Any] = {"path": choice.path, "version": choice.version, "source": choice.source}
    if choice.source == "download":
        out.update(url=choice.url, sha256=choice.sha256)
    if choice.problem:
        out["problem"] = choice.problem
    if choice.note:
        out["note"] = choice.note
    return out


def choice_text(choice: ToolChoice) -> str:
    version = f" {choice.version}" if choice.version else ""
    where = {
        "env": f"named by {tools.variable(choice.name)}: {choice.path}",
        "path": f"on PATH: {choice.path}",
        "cache": f"downloaded earlier: {choice.path}",
        "download": f"to be downloaded from {choice.url} (sha256 {choice.sha256}) to {choice.path}",
    }.get(choice.source or "", f"not available: {choice.problem}")
    text = f"{choice.name}{version} ({where})"
    return text + (f"; {choice.note}" if choice.note and choice.source else "")
