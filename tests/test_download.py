"""A download bounded by progress (curl's --speed-limit/--speed-time, as the scripts bounded
Docker's installers): a server that stops sending is left after one quiet span, long before
the total bound; a steady one is never cut short by it. Against a real loopback HTTPS server."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from installer.edges import download, runtime_files
from tests.fakes.mirror import STALL, LoopbackTls, MirrorServer


def test_a_stalled_download_is_stopped_after_one_quiet_span(tmp_path: Path) -> None:
    tls = LoopbackTls(tmp_path)
    with MirrorServer(tls) as mirror:
        mirror.files["docker.dmg"] = b"x" * 100_000
        mirror.faults["docker.dmg"] = [STALL]
        started = time.monotonic()
        with pytest.raises(download.DownloadFailed) as failed:
            download.fetch(
                mirror.url + "docker.dmg",
                io.BytesIO(),
                env={"TRACEBLOC_CA_BUNDLE": str(tls.ca_path)},
                deadline_s=60,
                stall=(1000, 1.5),
            )
        took = time.monotonic() - started
    assert "docker.dmg stalled: under 1000 bytes in 1.5s" in failed.value.message
    assert took < 10


def test_a_steady_download_is_not_cut_short(tmp_path: Path) -> None:
    tls = LoopbackTls(tmp_path)
    with MirrorServer(tls) as mirror:
        mirror.files["docker.dmg"] = b"y" * 200_000
        out = io.BytesIO()
        got = download.fetch(
            mirror.url + "docker.dmg",
            out,
            env={"TRACEBLOC_CA_BUNDLE": str(tls.ca_path)},
            deadline_s=60,
            stall=(1000, 1.5),
        )
    assert got.size == 200_000 and out.getvalue() == b"y" * 200_000


def test_dockers_installers_are_bounded_by_progress_as_the_scripts() -> None:
    assert runtime_files.STALL == (1024 * 60, 60.0)  # under 1 KB/s for 60 s
