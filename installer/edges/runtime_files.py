"""The files a runtime step brings: fetched from TRACEBLOC_TOOLS_MIRROR or the URL (bounded
by stall, not by a total), checked (an OpenPGP fingerprint, or Docker's SHA-256) before use,
and staged owner-only for the step that reads them."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from installer.decide import openpgp
from installer.decide.errors import InstallerError
from installer.decide.runtime import Step

# Docker's installers are bounded by progress (1 KiB/s over 60 s), not a total; and by
# TRACEBLOC_DOWNLOAD_TIMEOUT_S when set.
STALL = (1024 * 60, 60.0)
DOWNLOAD_BACKSTOP_S = 4 * 3600.0


class RuntimeFailed(InstallerError):
    """A required runtime step failed; what was done before it stays done."""


def write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def check(
    step: Step, path: str, fetch: Callable[[str, str], None], staged: Callable[[str], str]
) -> None:
    if not step.check:
        return
    kind, _, expected = step.check.partition(":")
    with open(path, "rb") as handle:
        data = handle.read()
    if kind == "openpgp":
        found = openpgp.fingerprint(data)
        if found != expected.upper():
            host = urlsplit(step.url).hostname or step.url
            said = f"has fingerprint {found}" if found else "is not one OpenPGP key alone"
            raise RuntimeFailed(
                f"the key from {step.url} {said}, not the published "
                f"{expected} only: it was not installed",
                f"check the network path to {host} (a proxy rewriting it?), then run again",
            )
    elif kind == "sha256-from":
        sums = staged("checksums.txt")
        fetch(expected, sums)
        name = os.path.basename(urlsplit(step.url).path)
        with open(sums, encoding="utf-8", errors="replace") as handle:
            want = next(
                (
                    line.split()[0].lower()
                    for line in handle
                    if len(line.split()) >= 2
                    and line.split()[-1].lstrip("*") == name
                    and len(line.split()[0]) == 64
                ),
                "",
            )
        actual = hashlib.sha256(data).hexdigest()
        if not want or actual != want:
            raise RuntimeFailed(
                f"{name} from {step.url} does not match Docker's published "
                "checksum (or none could be read): it was not installed",
                "check the network path to desktop.docker.com, then run again",
            )


def fetched_key(
    step: Step, index: int, staged: Callable[[str], str], fetch: Callable[[str, str], None]
) -> Step:
    """A key step reading STDIN: downloaded as you and checked, then a "stage" step whose
    content is the key re-armored after its first line (the step's content: the engine's
    marker), which is what root reads on stdin."""
    if not step.check.startswith("openpgp:"):
        raise RuntimeFailed(
            f"{step.url}: only a checked key is handed to root this way",
            "this is a bug in the installer: report it",
        )
    path = staged(f"{index}-{os.path.basename(step.argv[-1]) or 'file'}")
    fetch(step.url, path)
    check(step, path, fetch, staged)
    with open(path, "rb") as handle:
        return dataclasses.replace(
            step, kind="stage", content=openpgp.marked(handle.read(), step.content)
        )


def download(env: Mapping[str, str]) -> Callable[[str, str], None]:
    """Fetch `url` into `path`: from TRACEBLOC_TOOLS_MIRROR when set (the file under the
    URL's host and path), else from the URL itself, through the proxy and CA as every
    download."""
    from installer.edges import download, tools

    mirror = tools.parse_mirror(env)
    total = DOWNLOAD_BACKSTOP_S
    if env.get("TRACEBLOC_DOWNLOAD_TIMEOUT_S", "").strip():
        from installer.decide.settings import env_number

        total = env_number(
            env,
            "TRACEBLOC_DOWNLOAD_TIMEOUT_S",
            DOWNLOAD_BACKSTOP_S,
            zero_ok=False,
            most=DOWNLOAD_BACKSTOP_S,
        )

    def get(url: str, path: str) -> None:
        parts = urlsplit(url)
        where = url
        if mirror is not None:
            relative = f"{parts.hostname}{parts.path}"
            if mirror.kind == "dir":
                source = os.path.join(mirror.base, *relative.split("/"))
                if not os.path.isfile(source):
                    raise RuntimeFailed(
                        f"{source} is not in TRACEBLOC_TOOLS_MIRROR",
                        f"put {url} there, then run again",
                    )
                shutil.copyfile(source, path)
                return
            where = mirror.base + relative
        with open(path, "wb") as out:
            download.fetch(where, out, env=env, deadline_s=total, stall=STALL)

    return get
