"""Secrets of any length, and locks that die with their holder (issue 19): the CLI as a
process against fake tools and a temporary HOME."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, node
from tests.fakes.processes import kill_if_running

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX daemons and flock")
CLIENT_ID = "client-7f3a"
PASSWORD = "Cl1ent-P4ss:#w0rd"

# About fifty times the one that took `version` 11-37 s and 352 MiB: a redactor whose build
# is quadratic in the secret's length would take many minutes here, a linear one ~0.1 s.
LONG_TOKEN = ("ghp_" + "Zq9-x/7Y%k:" * 1000)[:10240]


@pytest.mark.parametrize("command", [("version",), ("version", "--json")])
def test_a_10_kb_registry_token_does_not_slow_the_engine(
    cluster: FakeCluster, command: tuple[str, ...]
) -> None:
    # The timeout is a guard that cannot be flaky (the work is ~0.1 s; the old build needed
    # minutes): the speed itself is measured by tests/benchmarks/bench_redact.py.
    result = cluster.run(*command, timeout=60, TRACEBLOC_REGISTRY_PASSWORD=LONG_TOKEN)

    assert result.returncode == 0, result.stderr
    assert LONG_TOKEN[:64] not in result.stdout + result.stderr


# --- locks die with their holder ---------------------------------------------------------


@pytest.fixture
def cleanup() -> Iterator[list[int]]:
    pids: list[int] = []
    yield pids
    for pid in pids:
        kill_if_running(pid)


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


def fresh(cluster: FakeCluster) -> FakeCluster:
    return cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()


def wait_for_call(cluster: FakeCluster, verb: str, timeout: float = 30) -> int:
    """The pid of helm's `verb` once it sleeps, its signal handler installed."""
    return cluster.sleeping_call(verb, tool="helm", timeout=timeout)


@POSIX
def test_a_daemon_started_by_helm_does_not_keep_the_next_install_out(
    cluster: FakeCluster, backend: BackendServer, cleanup: list[int]
) -> None:
    # A credential helper or port-forward that helm (or kubectl) leaves running, keeping
    # every descriptor it inherited.
    fresh(cluster).on("helm", "upgrade", "--install", daemon=True)
    first = cluster.run("install", "--yes", **env_for(backend))
    cleanup.extend(cluster.grandchild_pids())
    assert first.returncode == 0, first.stderr
    assert cluster.grandchild_pids(), "the fake left no daemon"

    second = cluster.run("install", "--yes", **env_for(backend))

    cleanup.extend(cluster.grandchild_pids())
    assert second.returncode == 0, second.stderr
    assert "another install is running" not in second.stderr


@POSIX
def test_the_held_message_names_the_holders_pid_and_command(
    cluster: FakeCluster, backend: BackendServer, cleanup: list[int]
) -> None:
    fresh(cluster).on("helm", "upgrade", "--install", sleep=60, on_term=1)
    first = cluster.start("install", "--yes", **env_for(backend))
    cleanup.append(first.pid)
    cleanup.append(wait_for_call(cluster, "upgrade"))

    second = cluster.run("install", "--yes", **env_for(backend))

    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=30)
    assert second.returncode == 3, second.stderr
    said = second.stderr.splitlines()[0]
    assert f"(pid {first.pid}: " in said and "install --yes" in said, said


@POSIX
def test_a_lock_held_by_a_process_that_wrote_no_record_names_that_process(
    cluster: FakeCluster, backend: BackendServer, cleanup: list[int]
) -> None:
    fresh(cluster)
    lock_file = cluster.home / ".tracebloc" / "install.lock"
    lock_file.parent.mkdir(parents=True)
    lock_file.write_text("", encoding="utf-8")
    script = (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(lock_file)!r}, os.O_RDWR)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(600)\n"
    )
    stranger = subprocess.Popen(
        [sys.executable, "-c", script, "stranger-marker"], stdout=subprocess.PIPE, text=True
    )
    cleanup.append(stranger.pid)
    assert stranger.stdout is not None and stranger.stdout.readline() == "held\n"

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    said = result.stderr.splitlines()[0]
    assert f"pid {stranger.pid}" in said and "stranger-marker" in said, said
