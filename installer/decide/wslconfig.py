"""The Docker VM's memory on Windows (WSL2's `.wslconfig`): sized from the host, and merged
into the file so that an operator's own memory setting and every other line are kept."""

from __future__ import annotations

import math
import re

OS_RESERVE_GIB = 2  # what Windows keeps for itself when the Docker VM is sized from the host


def wslconfig_gib(host_gib: int | None, min_gib: float, rec_gib: float) -> int:
    """The Docker VM's memory: the training budget, capped at the host less Windows' reserve,
    never below the floor; 0 when the host cannot give the floor (keep the default)."""
    if host_gib is None or host_gib - OS_RESERVE_GIB < min_gib:
        return 0
    cap = max(host_gib - OS_RESERVE_GIB, math.ceil(min_gib))
    return int(min(rec_gib, cap))


def merge_wslconfig(existing: str, gib: int) -> str | None:
    """`existing` with `memory=<gib>GB` under `[wsl2]`; None when a memory is already set
    (the operator's tuning is kept). Other settings are never touched."""
    if re.search(r"(?im)^\s*memory\s*=", existing):
        return None
    line = f"memory={gib}GB"
    if not existing.strip():
        return f"[wsl2]\r\n{line}\r\n"
    header = re.search(r"(?im)^\s*\[wsl2\]\s*$", existing)
    if header:
        return existing[: header.end()] + "\r\n" + line + existing[header.end() :]
    separator = "" if existing.endswith("\n") else "\r\n"
    return f"{existing}{separator}[wsl2]\r\n{line}\r\n"
