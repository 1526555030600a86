"""The tracebloc CLI after an install: is it here and at least 0.10.0, how the person runs
it (its name on PATH, else the engine's copy by its full path), and the summary's notes."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from installer.decide import signin
from installer.decide.errors import InstallerError
from installer.decide.model import os_name


def cli_as_typed(env: Mapping[str, str], os_: str) -> str:
    """How a person runs the tracebloc CLI here: `tracebloc` when PATH has it, else the
    engine's copy by its full path; "" when there is none (nothing is run to tell)."""
    import os

    from installer.edges import toolpath
    from installer.edges.tools import executable_name, tools_dir

    if toolpath.find_on_path("tracebloc", env, os_) is not None:
        return "tracebloc"
    try:
        kept = os.path.join(tools_dir(env, os_), executable_name("tracebloc", os_))
    except InstallerError:
        return ""
    return kept if toolpath.is_executable(kept, os_) else ""


def cli_check(env: Mapping[str, str], os_: str) -> list[str]:
    """Every install: is the tracebloc CLI here and at least 0.10.0? The note says how to install
    or update it; nothing is run for it."""
    from installer.decide import pins
    from installer.edges import toolpath
    from installer.edges.tools import read_version

    how = signin.CLI_INSTALL["windows" if os_ == "windows" else "posix"]
    found = toolpath.find_on_path("tracebloc", env, os_)
    where = found.path if found is not None else cli_as_typed(env, os_)
    if not where:
        return [f"to add your data, get the tracebloc CLI: {how}"]
    version = read_version("tracebloc", where, env, 10.0)
    if pins.cli_outdated(version):
        return [
            f"the tracebloc CLI at {where} is {version}, older than 0.10.0 (from 0.10.0 "
            f"it tells you about its own updates): update it with: {how}"
        ]
    return []


def cli_notes(env: Mapping[str, str]) -> list[str]:
    """For the summary: where the CLI is and how to run it (the person's next step is
    `tracebloc data ingest`), with the PATH line for their shell when it is not on PATH."""
    import os

    from installer.commands.tools import resolve_tool

    choice = resolve_tool("tracebloc", env)
    if not choice.ready or choice.path is None:
        return []
    directory = os.path.dirname(os.path.abspath(choice.path))
    line = signin.path_line(
        directory, os_=os_name(sys.platform), shell=env.get("SHELL", ""), path=env.get("PATH", "")
    )
    if line is None:
        return [f"next: add your data with `tracebloc data ingest` (the CLI: {choice.path})"]
    return [
        f"next: add your data with `tracebloc data ingest`; the CLI is {choice.path}, not on "
        f"your PATH: run `{line}` first (add it to your shell's profile to keep it)"
    ]
