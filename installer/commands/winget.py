"""winget where it is missing, the flow (in the elevated half): download, verify, install, in
the plan's order; any step that fails stops the run before Docker Desktop is attempted, with
the bundle deleted and the manual remedy."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from installer.decide import winget as wg
from installer.decide import winhost as wh
from installer.decide.errors import InstallerError
from installer.decide.redact import Redactor
from installer.edges import winget as edge


def carry_out(
    step: wh.Step,
    temp_dir: str,
    env: Mapping[str, str],
    redactor: Redactor,
    say: Callable[[str], None],
) -> Mapping[str, str]:
    """One of the plan's winget steps; returns the environment the later steps run with."""
    path = wg.bundle_path(temp_dir)
    problem: str | None
    if step.key == "winget-download":
        say(f"downloading winget {wg.RELEASE} (~200 MB): a few minutes on a slow network")
        problem = edge.fetch_bundle(path, env)
    elif step.key == "winget-signature":
        read = edge.read_signature(path, env, redactor)
        problem = read if isinstance(read, str) else wg.signature_problem(*read)
    else:
        problem = edge.install(path, env, redactor)
        edge.discard(path)
    if problem is not None:
        edge.discard(path)
        raise InstallerError(f"winget could not be installed: {problem}", wg.STORE_REMEDY)
    say(f"done: {step.title}")
    return edge.with_windowsapps(env) if step.key == "winget-install" else env
