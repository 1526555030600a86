"""The suite's own check that it left the machine's /etc as it was (tests/conftest.py): a
run that changes a watched folder fails, naming the path; one that does not, passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ENGINE_ETC, etc_changes, etc_state
from tests.fakes.cluster import REPO

WRITE = "TB_TEST_ETC_GUARD_WRITE"


@pytest.mark.skipif(
    not os.environ.get(WRITE), reason="run by the test below, in a pytest of its own"
)
def test_a_test_that_writes_a_watched_folder() -> None:
    Path(os.environ[WRITE]).write_text("overlay\n", encoding="utf-8")


@pytest.mark.parametrize("writes", [True, False], ids=["writes", "leaves-it"])
def test_a_run_that_changes_a_watched_folder_fails_naming_the_path(
    tmp_path: Path, writes: bool
) -> None:
    watched = tmp_path / "modules-load.d"
    watched.mkdir()
    env = {**os.environ, "TB_TEST_ETC_WATCH": str(watched), "PYTHONPATH": str(REPO)}
    if writes:
        env[WRITE] = str(watched / "tracebloc.conf")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"{Path(__file__)}::test_a_test_that_writes_a_watched_folder",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    said = result.stdout + result.stderr
    if writes:
        assert result.returncode == 1, said
        assert f"appeared: {watched / 'tracebloc.conf'}" in said
    else:
        assert result.returncode == 0, said


def test_the_snapshot_sees_a_change_of_size_mtime_link_or_name(tmp_path: Path) -> None:
    (tmp_path / "a.conf").write_text("x", encoding="utf-8")
    before = etc_state((str(tmp_path),))
    (tmp_path / "a.conf").write_text("xy", encoding="utf-8")
    (tmp_path / "link").symlink_to("nowhere")
    changes = etc_changes(before, etc_state((str(tmp_path),)))
    assert (
        f"changed: {tmp_path / 'a.conf'}" in changes and f"appeared: {tmp_path / 'link'}" in changes
    )


def test_every_folder_the_engine_writes_is_watched() -> None:
    from installer.decide import runtime as rt

    for path in (
        rt.MODULES_FILE,
        rt.PROXY_DROPIN,
        rt.CA_DROPIN,
        f"{rt.CA_DIR}/ca.crt",
        "/etc/apt/sources.list.d/docker.list",
        "/etc/apt/keyrings/docker.asc",
        "/etc/yum.repos.d/docker-ce.repo",
    ):
        assert any(path.startswith(folder + "/") for folder in ENGINE_ETC), path
