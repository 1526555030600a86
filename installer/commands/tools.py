"""The tools the engine runs: what `probe`/`plan` show, what `install` fetches, and the
`tools` command (`--download-to DIR` fills a mirror for an air-gapped machine).

`resolve_tool` / `ensure_tools` are the one way to get a kubectl, helm or k3d: the local
cluster (k3d) uses them as install does.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from installer.decide import pins
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import Connection, os_name
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool, ToolChoice
from installer.edges import fetch, tools
from installer.edges.tools import Settings
from installer.present.console import is_terminal
from installer.present.progress import Progress
from installer.present.ui import wants_fancy

REQUIRED = ("kubectl", "helm")  # what install cannot do without; k3d only for a local cluster


def typed(name: str, path: str | None, env: Mapping[str, str]) -> str:
    """How the person types the tool at `path`: its bare name when their PATH finds that very
    file (a link to it counts), else the full path: the engine's copy is often not on PATH."""
    if not path:
        return name
    from installer.edges import toolpath

    found = toolpath.find_on_path(name, env, os_name(sys.platform))

    def same(a: str) -> str:
        return os.path.normcase(os.path.realpath(a))

    return name if found is not None and same(found.path) == same(path) else path


def typed_conn(
    conn: Connection, env: Mapping[str, str], helm: str | None, kubectl: str | None
) -> Connection:
    """`conn` whose printed commands name helm and kubectl (at these paths) as typed."""
    return dataclasses.replace(
        conn, helm_typed=typed("helm", helm, env), kubectl_typed=typed("kubectl", kubectl, env)
    )


def this_settings(env: Mapping[str, str], arch: str | None = None) -> Settings:
    """The tool settings for this machine (bad values are BadInput)."""
    if arch is None:
        import platform

        from installer.edges.machine import arch_name

        arch = arch_name(platform.machine())
    return tools.settings(env, os_name(sys.platform), arch)


def progress_for(env: Mapping[str, str], stream: TextIO | None = None) -> fetch.ProgressFor:
    # sys.stderr as it is at the call (a default bound at import would outlive a swap).
    out = stream if stream is not None else sys.stderr
    fancy = is_terminal(out) and wants_fancy(env)
    return lambda label: Progress(out, label, fancy=fancy)


def resolve_tool(
    name: str, env: Mapping[str, str], cfg: Settings | None = None, *, timeout: float = 10.0
) -> ToolChoice:
    """Where `name` comes from (env, path, cache, or download with its URL and SHA-256);
    runs `<tool> version`, downloads nothing."""
    return tools.resolve_tool(name, env, cfg or this_settings(env), timeout=timeout)


def ensure_tools(
    names: Iterable[str],
    env: Mapping[str, str],
    cfg: Settings | None = None,
    *,
    choices: Mapping[str, ToolChoice] | None = None,
    stream: TextIO | None = None,
    timeout: float = 10.0,
) -> dict[str, ToolChoice]:
    """Every named tool ready to run, downloading the pinned ones that are missing. Raises
    InstallerError (exit 1) naming the first tool that cannot be had; BadInput (exit 2) for
    a bad tools directory or mirror. `choices` are resolutions already made (probe's)."""
    cfg = cfg or this_settings(env)
    names = list(names)
    known = dict(choices or {})
    missing = [n for n in names if n not in known]
    known.update(tools.resolve_all(missing, env, cfg, timeout=timeout))
    for name in names:
        if known[name].source is None:
            raise InstallerError(f"{name} is not available: {known[name].problem}")
    out = {}
    stream = stream if stream is not None else sys.stderr
    fancy = is_terminal(stream) and wants_fancy(env)
    settled: list[str] = []  # on a terminal: the downloads, said in one line at the end
    for name in names:
        choice = known[name]
        if choice.source == "download":
            sink = progress_for(env, stream)
            if fancy:
                sink = lambda label: Progress(stream, label, fancy=True, settled=settled)  # noqa: E731
            choice = fetch.install_tool(choice, env, cfg, sink)
        out[name] = choice
    if settled:
        Progress(stream, "", fancy=True).said(
            "downloaded and verified " + ", ".join(label.split(" (")[0] for label in settled)
        )
    return out


def as_tools(choices: Mapping[str, ToolChoice]) -> dict[str, Tool]:
    return {name: choice.tool() for name, choice in choices.items()}


# --- what is shown ---------------------------------------------------------------------------


# --- the `tools` command -----------------------------------------------------------------------


@dataclass(frozen=True)
class Filled:
    directory: str
    carried: list[fetch.Carried]

    @property
    def complete(self) -> bool:
        return all(c.path is not None for c in self.carried)


def parse_platforms(given: list[str] | None, cfg: Settings) -> list[str]:
    if not given:
        return [cfg.platform]
    if "all" in given:
        return list(pins.PLATFORMS)
    unknown = [p for p in given if p not in pins.PLATFORMS]
    if unknown:
        raise BadInput(f"--platform {unknown[0]!r} is not one of {', '.join(pins.PLATFORMS)}, all")
    return list(dict.fromkeys(given))


def fill_mirror(
    directory: str,
    platforms: list[str],
    env: Mapping[str, str],
    cfg: Settings,
    stream: TextIO | None = None,
) -> Filled:
    carried = fetch.download_to(directory, platforms, env, cfg, progress_for(env, stream))
    return Filled(directory, carried)


def filled_json(filled: Filled) -> dict[str, Any]:
    return {
        "directory": filled.directory,
        "complete": filled.complete,
        "files": [
            {
                "tool": c.artifact.tool,
                "version": c.artifact.version,
                "platform": c.artifact.platform,
                "file": c.artifact.file,
                "path": c.path,
                "sha256": None if c.artifact.pending else c.artifact.sha256,
                "status": c.status,
            }
            for c in filled.carried
        ],
    }


def filled_text(filled: Filled) -> str:
    lines = [f"mirror: {filled.directory}"]
    for c in filled.carried:
        a = c.artifact
        what = f"{a.tool} {a.version} {a.platform}"
        if c.path is None:
            lines.append(f"  missing  {what}: no verified checksum is pinned in this build")
        else:
            lines.append(f"  {c.status:<13} {what}: {c.path} (sha256 {a.sha256})")
    if filled.complete:
        lines.append("carry the directory across and set TRACEBLOC_TOOLS_MIRROR to it")
    return "\n".join(lines)


def run_command(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    """`tools`: where each tool comes from; with --download-to, a mirror for an air gap."""
    from installer.present import output
    from installer.present import tools as present_tools

    cfg = this_settings(env)
    if args.download_to is None:
        if args.platform:
            raise BadInput("--platform is for --download-to")
        choices = tools.resolve_all(("kubectl", "helm", "k3d"), env, cfg)
        document = {name: present_tools.choice_json(choice) for name, choice in choices.items()}
        output.emit(
            args.json,
            {"tools": document},
            "\n".join(present_tools.choice_text(c) for c in choices.values()),
            redactor,
        )
        return 0
    platforms = parse_platforms(args.platform, cfg)
    filled = fill_mirror(os.path.expanduser(args.download_to), platforms, env, cfg)
    output.emit(args.json, filled_json(filled), filled_text(filled), redactor)
    if not filled.complete:
        output.fail(
            "some tools have no verified checksum pinned in this build (listed above)",
            "nothing unverified was written; use a build whose pins are complete",
        )
        return 1
    return 0
