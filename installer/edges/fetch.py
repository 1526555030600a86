"""Bring a pinned tool onto this machine, verified, in one rename — or leave nothing.

Download (or copy from a mirror) → SHA-256 as embedded → the binary out of its archive →
`<tool> version` names the pin → `os.replace`. Any failure removes the temporary files.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import BinaryIO, Protocol

from installer.decide import pins
from installer.decide.errors import BadInput, InstallerError
from installer.decide.tooling import ToolChoice
from installer.edges.archive import extract_member
from installer.edges.download import CHUNK, DownloadFailed, Fetched, Progress, fetch
from installer.edges.tools import TOOLS_DIR, Mirror, Settings, location, read_version

log = logging.getLogger(__name__)

PREFIX = ".tracebloc-"  # every temporary file we leave in a tools or mirror directory
STALE_S = 24 * 3600.0  # a temporary file this old was left by a killed run
# Exactly the names `_temporary` makes (mkstemp: the prefix, 8 random characters, our
# suffix): a directory such as the home holds the user's own `.tracebloc-*` files too.
_OURS = re.compile(re.escape(PREFIX) + r"[a-z0-9_]{8}(?:\.download|\.exe)?")
ProgressFor = Callable[[str], "ProgressSink"]


class ProgressSink(Protocol):
    """What fetch reports to: `progress(done, total)` while it runs, `finish(ok)` once."""

    def __call__(self, done: int, total: int | None) -> None: ...

    def finish(self, ok: bool) -> None: ...


class ChecksumMismatch(InstallerError):
    """Received bytes are not the pinned artifact. Nothing was installed."""


def install_tool(
    choice: ToolChoice,
    env: Mapping[str, str],
    cfg: Settings,
    progress_for: ProgressFor | None = None,
    *,
    timeout: float = 30.0,
) -> ToolChoice:
    """Fetch a `download` choice into the tools directory; returns it as installed."""
    artifact = cfg.manifest.artifact(choice.name, cfg.platform)
    if choice.source != "download" or artifact is None or artifact.pending:
        return choice
    final = choice.path or ""
    directory = writable_dir(cfg.tools_dir, TOOLS_DIR)
    suffix = ".exe" if cfg.os == "windows" else ""
    # A bare binary is run where it was downloaded: on Windows it needs its .exe name.
    first = suffix if artifact.archive == "none" else ".download"
    with _temporary(directory, first) as (download, download_path):
        _receive(artifact, cfg.mirror, download, env, cfg.deadline_s, progress_for)
        download.close()
        if artifact.archive == "none":
            _put_in_place(choice.name, artifact, download_path, final, env, timeout)
        else:
            with _temporary(directory, suffix) as (binary, binary_path):
                extract_member(
                    download_path, artifact.archive, artifact.member, artifact.others, binary
                )
                binary.close()
                _put_in_place(choice.name, artifact, binary_path, final, env, timeout)
    log.info(
        "%s %s installed at %s (sha256 %s)", choice.name, artifact.version, final, artifact.sha256
    )
    return ToolChoice(
        choice.name,
        final,
        artifact.version,
        "download",
        choice.url,
        artifact.sha256,
        note=choice.note,
        fetched=True,
    )


def _put_in_place(
    name: str,
    artifact: pins.Artifact,
    path: str,
    final: str,
    env: Mapping[str, str],
    timeout: float,
) -> None:
    """Run the new binary once; only one that names the pinned version is renamed in."""
    if sys.platform != "win32":
        os.chmod(path, 0o755)
    reported = read_version(name, path, env, timeout)
    if not pins.same_version(artifact.version, reported):
        said = f"it reports {reported}" if reported else "it gave no version"
        raise InstallerError(
            f"the downloaded {name} does not run here ({said}, expected {artifact.version}); "
            "nothing was installed",
            "report this: the pinned artifact may be damaged or for another architecture",
        )
    os.replace(path, final)


@dataclass(frozen=True)
class Carried:
    artifact: pins.Artifact
    path: str | None  # None when it could not be had
    status: str  # "downloaded", "already there", "pending"


def download_to(
    directory: str,
    platforms: list[str],
    env: Mapping[str, str],
    cfg: Settings,
    progress_for: ProgressFor | None = None,
) -> list[Carried]:
    """Fill `directory` (a future TRACEBLOC_TOOLS_MIRROR) with every tool's pinned artifact
    for `platforms`, under the official paths, each verified before it is named."""
    made = _missing_dirs(directory)
    directory = writable_dir(directory, "--download-to")
    try:
        return _fill(directory, platforms, env, cfg, progress_for)
    except DownloadFailed as exc:
        # Here the remedy cannot be "fill a mirror with --download-to": this is that run.
        exc.remedy = (
            "this machine cannot download the tools: run `tracebloc-installer "
            "tools --download-to DIR` on a machine with internet access, copy DIR to "
            "this machine, and set TRACEBLOC_TOOLS_MIRROR=DIR"
        )
        raise
    finally:
        _remove_if_empty(directory, made)


def _missing_dirs(path: str) -> list[str]:
    """`path` and its ancestors that do not exist yet, deepest first."""
    out: list[str] = []
    path = os.path.abspath(path)
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        out.append(path)
        path = os.path.dirname(path)
    return out


def _remove_if_empty(directory: str, made: list[str]) -> None:
    """A failed fill leaves no empty tree: the folders under `directory` that hold nothing,
    and the ones this run created to reach it."""
    for root, _dirs, _files in os.walk(directory, topdown=False):  # children first
        if root != directory:
            with contextlib.suppress(OSError):
                os.rmdir(root)  # only when empty
    for path in made:
        with contextlib.suppress(OSError):
            os.rmdir(path)


def _fill(
    directory: str,
    platforms: list[str],
    env: Mapping[str, str],
    cfg: Settings,
    progress_for: ProgressFor | None,
) -> list[Carried]:
    out: list[Carried] = []
    for tool in pins.TOOLS:
        for platform in platforms:
            artifact = cfg.manifest.artifact(tool, platform)
            if artifact is None:
                continue
            if artifact.pending:
                out.append(Carried(artifact, None, "pending"))
                continue
            target = os.path.join(directory, *artifact.mirror_path.split("/"))
            if os.path.isfile(target) and _sha256_of(target) == artifact.sha256:
                out.append(Carried(artifact, target, "already there"))
                continue
            folder = writable_dir(os.path.dirname(target), "--download-to")
            with _temporary(folder, ".download") as (part, part_path):
                _receive(artifact, cfg.mirror, part, env, cfg.deadline_s, progress_for)
                part.close()
                os.replace(part_path, target)
            out.append(Carried(artifact, target, "downloaded"))
    return out


def writable_dir(path: str, what: str) -> str:
    """`path`, created owner-only if missing, once a file can be made in it; else BadInput."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        with tempfile.TemporaryFile(dir=path, prefix=PREFIX):
            pass
    except OSError as exc:
        raise BadInput(
            f"{what} {path!r} cannot be written: {exc.strerror or exc}",
            f"choose a directory you can write to ({TOOLS_DIR} for the tools)",
        ) from None
    _sweep(path)
    return path


def _receive(
    artifact: pins.Artifact,
    mirror: Mirror | None,
    out: BinaryIO,
    env: Mapping[str, str],
    deadline_s: float,
    progress_for: ProgressFor | None,
) -> None:
    """The artifact's bytes into `out`, then the checksum comparison."""
    source = location(artifact, mirror)
    label = f"{artifact.tool} {artifact.version} ({artifact.platform})"
    sink = progress_for(label) if progress_for is not None else None
    ok = False
    try:
        if mirror is not None and mirror.kind == "dir":
            got = _copy_local(source, out, sink, artifact.most_bytes)
        else:
            got = fetch(
                source, out, env=env, deadline_s=deadline_s, progress=sink, most=artifact.most_bytes
            )
        out.flush()
        ok = True
    finally:
        if sink is not None:
            sink.finish(ok)
    if got.sha256 != artifact.sha256:
        raise ChecksumMismatch(
            f"{artifact.file} from {source} does not match the checksum pinned in this build: "
            f"expected sha256 {artifact.sha256}, received {got.sha256} ({got.size} bytes)",
            "nothing was installed; the download or the mirror holds other bytes than the "
            "official release (corrupted or tampered with)",
        )


def _copy_local(path: str, out: BinaryIO, sink: Progress | None, most: int) -> Fetched:
    """The mirror file's bytes into `out`, never more than `most` (the artifact's pinned
    size, or the ceiling): `/dev/zero` or a huge file stops there and is refused. Opened
    without blocking and checked to be a regular file, so a FIFO cannot hang the copy."""
    started = time.monotonic()
    digest = hashlib.sha256()
    size = 0
    remedy = "fill the mirror with: tracebloc-installer tools --download-to DIR"
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InstallerError(
            f"cannot read {path} from the tools mirror: {exc.strerror or exc}", remedy
        ) from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise InstallerError(f"{path} in the tools mirror is not a regular file", remedy)
        if found.st_size > most:
            raise _too_large(path, most, remedy)
        if sink is not None:
            sink(0, found.st_size)
        while chunk := os.read(fd, min(CHUNK, most + 1 - size)):
            size += len(chunk)
            if size > most:
                raise _too_large(path, most, remedy)
            out.write(chunk)
            digest.update(chunk)
            if sink is not None:
                sink(size, found.st_size)
    except OSError as exc:
        raise InstallerError(
            f"cannot read {path} from the tools mirror: {exc.strerror or exc}", remedy
        ) from None
    finally:
        os.close(fd)
    return Fetched(digest.hexdigest(), size, time.monotonic() - started)


def _too_large(path: str, most: int, remedy: str) -> InstallerError:
    return InstallerError(
        f"{path} in the tools mirror is larger than the pinned artifact "
        f"(more than {most} bytes): the copy was stopped and nothing was "
        "installed",
        remedy,
    )


def _sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def _temporary(directory: str, suffix: str) -> Iterator[tuple[BinaryIO, str]]:
    """A new file in `directory`, removed when the block ends unless it was renamed away
    (`os.replace`) inside it."""
    fd, path = tempfile.mkstemp(dir=directory, prefix=PREFIX, suffix=suffix)
    handle = os.fdopen(fd, "w+b")
    try:
        yield handle, path
    finally:
        handle.close()
        _remove(path)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


def _sweep(directory: str) -> None:
    """Remove our temporary files that a killed run left behind (a day old or more)."""
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if _OURS.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_S:
                        os.remove(entry.path)
