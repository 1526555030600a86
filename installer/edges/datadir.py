"""Can the data directory (HOST_DATA_DIR, else ~/.tracebloc) take the values file and the log?

Asked before anything changes: an install that cannot write its values file must stop
before `helm repo add`, before a recovery, before the upgrade — not after.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping

from installer.decide.errors import BadInput


def variable_for(env: Mapping[str, str], os_: str) -> str:
    """The variable the directory came from, to name in the error."""
    if env.get("HOST_DATA_DIR", "").strip():
        return "HOST_DATA_DIR"
    return "USERPROFILE" if os_ == "windows" else "HOME"


def check_writable(directory: str, env: Mapping[str, str], os_: str) -> None:
    """Create `directory` (owner-only) if missing and prove a file can be made in it."""
    name = variable_for(env, os_)
    shown = directory if name == "HOST_DATA_DIR" else f"{directory} (the default under {name})"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".tracebloc-write-test-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise BadInput(
            f"{name}: cannot write to {shown}: {exc.strerror or exc}",
            "nothing was changed; set HOST_DATA_DIR to a directory you can write to",
        ) from None
