"""The amd64-emulation check the twin runs on Apple Silicon before the cluster needs it
(commands/amd64_emulation.py): the decision, the exact argv, and what each answer of a fake
`docker` (a real executable on PATH that logs its argv) makes of the install."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import pytest

from installer.commands.amd64_emulation import check_amd64
from installer.decide.errors import InstallerError
from installer.decide.redact import Redactor
from installer.decide.runtime_macos import amd64_verdict
from installer.present.ui import Ui
from tests.fakes.executables import make_executable

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX fake docker")

DOCKER = """import json, sys, time
with open({log!r}, "a", encoding="utf-8") as out:
    out.write(json.dumps(sys.argv[1:]) + "\\n")
time.sleep({sleep!r})
sys.stderr.write({said!r})
sys.exit({rc!r})
"""


def fake_docker(tmp_path: Path, *, rc: int = 0, said: str = "", sleep: float = 0) -> dict[str, str]:
    log = tmp_path / "docker.log"
    make_executable(
        tmp_path / "bin" / "docker", DOCKER.format(log=str(log), rc=rc, said=said, sleep=sleep)
    )
    return {"PATH": str(tmp_path / "bin")}


def calls(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "docker.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def ui() -> tuple[Ui, io.StringIO]:
    out = io.StringIO()
    return Ui(out, env={}, redactor=Redactor()), out


SMOKE = ["run", "--rm", "--platform", "linux/amd64", "busybox:1.36", "true"]


@pytest.mark.parametrize(
    ("rc", "said", "expected"),
    [
        pytest.param(0, "", "ok", id="it-ran"),
        pytest.param(1, "exec /bin/true: exec format error", "broken", id="exec-format-error"),
        pytest.param(139, "", "broken", id="crashed-with-no-words"),
        pytest.param(
            125, "docker: exec format error", "broken", id="docker-saw-the-exec-format-error"
        ),
        pytest.param(
            125, "Cannot connect to the Docker daemon", "unknown", id="docker-itself-failed"
        ),
        pytest.param(
            125,
            "Unable to find image 'busybox:1.36' locally\ndocker: Error response from "
            'daemon: Get "https://registry-1.docker.io/v2/": dial tcp: i/o timeout',
            "unknown",
            id="image-could-not-be-pulled",
        ),
        pytest.param(None, "", "timeout", id="did-not-finish"),
    ],
)
def test_what_the_smoke_run_shows(rc: int | None, said: str, expected: str) -> None:
    assert amd64_verdict(rc, said) == expected


@pytest.mark.parametrize(
    ("os_", "arch", "mysql"),
    [
        pytest.param("darwin", "amd64", "5.7", id="intel-mac-runs-amd64-natively"),
        pytest.param("darwin", "arm64", "8.4", id="apple-silicon-with-the-multi-arch-8.4"),
        pytest.param("linux", "arm64", "5.7", id="linux-is-not-the-twins-check"),
    ],
)
def test_nothing_is_run_where_no_amd64_only_image_needs_emulation(
    tmp_path: Path, os_: str, arch: str, mysql: str
) -> None:
    env = fake_docker(tmp_path, rc=1, said="exec format error")
    shown, _ = ui()
    assert check_amd64(env, Redactor(), shown, os_=os_, arch=arch, mysql=mysql) == ""
    assert calls(tmp_path) == []


def test_apple_silicon_with_emulation_working_goes_on(tmp_path: Path) -> None:
    env = fake_docker(tmp_path)
    shown, out = ui()
    assert check_amd64(env, Redactor(), shown, os_="darwin", arch="arm64", mysql="5.7") == "ok"
    assert calls(tmp_path) == [SMOKE]
    assert "docker run --rm --platform linux/amd64 busybox:1.36 true" in out.getvalue()


def test_apple_silicon_without_rosetta_stops_with_the_scripts_remedy(tmp_path: Path) -> None:
    env = fake_docker(tmp_path, rc=1, said="exec /bin/true: exec format error\n")
    shown, _ = ui()
    with pytest.raises(InstallerError) as stop:
        check_amd64(env, Redactor(), shown, os_="darwin", arch="arm64", mysql="5.7")
    assert "amd64 emulation does not work" in stop.value.message
    assert "exec format error" in stop.value.message  # Docker's own words
    assert "Use Rosetta for x86_64/amd64 emulation" in stop.value.remedy
    assert "colima delete && colima start --vm-type vz --vz-rosetta" in stop.value.remedy
    assert calls(tmp_path) == [SMOKE]


def test_a_smoke_run_that_hangs_is_killed_at_the_bound_and_stops(tmp_path: Path) -> None:
    env = fake_docker(tmp_path, sleep=30)
    shown, _ = ui()
    started = time.monotonic()
    with pytest.raises(InstallerError, match="did not finish within 1s") as stop:
        check_amd64(env, Redactor(), shown, os_="darwin", arch="arm64", mysql="5.7", timeout=1)
    assert time.monotonic() - started < 10
    assert "Rosetta" in stop.value.remedy


def test_an_image_that_cannot_be_pulled_is_no_evidence_and_only_warns(tmp_path: Path) -> None:
    env = fake_docker(
        tmp_path,
        rc=125,
        said="Unable to find image 'busybox:1.36' locally\n"
        "docker: Error response from daemon: pull access denied for busybox\n",
    )
    shown, out = ui()
    assert check_amd64(env, Redactor(), shown, os_="darwin", arch="arm64", mysql="5.7") == "unknown"
    assert (
        "amd64 emulation could not be verified (docker: Error response from daemon: pull "
        "access denied for busybox); going on" in out.getvalue()
    )
