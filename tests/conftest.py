from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import netlab
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import REPO, FakeCluster


@pytest.fixture
def cluster(tmp_path: Path) -> FakeCluster:
    """Fake kubectl and helm on PATH, scripted per test; no rule means exit 97."""
    return FakeCluster(tmp_path)


@pytest.fixture
def backend() -> Iterator[BackendServer]:
    """The tracebloc backend on loopback: scripted replies, then 200 for every request."""
    with BackendServer() as server:
        yield server


def _real_helm() -> str | None:
    explicit = os.environ.get("TRACEBLOC_TEST_HELM")
    if explicit:
        return explicit
    # tests/tools/fetch_helm.py fetches a Linux build; elsewhere helm comes from PATH (CI puts
    # the same version there with azure/setup-helm).
    cached = REPO / ".cache" / "bin" / "helm"
    if sys.platform.startswith("linux") and cached.exists():
        return str(cached)
    return shutil.which("helm")


# The network preflight's loopback world: a public test CA, and HTTPS sites it signed.
@pytest.fixture
def public(tmp_path: Path) -> netlab.Authority:
    return netlab.Authority("Public Test Root", tmp_path)


@pytest.fixture
def registry(public: netlab.Authority) -> Iterator[BackendServer]:
    with netlab.https_site(public) as site:
        yield site


@pytest.fixture
def backend_site(public: netlab.Authority) -> Iterator[BackendServer]:
    with netlab.https_site(public) as site:
        yield site


@pytest.fixture(scope="session")
def real_helm() -> str:
    """The real helm binary, for offline `helm template`/`helm lint`.

    Fetched by `.ci/run` (tests/tools/fetch_helm.py). Missing helm fails the test in CI and
    skips it only on a developer machine that has not fetched it yet.
    """
    helm = _real_helm()
    if helm is None:
        if os.environ.get("CI"):
            pytest.fail(
                "the real helm binary is required in CI: run tests/tools/fetch_helm.py "
                "(Linux) or put helm on PATH / in TRACEBLOC_TEST_HELM"
            )
        pytest.skip("real helm not available: run python tests/tools/fetch_helm.py")
    return helm


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line for the real-cluster suite, so a skipped or missing suite is never silent."""
    counts: dict[str, int] = {}
    reasons: set[str] = set()
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            if "real_cluster" not in getattr(report, "keywords", {}):
                continue
            if outcome == "passed" and report.when != "call":
                continue
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome == "skipped" and isinstance(report.longrepr, tuple):
                reasons.add(str(report.longrepr[2]).removeprefix("Skipped: "))
    if not counts:
        return
    said = ", ".join(f"{n} {outcome}" for outcome, n in counts.items())
    terminalreporter.write_line(f"real-cluster suite (real kube-apiserver, kubectl, helm): {said}")
    for reason in sorted(reasons):
        terminalreporter.write_line(f"  skipped because: {reason}")


# --- the machine the suite runs on is left as it was ------------------------------------------
# CI runs as root: an engine started without the test seams (tests/fakes/runtime_host.py)
# would write the real /etc. The places the engine writes are snapshotted when the session
# starts (names, types, sizes, mtimes, link targets; bounded, unreadable ones skipped) and
# compared when it ends: any change fails the run, naming the paths.
ENGINE_ETC = (
    "/etc/modules-load.d",
    "/etc/systemd/system/docker.service.d",
    "/etc/apt/sources.list.d",
    "/etc/apt/keyrings",
    "/etc/yum.repos.d",
    "/etc/docker",
)
ETC_LIMIT = 20000

EtcState = dict[str, tuple[int, int, int, str]]
_etc_at_start: EtcState | None = None


def etc_state(roots: tuple[str, ...] = ENGINE_ETC, limit: int = ETC_LIMIT) -> EtcState:
    state: EtcState = {}
    stack = list(roots)
    while stack and len(state) < limit:
        path = stack.pop()
        try:
            found = os.lstat(path)
            target = os.readlink(path) if stat.S_ISLNK(found.st_mode) else ""
        except OSError:
            continue  # absent or unreadable: nothing recorded (appearing later is a change)
        state[path] = (stat.S_IFMT(found.st_mode), found.st_size, found.st_mtime_ns, target)
        if stat.S_ISDIR(found.st_mode):
            try:
                stack += [os.path.join(path, name) for name in sorted(os.listdir(path))]
            except OSError:
                continue
    return state


def etc_changes(before: EtcState, after: EtcState) -> list[str]:
    return sorted(
        [f"appeared: {p}" for p in after.keys() - before.keys()]
        + [f"removed: {p}" for p in before.keys() - after.keys()]
        + [f"changed: {p}" for p in before.keys() & after.keys() if before[p] != after[p]]
    )


def watched() -> tuple[str, ...]:
    """ENGINE_ETC, or (the check's own test: tests/test_etc_guard.py) the folders named."""
    named = os.environ.get("TB_TEST_ETC_WATCH", "")
    return tuple(named.split(os.pathsep)) if named else ENGINE_ETC


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. The tests mostly wait (on fake tools started as
    processes, terminals, deadlines), so a core serves two; measured on 2 cores: 8:16 with
    2 workers, 6:21 with 4 (tests/benchmarks/README.md). TB_TEST_WORKERS overrides."""
    given = os.environ.get("TB_TEST_WORKERS", "").strip()
    return int(given) if given.isdigit() and int(given) > 0 else 2 * (os.cpu_count() or 1)


def pytest_sessionstart(session: pytest.Session) -> None:
    global _etc_at_start
    if sys.platform != "win32":
        _etc_at_start = etc_state(watched())


def _stop_test_gpg_agents(session: pytest.Session) -> None:
    """gpg starts an agent per throwaway GNUPGHOME (the real-apt and OpenPGP tests); the
    ones whose home lies under this session's temporary directory (one xdist worker's, not
    another's still running) end with it."""
    import psutil

    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    try:
        ours = str(factory.getbasetemp()) + os.sep
    except (OSError, ValueError):
        return
    for process in psutil.process_iter(["name", "cmdline"]):
        try:
            line = process.info["cmdline"] or []
            if process.info["name"] == "gpg-agent" and any(a.startswith(ours) for a in line):
                process.kill()
        except psutil.Error:
            continue


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _stop_test_gpg_agents(session)
    if _etc_at_start is None:
        return
    changes = etc_changes(_etc_at_start, etc_state(watched()))
    if not changes:
        return
    said = (
        "the test run changed the machine's /etc where the engine writes (a test started "
        "the engine without the seams of tests/fakes/runtime_host.py?):\n  "
        + "\n  ".join(changes[:50])
    )
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(said, red=True)
    else:
        sys.stderr.write(said + "\n")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _engine_in_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """`cluster.run` runs the engine in this process unless the test is marked `subprocess`."""
    from tests.fakes import cluster as cluster_module

    cluster_module.IN_PROCESS = request.node.get_closest_marker("subprocess") is None
    yield
    cluster_module.IN_PROCESS = False
