"""Where an external program is: the path TRACEBLOC_<NAME> names, else the first `name`
(`name.exe` on Windows) on PATH. It only finds; edges/proc.py runs what it found."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from installer.decide.errors import ToolNotFound
from installer.decide.model import os_name as model_os_name
from installer.decide.tooling import Tool, tool_variable


def find_tool(name: str, env: Mapping[str, str], os_name: str | None = None) -> Tool:
    """Locate `name`: `TRACEBLOC_<NAME>` when set, else PATH. Raises ToolNotFound."""
    os_name = os_name or model_os_name(sys.platform)
    variable = tool_variable(name)
    explicit = env.get(variable, "").strip()
    if explicit:
        if is_executable(explicit, os_name):
            return Tool(name, explicit)
        raise ToolNotFound(name, f"{variable} names {explicit!r}, which is not an executable file")
    found = find_on_path(name, env, os_name)
    if found is not None:
        return found
    raise ToolNotFound(name, f"install {name}, or name its binary with {variable}")


def find_on_path(name: str, env: Mapping[str, str], os_name: str) -> Tool | None:
    """The first `name` (`name.exe` on Windows) on PATH; None when there is none."""
    separator = ";" if os_name == "windows" else ":"
    exe = name + ".exe" if os_name == "windows" and not name.endswith(".exe") else name
    for directory in env.get("PATH", "").split(separator):
        if directory:
            candidate = os.path.join(directory.strip('"'), exe)
            if is_executable(candidate, os_name):
                return Tool(name, candidate)
    return None


def is_executable(path: str, os_name: str) -> bool:
    if not os.path.isfile(path):
        return False
    return os_name == "windows" or os.access(path, os.X_OK)
