"""winget where it is missing, the machine side: the pinned bundle fetched and hashed, its
signature read, Add-AppxPackage run. Written as `<bundle>.part`, renamed only once its
SHA-256 is the published one, removed after the install.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Mapping

from installer.decide import winget as wg
from installer.decide.errors import InstallerError
from installer.decide.redact import Redactor
from installer.edges import call, childio, download
from installer.edges.winhost import system_answer

log = logging.getLogger(__name__)


def fetch_bundle(path: str, env: Mapping[str, str]) -> str | None:
    """The pinned bundle at `path`, its SHA-256 checked; None when it is there, else why not."""
    part = path + ".part"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        discard(path)
        with open(part, "wb") as out:
            got = download.fetch(
                wg.URL, out, env=env, deadline_s=wg.DOWNLOAD_DEADLINE_S, most=wg.MOST_BYTES
            )
    except InstallerError as exc:
        discard(part)
        return exc.message
    except OSError as exc:
        discard(part)
        return f"could not write {part}: {exc.strerror or exc}"
    if got.sha256 != wg.SHA256:
        discard(part)
        return (
            f"the download's SHA-256 is {got.sha256}, not the published {wg.SHA256} "
            f"({wg.CHECKSUM_SOURCE}): it was deleted, nothing was installed"
        )
    os.replace(part, path)
    return None


def read_signature(
    path: str, env: Mapping[str, str], redactor: Redactor | None
) -> tuple[str, str] | str:
    """(status, signer subject) as Get-AuthenticodeSignature reports them, or why unread."""
    answer = system_answer(wg.signature_argv(path), env, wg.SIGNATURE_TIMEOUT_S, redactor)
    if isinstance(answer, call.NoAnswer):
        return answer.reason
    if answer.rc != 0:
        return f"Get-AuthenticodeSignature failed: {call.reason(answer)}"
    try:
        doc = json.loads(answer.stdout)
    except ValueError:
        return "Get-AuthenticodeSignature printed output that is not JSON"
    if not isinstance(doc, dict):
        return "Get-AuthenticodeSignature printed no object"
    return str(doc.get("status") or ""), str(doc.get("subject") or "")


def install(path: str, env: Mapping[str, str], redactor: Redactor | None) -> str | None:
    """Add-AppxPackage on the verified bundle; None when it succeeded, else its last words."""
    answer = system_answer(wg.install_argv(path), env, wg.INSTALL_TIMEOUT_S, redactor)
    if isinstance(answer, call.NoAnswer):
        return answer.reason
    if answer.rc != 0:
        said = childio.last_line(answer.stderr or answer.stdout, answer.rc)
        return f"Add-AppxPackage failed: {said}"
    return None


def with_windowsapps(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with this account's app execution aliases (where an installed winget.exe appears)
    on PATH, for the steps after the install."""
    out = dict(env)
    local = env.get("LOCALAPPDATA", "")
    if not local:
        return out
    aliases = os.path.join(local, "Microsoft", "WindowsApps")
    parts = out.get("PATH", "").split(os.pathsep)
    if not any(p.strip('"').rstrip("\\/").lower() == aliases.lower() for p in parts):
        out["PATH"] = os.pathsep.join([*filter(None, parts), aliases])
    return out


def discard(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
