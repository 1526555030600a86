"""GPU detection: `nvidia-smi -L` for NVIDIA, `/dev/kfd` for AMD on Linux.

A GPU is claimed only on positive evidence: nvidia-smi listing at least one `GPU n:` line,
or the ROCm kernel device existing. A missing, failing or wedged nvidia-smi means none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from installer.decide.errors import ToolNotFound
from installer.decide.model import Gpu
from installer.decide.tooling import Tool
from installer.edges import call, toolpath

_GPU_LINE = re.compile(r"^GPU \d+:", re.MULTILINE)


def detect_gpu(env: Mapping[str, str], os_: str, *, timeout: float, kfd: str = "/dev/kfd") -> Gpu:
    try:
        tool: Tool | None = toolpath.find_tool("nvidia-smi", env, os_)
        missing = ""
    except ToolNotFound as exc:
        tool, missing = None, exc.message
    result = call.answer(tool, ["-L"], timeout=timeout, env=env, missing=missing)
    if isinstance(result, call.NoAnswer):
        nvidia_reason = result.reason
    else:
        if result.rc == 0 and _GPU_LINE.search(result.stdout):
            return Gpu("nvidia")
        nvidia_reason = f"nvidia-smi -L listed no GPU ({call.reason(result)})"
    if os_ == "linux" and os.path.exists(kfd):
        return Gpu("amd")
    return Gpu(None, reason=nvidia_reason)
