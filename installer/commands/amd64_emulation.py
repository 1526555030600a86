"""On an Apple Silicon Mac whose install resolved to
the amd64-only MySQL 5.7 image, prove that Docker runs an amd64 binary before the chart
schedules that image (it would crash-loop with an exec-format error minutes later, with no
earlier signal). Intel Macs, Linux, Windows and an 8.4 install check nothing."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from installer.decide.errors import InstallerError, ToolNotFound
from installer.decide.redact import Redactor
from installer.decide.runtime_macos import (
    AMD64_SMOKE,
    AMD64_SMOKE_TIMEOUT_S,
    DOCKER_FAILED_RC,
    amd64_refusal,
    amd64_verdict,
    needs_amd64_check,
)
from installer.present.ui import Ui


def check_amd64(
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    *,
    os_: str,
    arch: str,
    mysql: str,
    timeout: float = AMD64_SMOKE_TIMEOUT_S,
) -> str:
    """Raises InstallerError (the Rosetta remedy) when emulation was seen not to
    work or did not answer in time; warns and goes on when it could not be tried (the image
    could not be pulled, no docker). Returns the verdict ("" when nothing was checked)."""
    if os_ != "darwin" or not needs_amd64_check(arch, mysql):
        return ""
    from installer.edges.runtime_macos import amd64_smoke

    with ui.step(f"Verifying amd64 emulation: {shlex.join(AMD64_SMOKE)}") as step:
        try:
            rc, said = amd64_smoke(env, redactor, timeout=timeout)
        except ToolNotFound as exc:
            rc, said = DOCKER_FAILED_RC, exc.message
        verdict = amd64_verdict(rc, said)
        if verdict == "ok":
            return verdict
        if verdict == "unknown":
            step.warn()
        else:
            step.fail()
    last = said.strip().splitlines()[-1] if said.strip() else ""
    if verdict == "unknown":
        ui.warn(
            f"amd64 emulation could not be verified ({last or 'no docker'}); going on: the "
            "MySQL 5.7 image will crash-loop if Rosetta/amd64 emulation is off"
        )
        return verdict
    message, remedy = amd64_refusal()
    if verdict == "timeout":
        message = (
            f"the amd64 emulation check did not finish within {timeout:g}s, and this "
            "install uses the amd64-only MySQL 5.7 image"
        )
    elif last:
        message = f"{message} (Docker said: {last})"
    raise InstallerError(message, remedy)
