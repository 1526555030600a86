"""Fetch one file over HTTPS into an open file, hashing it on the way, within a deadline.

Uses the credential check's session (backend.session), so proxies and trust follow the same
rules. Retries connection errors and 5xx, not 4xx; one deadline bounds it all. The caller
compares the returned SHA-256 with the one embedded in this build.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from installer import __version__
from installer.decide.errors import InstallerError
from installer.decide.redact import Redactor
from installer.decide.settings import proxy_environment
from installer.edges import backend, trust

log = logging.getLogger(__name__)

TRIES = 3
BACKOFF_S = 0.5  # urllib3 waits 0.5 s, then 1 s between tries
CHUNK = 1 << 16
# A socket operation waits at most this long (or what is left of the deadline).
SOCKET_WAIT_S = 30.0

Progress = Callable[[int, "int | None"], None]  # (bytes so far, total or None)


class DownloadFailed(InstallerError):
    """Nothing usable was received; the caller discards what was written."""


@dataclass(frozen=True)
class Fetched:
    sha256: str
    size: int
    seconds: float


def retry_policy() -> Any:
    from urllib3.util.retry import Retry

    return Retry(
        total=TRIES - 1,
        connect=TRIES - 1,
        read=TRIES - 1,
        status=TRIES - 1,
        other=0,
        redirect=5,  # GitHub's release links redirect to its storage host
        status_forcelist=tuple(range(500, 600)),
        allowed_methods=frozenset({"GET"}),
        backoff_factor=BACKOFF_S,
        raise_on_status=False,
        respect_retry_after_header=False,  # our deadline decides how long to wait
    )


def fetch(
    url: str,
    out: BinaryIO,
    *,
    env: Mapping[str, str],
    deadline_s: float,
    progress: Progress | None = None,
    most: int | None = None,
    stall: tuple[int, float] | None = None,
) -> Fetched:
    """GET `url` into `out`; raises DownloadFailed (after the tries) or BadInput (bad CA bundle).
    `out` gets nothing after return and at most `most` bytes; `stall` (bytes, seconds) stops a
    download slower than that, within `deadline_s`."""
    context = trust.ssl_context(trust.ca_bundle(env))
    proxy = trust.proxy_for(url, proxy_environment(env))
    log.debug(
        "download: GET %s%s (deadline %gs)",
        url,
        f" via proxy {trust.netloc(proxy)}" if proxy else "",
        deadline_s,
    )
    lock = threading.Lock()
    stopped = threading.Event()  # set under `lock`: after it, `out` is never written again
    outcome: list[Fetched | BaseException] = []
    started = time.monotonic()
    wait = min(SOCKET_WAIT_S, deadline_s)

    received = [0]

    def write(chunk: bytes) -> None:
        with lock:
            if stopped.is_set():
                raise _Stopped
            received[0] += len(chunk)
            if most is not None and received[0] > most:
                raise DownloadFailed(
                    f"{url} sent more than the pinned artifact's {most} bytes: "
                    "the download was stopped",
                    _REMEDY,
                )
            out.write(chunk)

    def work() -> None:
        try:
            outcome.append(_get(url, write, context, proxy, wait, progress, started))
        except BaseException as exc:  # handed to the waiting thread
            outcome.append(exc)

    worker = threading.Thread(target=work, name="download", daemon=True)
    worker.start()
    until = started + deadline_s
    span_start, span_bytes, stalled = started, 0, False
    try:
        while worker.is_alive() and time.monotonic() < until:
            worker.join(0.1)  # short waits: Ctrl-C is delivered between them
            now = time.monotonic()
            if stall is not None and now - span_start >= stall[1]:
                if received[0] - span_bytes < stall[0]:
                    stalled = True
                    break
                span_start, span_bytes = now, received[0]
    finally:
        with lock:
            stopped.set()
    if stalled and stall is not None:
        raise DownloadFailed(
            f"{url} stalled: under {stall[0]} bytes in {stall[1]:g}s "
            f"({received[0]} bytes received)",
            _REMEDY,
        )
    if not outcome:
        raise DownloadFailed(
            f"{url} did not finish downloading within {deadline_s:g}s",
            "check the network (or the proxy), or raise TRACEBLOC_DOWNLOAD_TIMEOUT_S",
        )
    result = outcome[0]
    if isinstance(result, Fetched):
        return result
    if isinstance(result, (InstallerError, KeyboardInterrupt, SystemExit)):
        raise result
    redact = Redactor(trust.proxy_userinfo(proxy_environment(env)))
    detail = backend.failure_detail(result, url, proxy, wait, redact)
    raise DownloadFailed(f"could not download {url}: {detail}", _REMEDY)


_REMEDY = (
    "check the network, the proxy (HTTPS_PROXY) and TRACEBLOC_CA_BUNDLE; or carry the "
    "files in: tracebloc-installer tools --download-to DIR, then TRACEBLOC_TOOLS_MIRROR=DIR"
)


class _Stopped(Exception):
    """The deadline passed while the body was arriving."""


def _get(
    url: str,
    write: Callable[[bytes], None],
    context: Any,
    proxy: str | None,
    wait: float,
    progress: Progress | None,
    started: float,
) -> Fetched:
    requests = backend.http()
    digest = hashlib.sha256()
    size = 0
    with backend.session(context, retry_policy()) as session:
        response = session.get(
            url,
            headers={"User-Agent": f"tracebloc-installer/{__version__}"},
            proxies={"http": proxy, "https": proxy} if proxy else {},
            timeout=(wait, wait),
            stream=True,
        )
        with response:
            if response.status_code != 200:
                tries = f" after {TRIES} tries" if response.status_code >= 500 else ""
                reason = f" {response.reason}" if response.reason else ""
                raise DownloadFailed(
                    f"could not download {url}: HTTP {response.status_code}{reason}{tries}", _REMEDY
                )
            total = _length(response.headers.get("Content-Length"))
            if progress is not None:
                progress(0, total)
            try:
                for chunk in response.iter_content(CHUNK):
                    write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
                    if progress is not None:
                        progress(size, total)
            except _Stopped:
                raise
            except requests.exceptions.RequestException as exc:
                if isinstance(exc, requests.exceptions.ConnectionError) and "timed out" in str(exc):
                    raise
                raise DownloadFailed(
                    f"could not download {url}: the transfer broke off after "
                    f"{size} of {total if total is not None else '?'} bytes",
                    _REMEDY,
                ) from None
    return Fetched(digest.hexdigest(), size, time.monotonic() - started)


def _length(raw: str | None) -> int | None:
    return int(raw) if raw and raw.strip().isdigit() else None
