"""Failing closed under concurrency, crashes and hostile input: the CLI as a process against
fake kubectl/helm on PATH (tests/fakes), one test per attack.

Each attack here broke the engine before: two installs at once, a `kill -9` mid-helm, an
empty answer taken for "nothing installed", an ordinary word as password, secrets in the
children's environment and in tool output, a grandchild holding helm's pipes, a FIFO as the
values file, a full disk, a huge number.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, installer_command, node, release_row
from tests.fakes.processes import gone_soon, kill_if_running, running

CLIENT_ID = "client-7f3a"
PASSWORD = "Cl1ent-P4ss:#w0rd"
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals, FIFOs and flock")
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def env_for(backend: BackendServer, **extra: str) -> dict[str, str]:
    base = {
        "TRACEBLOC_CLIENT_ID": CLIENT_ID,
        "TRACEBLOC_CLIENT_PASSWORD": PASSWORD,
        "TRACEBLOC_BACKEND_URL": backend.url,
        "TRACEBLOC_SKIP_PREFLIGHT": "1",
        "TB_METRICS_WAIT_S": "0",
        "TB_PLAIN": "1",
    }
    base.update(extra)
    return base


def fresh(cluster: FakeCluster) -> FakeCluster:
    return cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()


def data_dir(cluster: FakeCluster) -> Path:
    return cluster.home / ".tracebloc"


def mutations(cluster: FakeCluster) -> list[list[str]]:
    """The helm calls that change a release (the repo's add/update change no release)."""
    changing = {"upgrade", "rollback", "uninstall", "install"}
    return [argv for argv in cluster.calls("helm") if argv and argv[0] in changing]


def wait_for_call(cluster: FakeCluster, verb: str, timeout: float = 30) -> int:
    """The pid of helm's `verb` once it sleeps, its signal handler installed."""
    return cluster.sleeping_call(verb, tool="helm", timeout=timeout)


@pytest.fixture
def cleanup() -> Iterator[list[int]]:
    """Pids to kill after the test, whatever it left running."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        kill_if_running(pid)


# --- 1. one install at a time; recovery never touches a live helm ---------------------------


@POSIX
def test_a_second_install_is_refused_while_the_first_runs(
    cluster: FakeCluster, backend: BackendServer, cleanup: list[int]
) -> None:
    fresh(cluster).on("helm", "upgrade", "--install", sleep=60, on_term=1)
    cluster.status_of("tracebloc", "pending-install")  # what the first install's helm leaves
    first = cluster.start("install", "--yes", **env_for(backend))
    cleanup.append(first.pid)
    cleanup.append(wait_for_call(cluster, "upgrade"))
    calls_before = len(cluster.call_log())

    second = cluster.run("install", "--yes", **env_for(backend))

    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=30)
    assert second.returncode == 3, second.stderr
    assert "another install is running" in second.stderr
    assert f"pid {first.pid}" in second.stderr
    assert "install of release tracebloc in namespace tracebloc" in second.stderr
    assert "nothing was changed" in second.stderr
    # The second install neither read nor recovered anything: no call of its own at all.
    assert [e["argv"] for e in cluster.call_log()[calls_before:]] == []


@POSIX
def test_installs_with_another_data_dir_still_share_the_release_lock(
    cluster: FakeCluster, backend: BackendServer, cleanup: list[int], tmp_path: Path
) -> None:
    fresh(cluster).on("helm", "upgrade", "--install", sleep=60, on_term=1)
    first = cluster.start("install", "--yes", **env_for(backend))
    cleanup.append(first.pid)
    cleanup.append(wait_for_call(cluster, "upgrade"))

    second = cluster.run(
        "install", "--yes", **env_for(backend, HOST_DATA_DIR=str(cluster.home / "other"))
    )

    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=30)
    assert second.returncode == 3, second.stderr
    assert "another install is running" in second.stderr


@LINUX
def test_kill_9_of_the_engine_takes_its_helm_along_and_the_rerun_converges(
    cluster: FakeCluster, backend: BackendServer, cleanup: list[int]
) -> None:
    fresh(cluster).on("helm", "upgrade", "--install", sleep=60)
    engine = cluster.start("install", "--yes", **env_for(backend))
    helm_pid = wait_for_call(cluster, "upgrade")
    cleanup.append(helm_pid)

    engine.send_signal(signal.SIGKILL)
    engine.communicate(timeout=30)

    # Before: helm ran in its own session and lived on, changing the release unattended.
    assert gone_soon(helm_pid), "helm outlived the engine that started it"
    # What a killed helm leaves, the re-run recovers, then installs.
    cluster.status_of("tracebloc", "pending-upgrade")
    cluster.installed(release_row(status="pending-upgrade"))
    cluster.values_of("tracebloc", "tracebloc", {"clientId": CLIENT_ID})
    cluster.on("helm", "upgrade", "--install", stdout="Release has been upgraded.\n")
    rerun = cluster.run("install", "--yes", **env_for(backend))
    assert rerun.returncode == 0, rerun.stderr
    verbs = [argv[0] for argv in mutations(cluster)]
    assert verbs[-2:] == ["rollback", "upgrade"]


@POSIX
def test_a_helm_that_outlives_a_killed_engine_blocks_recovery(
    cluster: FakeCluster, backend: BackendServer, cleanup: list[int]
) -> None:
    # Where the OS cannot kill a child with its parent (macOS), the child keeps the lock.
    fresh(cluster).on("helm", "upgrade", "--install", sleep=60, outlive=True)
    engine = cluster.start("install", "--yes", **env_for(backend))
    helm_pid = wait_for_call(cluster, "upgrade")
    cleanup.append(helm_pid)
    engine.send_signal(signal.SIGKILL)
    engine.communicate(timeout=30)
    assert running(helm_pid)
    cluster.status_of("tracebloc", "pending-install")
    cluster.installed(release_row(status="pending-install"))
    cluster.values_of("tracebloc", "tracebloc", {"clientId": CLIENT_ID})

    rerun = cluster.run("install", "--yes", **env_for(backend))

    assert rerun.returncode == 3, rerun.stderr
    assert f"pid {engine.pid}" in rerun.stderr
    assert "a tool it started (helm) is still running" in rerun.stderr
    assert [argv[0] for argv in mutations(cluster)] == ["upgrade"]  # the first run's only


# --- 2. empty is not nothing -----------------------------------------------------------------


@pytest.mark.parametrize(
    "listing",
    [
        pytest.param("", id="no-output"),
        pytest.param("null", id="json-null"),
        pytest.param("[", id="cut-off"),
    ],
)
def test_a_release_list_that_says_nothing_is_refused(
    cluster: FakeCluster, backend: BackendServer, listing: str
) -> None:
    fresh(cluster).on("helm", "list", stdout=listing)

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    assert mutations(cluster) == []
    assert not (data_dir(cluster) / "values.yaml").exists()


# --- 3. any string is a valid password -------------------------------------------------------


@pytest.mark.parametrize("password", ["tracebloc", "values", "client", "upgrade", "--install"])
def test_an_ordinary_word_is_a_usable_password(
    cluster: FakeCluster, backend: BackendServer, password: str
) -> None:
    fresh(cluster)

    result = cluster.run("install", "--yes", **env_for(backend, TRACEBLOC_CLIENT_PASSWORD=password))

    assert result.returncode == 0, result.stderr
    [upgrade] = [argv for argv in mutations(cluster) if argv[0] == "upgrade"]
    assert upgrade[:4] == ["upgrade", "--install", "tracebloc", "tracebloc/client"]
    # Names and paths that contain the word are shown as they are.
    assert "values.yaml" in result.stdout
    values = (data_dir(cluster) / "values.yaml").read_text(encoding="utf-8")
    assert f"clientPassword: {password}" in values or password in values


@POSIX
def test_a_non_utf8_password_is_bad_input_in_one_line(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    env = {k.encode(): v.encode() for k, v in env_for(backend).items()}
    env.update({k.encode(): v.encode() for k, v in cluster.env().items()})
    env[b"TRACEBLOC_CLIENT_PASSWORD"] = b"S\xe9cretPassw\xf6rd"  # typed on a Latin-1 terminal

    result = subprocess.run(
        [*installer_command(), "install", "--yes"],
        env=env,
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )

    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, stderr
    assert stderr.startswith("error: TRACEBLOC_CLIENT_PASSWORD is not valid UTF-8 text")
    assert "cretPassw" not in stderr and "internal error" not in stderr
    assert mutations(cluster) == []


# --- 4. secrets stay out of children's environments ------------------------------------------


def test_children_get_the_environment_without_the_engines_secrets(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)

    result = cluster.run(
        "install",
        "--yes",
        **env_for(
            backend,
            TRACEBLOC_REGISTRY_USERNAME="puller",
            TRACEBLOC_REGISTRY_PASSWORD="Reg1stry-S3cret@x",
            MY_COPY_OF_IT=PASSWORD,
        ),
    )

    assert result.returncode == 0, result.stderr
    assert cluster.call_log()
    # The tools' version queries (how the engine picks its tools) are children too.
    assert any(entry["argv"][:1] == ["version"] for entry in cluster.call_log())
    for entry in cluster.call_log():
        names = set(entry["env_names"])
        assert not names & {
            "TRACEBLOC_CLIENT_PASSWORD",
            "TRACEBLOC_REGISTRY_PASSWORD",
            "MY_COPY_OF_IT",
        }, entry["argv"]
        assert "PATH" in names and "TRACEBLOC_CLIENT_ID" in names


# --- 5. redaction sees what tools print; every tail is capped --------------------------------


def test_helm_echoing_the_password_in_any_form_and_at_any_length_leaks_nothing(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    password = ' p@ss "wörd"/100% '
    huge = "E" * 10_000_000
    said = "\n".join(
        [
            f"Error: values: clientPassword: {json.dumps(password)}",  # JSON-escaped
            "Error: proxy http://u:%20p%40ss%20%22w%C3%B6rd%22%2F100%25%20@proxy",  # percent-encoded
            f"Error: password {password.strip()} rejected",  # whitespace trimmed
            f"Error: clientPassword: {password.strip()[:9]}…",  # cut by a length limit
            huge,
        ]
    )
    fresh(cluster).on("helm", "upgrade", "--install", stderr=said, rc=1)

    result = cluster.run("install", "--yes", **env_for(backend, TRACEBLOC_CLIENT_PASSWORD=password))

    assert result.returncode == 1
    log = (data_dir(cluster) / "install.log").read_text(encoding="utf-8")
    for text in (result.stderr, log):
        for fragment in ("p@ss", "p%40ss", "w\\u00f6rd", "wörd", "w%C3%B6rd", "100%"):
            assert fragment not in text
    assert len(result.stderr) < 20_000
    assert len(log) < 200_000


# --- 6. a finished child is finished; reads honour TB_PROBE_TIMEOUT_S ------------------------


def test_a_grandchild_holding_helms_pipes_does_not_make_it_unfinished(
    cluster: FakeCluster, backend: BackendServer, cleanup: list[int]
) -> None:
    fresh(cluster).on("helm", "list", stdout="[]", grandchild=True)
    started = time.monotonic()

    result = cluster.run("install", "--yes", **env_for(backend, TB_PROBE_TIMEOUT_S="20"))

    cleanup.extend(cluster.grandchild_pids())
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 20, "helm list was waited for until its deadline"
    assert all(gone_soon(pid) for pid in cluster.grandchild_pids())


def test_a_wedged_status_read_is_refused_within_the_probe_timeout(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).installed(release_row())
    cluster.values_of("tracebloc", "tracebloc", {"clientId": CLIENT_ID})
    cluster.on("helm", "status", "tracebloc", sleep=60)
    started = time.monotonic()

    result = cluster.run("install", "--yes", **env_for(backend, TB_PROBE_TIMEOUT_S="2"))

    assert result.returncode == 3, result.stderr
    assert time.monotonic() - started < 25
    assert "did not finish within 2s" in result.stderr
    assert mutations(cluster) == []


# --- 7. the values path is a regular file or nothing -----------------------------------------


@POSIX
def test_a_fifo_as_the_values_file_is_an_error_not_a_hang(cluster: FakeCluster) -> None:
    fresh(cluster)
    data_dir(cluster).mkdir(parents=True)
    os.mkfifo(data_dir(cluster) / "values.yaml")

    result = cluster.run(
        "plan", timeout=30, TRACEBLOC_CLIENT_ID=CLIENT_ID, TRACEBLOC_CLIENT_PASSWORD=PASSWORD
    )

    assert result.returncode == 1, result.stderr
    assert "is not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


@POSIX
@pytest.mark.parametrize("how", ["variable", "symlink"])
def test_dev_zero_as_the_values_file_is_an_error_not_out_of_memory(
    cluster: FakeCluster, backend: BackendServer, how: str
) -> None:
    fresh(cluster)
    extra = {}
    if how == "variable":
        extra["TRACEBLOC_VALUES_FILE"] = "/dev/zero"
    else:
        data_dir(cluster).mkdir(parents=True)
        (data_dir(cluster) / "values.yaml").symlink_to("/dev/zero")

    result = cluster.run("install", "--yes", timeout=30, **env_for(backend, **extra))

    assert result.returncode in (1, 2), result.stderr
    # A link is refused as a link, before anything reads through it.
    said = "is not a regular file" if how == "variable" else "it is a symbolic link (to /dev/zero)"
    assert said in result.stderr
    assert "Traceback" not in result.stderr
    assert mutations(cluster) == []


def test_temporary_files_of_an_interrupted_write_are_removed(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    data_dir(cluster).mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    abandoned = data_dir(cluster) / f".values-{dead.pid}-k3x9q2.tmp"
    abandoned.write_text(f"clientPassword: {PASSWORD}\n", encoding="utf-8")
    someone_elses = data_dir(cluster) / "notes.tmp"
    someone_elses.write_text("mine\n", encoding="utf-8")

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    assert not abandoned.exists()
    assert someone_elses.exists()
    assert [p.name for p in data_dir(cluster).glob(".values-*")] == []


# --- 8. quiet under a full disk and huge numbers ---------------------------------------------


def _a_disk_full_beyond(limit: int):  # noqa: ANN202 - a preexec_fn
    """Every file write past `limit` bytes fails (EFBIG, as a full disk fails it with ENOSPC):
    RLIMIT_FSIZE with SIGXFSZ ignored, so the write returns an error instead of killing."""
    import resource

    def limit_writes() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_writes


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_full_disk_under_the_log_prints_no_logging_tracebacks(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    data_dir(cluster).mkdir(parents=True)
    limit = 256 * 1024  # every other file the run writes is far smaller
    log = data_dir(cluster) / "install.log"
    log.write_bytes(b"an earlier run's line\n" * (limit // 22) + b"x" * (limit % 22))
    assert log.stat().st_size == limit

    result = subprocess.run(
        [*installer_command(), "install", "--yes", "--verbose"],
        env=cluster.env(**env_for(backend)),
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=_a_disk_full_beyond(limit),
    )

    assert result.returncode == 0, result.stderr
    assert log.stat().st_size == limit  # the disk really was full for the log
    assert "Logging error" not in result.stderr
    assert "Traceback" not in result.stderr
    assert [argv[0] for argv in mutations(cluster)] == ["upgrade"]  # the install went on


@pytest.mark.parametrize("name", ["PF_MIN_CPU", "PF_MIN_MEM_GB", "PF_MIN_DISK_GB"])
def test_a_number_with_thousands_of_digits_is_bad_input(
    cluster: FakeCluster, backend: BackendServer, name: str
) -> None:
    fresh(cluster)
    env = env_for(backend, **{name: "9" * 5000})
    del env["TRACEBLOC_SKIP_PREFLIGHT"]

    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 2, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"error: {name}=") and len(first) < 200
    assert "internal error" not in result.stderr and len(result.stderr) < 1000
    assert mutations(cluster) == []


# --- 9. the whole quantity grammar reaches sizing --------------------------------------------


def test_a_node_reporting_nano_cores_is_sized_not_skipped(cluster: FakeCluster) -> None:
    cluster.nodes(node("kubelet-nano", "7920000000n", "16Gi")).release_absent()

    facts = cluster.run_json("probe")

    [seen] = facts["cluster"]["nodes"]
    assert seen["parsed"] is True, seen
    assert seen["cpu_millicores"] == 7920
