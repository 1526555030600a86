"""What the terminal shows is the engine's own text (issue 19): text that comes from the
cluster is printed with its control characters escaped, and `--help` fails on a closed or
full stdout like every other command. The CLI as a process against fake tools."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from tests.fakes import workloads
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, installer_command, node, release_row

CLIENT_ID = "client-7f3a"
PASSWORD = "Cl1ent-P4ss:#w0rd"
# Clears the screen, retitles the window and rings the bell: none of it may reach a terminal.
HOSTILE = "\x1b[2J\x1b]0;owned\x07\x9b31m\x00"
COMMANDS = ["install", "plan", "probe", "version", "tools", "status", "diagnose", "uninstall"]


def env_for(backend: BackendServer, **extra: str) -> dict[str, str]:
    return {
        "TRACEBLOC_CLIENT_ID": CLIENT_ID,
        "TRACEBLOC_CLIENT_PASSWORD": PASSWORD,
        "TRACEBLOC_BACKEND_URL": backend.url,
        "TRACEBLOC_SKIP_PREFLIGHT": "1",
        "TB_METRICS_WAIT_S": "0",
        "TB_PLAIN": "1",
        **extra,
    }


def no_control_characters(*texts: str) -> None:
    for text in texts:
        bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
        assert not bad, f"control characters reached the terminal: {bad!r} in {text!r}"


# --- text from the cluster -------------------------------------------------------------------


def test_another_releases_client_id_is_shown_escaped(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cluster.nodes(node("laptop", "8", "16Gi")).installable()
    cluster.installed(release_row("other", "team-b"))
    cluster.values_of("other", "team-b", {"clientId": f"evil{HOSTILE}id"})

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    no_control_characters(result.stdout, result.stderr)
    assert "evil\\x1b[2J\\x1b]0;owned\\x07\\x9b31m\\x00id" in result.stderr


def test_a_helm_error_is_shown_escaped(cluster: FakeCluster, backend: BackendServer) -> None:
    cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()
    cluster.on("helm", "upgrade", "--install", rc=1, stderr=f"Error: {HOSTILE}quota exceeded\n")

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode != 0
    no_control_characters(result.stdout, result.stderr)
    assert "\\x1b[2J" in result.stdout + result.stderr


def test_a_pod_message_is_shown_escaped(cluster: FakeCluster, backend: BackendServer) -> None:
    slow = workloads.pod(
        "tracebloc-jobs-manager-1",
        "manager",
        "tracebloc/jobs-manager:1.4.2",
        waiting="ContainerCreating",
    )
    cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()
    cluster.workloads(
        *workloads.client(manager=slow),
        workloads.event(
            "tracebloc-jobs-manager-1", "FailedMount", f"volume {HOSTILE}data", type="Warning"
        ),
    )

    result = cluster.run("install", "--yes", **env_for(backend, READY_TIMEOUT="3"))

    assert result.returncode == 1, result.stderr
    no_control_characters(result.stdout, result.stderr)
    assert "volume \\x1b[2J" in result.stderr, result.stderr


# --- --help on a closed or full stdout -------------------------------------------------------


def _run(args: list[str], stdout: Any, cluster: FakeCluster) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*installer_command(), *args],
        env=cluster.env(),
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--help"], ["-h"]] + [[c, "--help"] for c in COMMANDS])
def test_help_on_a_full_stdout_fails_like_any_command(
    cluster: FakeCluster, args: list[str]
) -> None:
    with open("/dev/full", "w") as full:
        helped = _run(args, full, cluster)
        answered = _run(["version"], full, cluster)

    assert answered.returncode == 1, answered.stderr
    assert helped.returncode == answered.returncode, helped.stderr
    assert (
        helped.stderr.splitlines()
        == answered.stderr.splitlines()
        == ["error: cannot write to standard output: No space left on device"]
    )


@pytest.mark.skipif(sys.platform == "win32", reason="a pipe whose reader is gone: EPIPE")
@pytest.mark.parametrize("args", [["--help"], ["plan", "--help"], ["uninstall", "--help"]])
def test_help_to_a_reader_that_went_away_fails_like_any_command(
    cluster: FakeCluster, args: list[str]
) -> None:
    def into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess[str]:
        read, write = os.pipe()
        os.close(read)
        try:
            return _run(argv, write, cluster)
        finally:
            os.close(write)

    helped, answered = into_closed_pipe(args), into_closed_pipe(["version"])

    assert helped.returncode == answered.returncode == 1, helped.stderr
    assert "Traceback" not in helped.stderr and "BrokenPipe" not in helped.stderr
    assert len(helped.stderr.splitlines()) <= 1
