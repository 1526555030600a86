"""What `plan` shows is what `install` does; the operator sees the target; exit codes scripts
can trust. The CLI as a process: fake kubectl/helm on PATH, a loopback backend, a pty where a
terminal matters.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path, PurePath

import pytest
import yaml

from tests.fakes import workloads
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, installer_command, node, release_row
from tests.fakes.mirror import PLATFORM, nothing_to_download
from tests.test_cli_install import (
    CA_PEM,
    CLIENT_ID,
    env_for,
    fresh,
    log_file,
    mutations,
    upgrade_calls,
    values_file,
)

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
SOURCE_ONLY = pytest.mark.skipif(
    bool(os.environ.get("TB_INSTALLER_BIN")), reason="inspects the Python process"
)


def reinstall(cluster: FakeCluster, values: dict[str, object] | None = None) -> FakeCluster:
    fresh(cluster).installed(release_row())
    cluster.values_of("tracebloc", "tracebloc", values or {"clientId": CLIENT_ID})
    return cluster.status_of("tracebloc", "deployed")


# --- plan refuses what install refuses ---------------------------------------------------


@pytest.mark.parametrize("command", ["plan", "install"])
@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        pytest.param("TB_HELM_TIMEOUT_MIN", "10m", id="helm-timeout-with-a-unit"),
        pytest.param("TB_METRICS_WAIT_S", "-1", id="negative-metrics-wait"),
        pytest.param("TRACEBLOC_SKIP_PREFLIGHT", "maybe", id="skip-preflight-not-a-yes-or-no"),
        pytest.param("PF_MIN_CPU", "two", id="preflight-cpu-not-a-number"),
        pytest.param("PF_MIN_MEM_GB", "lots", id="preflight-memory-not-a-number"),
        pytest.param("TRACEBLOC_BACKEND_URL", "http://api.example.com/", id="backend-plain-http"),
        pytest.param("TRACEBLOC_CA_BUNDLE", "NOT-PEM", id="ca-bundle-not-pem"),
        pytest.param(
            "TB_SET_CONTEXT_NAMESPACE", "sometimes", id="context-namespace-not-a-yes-or-no"
        ),
    ],
)
def test_plan_rejects_every_setting_install_rejects(
    cluster: FakeCluster, backend: BackendServer, command: str, variable: str, raw: str
) -> None:
    fresh(cluster)
    if raw == "NOT-PEM":
        bundle = cluster.root / "ca.txt"
        bundle.write_text("this is not a certificate\n", encoding="utf-8")
        raw = str(bundle)
    env = env_for(backend, **{variable: raw})
    env.pop("TRACEBLOC_SKIP_PREFLIGHT") if variable != "TRACEBLOC_SKIP_PREFLIGHT" else None
    result = cluster.run(command, *(["--yes"] if command == "install" else []), "--json", **env)

    assert result.returncode == 2, result.stderr
    assert variable in result.stderr
    assert "Traceback" not in result.stderr
    assert json.loads(result.stdout)["exit"] == 2
    assert cluster.calls() == []  # found before anything is read or asked
    assert backend.requests == []


def test_a_good_ca_bundle_is_accepted_by_both(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster)
    bundle = cluster.root / "ca.pem"
    bundle.write_text(CA_PEM, encoding="utf-8")
    result = cluster.run("plan", **env_for(backend, TRACEBLOC_CA_BUNDLE=str(bundle)))
    assert result.returncode == 0, result.stderr


# --- plan reaches install's verdict from the same read ------------------------------------


@pytest.mark.parametrize(
    ("setup", "said"),
    [
        pytest.param(
            lambda c: c.values_of("tracebloc", "tracebloc", {"clientId": "someone-else"}),
            "another tracebloc client (someone-else)",
            id="another-client",
        ),
        pytest.param(
            lambda c: c.on("helm", "get", "values", rc=1, stderr="Error: secrets is forbidden\n"),
            "could not read the values of client release",
            id="unreadable-release",
        ),
    ],
)
def test_plan_exits_3_when_install_would_refuse(
    cluster: FakeCluster, backend: BackendServer, setup: object, said: str
) -> None:
    fresh(cluster).installed(release_row()).status_of("tracebloc", "deployed")
    setup(cluster)  # type: ignore[operator]

    planned = cluster.run("plan", "--json", **env_for(backend))
    text = cluster.run("plan", **env_for(backend))
    installed = cluster.run("install", "--yes", "--json", **env_for(backend))

    assert planned.returncode == text.returncode == installed.returncode == 3
    doc = json.loads(planned.stdout)
    assert doc["verdict"]["action"] == "refused"
    assert said in doc["verdict"]["reason"]
    assert doc["exit"] == 3 and doc["ok"] is False
    assert said in text.stdout
    failure = json.loads(installed.stdout)
    assert failure["ok"] is False and failure["exit"] == 3
    assert failure["reason"] == doc["verdict"]["reason"]
    assert mutations(cluster) == []


def test_plan_verdict_for_an_upgrade_names_the_recovery(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    reinstall(cluster).status_of("tracebloc", "pending-upgrade")
    doc = cluster.run_json("plan", **env_for(backend))
    assert doc["verdict"]["action"] == "upgrade"
    assert doc["verdict"]["recovery"] == {"status": "pending-upgrade", "verb": "rollback"}
    assert doc["exit"] == 0


def test_with_an_override_plan_still_reads_the_release_and_writes_installs_bytes(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    # The installed release carries MySQL 5.7 (its data is there): the override changes the
    # size, not that. Without the release read, plan would pick by architecture.
    reinstall(cluster, {"clientId": CLIENT_ID, "env": {"RESOURCE_LIMITS": "cpu=3,memory=12Gi"}})
    env = env_for(backend, TRACEBLOC_TRAINING_RESOURCES="cpu=6,memory=20Gi")
    planned = tmp_path / "planned.yaml"

    plan = cluster.run("plan", "--json", "--values-out", str(planned), **env)
    result = cluster.run("install", "--yes", **env)

    assert plan.returncode == 0, plan.stderr
    assert result.returncode == 0, result.stderr
    assert json.loads(plan.stdout)["release"]["state"] == "present"
    assert json.loads(plan.stdout)["mysql"]["engine"] == "5.7"
    assert values_file(cluster).read_bytes() == planned.read_bytes()
    # The override replaces the size only; the site decisions still come from the nodes,
    # read once by plan and once by install.
    assert len([a for a in cluster.calls("kubectl") if a[:2] == ["get", "nodes"]]) == 2


def test_plan_uses_the_saved_credentials_install_yes_would_use(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    fresh(cluster)
    assert cluster.run("install", "--yes", **env_for(backend)).returncode == 0
    env = env_for(backend)
    del env["TRACEBLOC_CLIENT_ID"], env["TRACEBLOC_CLIENT_PASSWORD"]
    planned = tmp_path / "planned.yaml"

    plan = cluster.run("plan", "--values-out", str(planned), **env)
    again = cluster.run("install", "--yes", **env)

    assert plan.returncode == 0 and again.returncode == 0, plan.stderr + again.stderr
    assert planned.read_bytes() == values_file(cluster).read_bytes()


def test_values_out_into_a_missing_directory_is_bad_input(cluster: FakeCluster) -> None:
    fresh(cluster)
    target = cluster.root / "no" / "such" / "dir" / "values.yaml"
    result = cluster.run("plan", "--values-out", str(target))
    assert result.returncode == 2
    assert "does not exist" in result.stderr
    assert not (cluster.root / "no").exists()


# --- the operator sees and confirms the target ---------------------------------------------


def _remote(cluster: FakeCluster) -> FakeCluster:
    return cluster.kube_target("prod-eu", "https://k8s.prod.example.com:6443")


@POSIX_ONLY
@pytest.mark.parametrize(("answer", "installs"), [("y", True), ("n", False), ("", False)])
def test_interactive_install_shows_the_target_and_asks_first(
    cluster: FakeCluster, backend: BackendServer, answer: str, installs: bool
) -> None:
    from tests.fakes.terminal import Pty

    _remote(fresh(cluster))
    with Pty.spawn(["install"], env=cluster.env(**env_for(backend)), cwd=cluster.root) as term:
        term.expect("Install? [y/N]")
        term.send("d")  # the details, then the question again
        term.expect("Install? [y/N]")
        shown = term.screen()
        assert mutations(cluster) == []  # nothing changed while the question is open
        term.send(answer)
        code = term.wait(timeout=60)
        screen = term.screen()

    for text in (
        "kube context:   prod-eu (API server https://k8s.prod.example.com:6443)",
        "namespace:      tracebloc (release tracebloc)",
        "chart:          tracebloc/client, version the newest in the repository",
        "training size:  cpu=7,memory=13Gi (sized by the installer",
        "provenance installer",
        "kubectl config set-context",
    ):
        assert text in shown
    if installs:
        assert code == 0, screen
        assert len(upgrade_calls(cluster)) == 1
    else:
        assert code == 1, screen
        assert "Nothing was changed." in screen and "error:" not in screen
        assert mutations(cluster) == []
        assert not values_file(cluster).exists()


def test_yes_shows_the_target_without_asking(cluster: FakeCluster, backend: BackendServer) -> None:
    _remote(fresh(cluster))
    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    assert "prod-eu (API server https://k8s.prod.example.com:6443)" in result.stderr
    assert "Install?" not in result.stderr


def test_a_local_chart_shows_its_version(cluster: FakeCluster, backend: BackendServer) -> None:
    from tests.fakes.cluster import REPO

    fresh(cluster)
    chart = REPO / "tests" / "chart"
    version = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))["version"]
    cluster.on("helm", "upgrade", "--dry-run=server", stdout="STATUS: pending-install\n")
    doc = cluster.run_json("plan", "--chart", str(chart), **env_for(backend))
    assert doc["target"]["chart_version"] == str(version)


@pytest.mark.parametrize(
    "keep",
    [
        pytest.param({"TB_SET_CONTEXT_NAMESPACE": "0"}, id="variable"),
        pytest.param({"flag": "--keep-context-namespace"}, id="flag"),
    ],
)
def test_the_context_namespace_change_is_shown_and_can_be_turned_off(
    cluster: FakeCluster, backend: BackendServer, keep: dict[str, str]
) -> None:
    fresh(cluster)
    planned = cluster.run_json("plan", **env_for(backend))
    assert planned["target"]["set_context_namespace"] is True
    flags = [keep.pop("flag")] if "flag" in keep else []

    kept = cluster.run_json("plan", *flags, **env_for(backend, **keep))
    result = cluster.run("install", "--yes", *flags, **env_for(backend, **keep))

    assert kept["target"]["set_context_namespace"] is False
    assert result.returncode == 0, result.stderr
    assert not [a for a in cluster.calls("kubectl") if a[:2] == ["config", "set-context"]]
    assert "context namespace: left as it is" in result.stdout


def test_the_summary_says_the_context_namespace_was_set(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    result = cluster.run("install", "--yes", **env_for(backend))
    assert "context namespace: set to tracebloc" in result.stdout


def test_preflight_checks_the_remote_clusters_node_not_this_machine(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    # Floors no laptop meets: on a remote cluster only its largest node is measured.
    _remote(cluster.nodes(node("big", "64", "2000Gi"), node("small", "2", "4Gi")))
    cluster.installed().installable()
    _remote(cluster)
    env = env_for(backend, PF_MIN_MEM_GB="1000", PF_MIN_CPU="32", PF_MIN_DISK_GB="1000000000")
    del env["TRACEBLOC_SKIP_PREFLIGHT"]

    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 0, result.stderr
    assert "is not on this machine" in result.stderr
    assert "logical CPUs" not in result.stderr  # this machine's CPU count is no floor


def test_preflight_on_a_remote_cluster_fails_on_its_largest_node(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    _remote(cluster.nodes(node("tiny", "2", "2Gi")).installed().installable())
    env = env_for(backend)
    del env["TRACEBLOC_SKIP_PREFLIGHT"]
    result = cluster.run("install", "--yes", **env)
    assert result.returncode == 1, result.stderr
    assert "the largest node (tiny)" in result.stderr
    assert mutations(cluster) == [] and backend.requests == []


# --- failures say what is true, on the right cluster ---------------------------------------


def test_every_remedy_carries_the_runs_cluster_and_namespace(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    kubeconfig = cluster.root / "kube config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    fresh(cluster).on("helm", "upgrade", "--install", rc=1, stderr="Error: timed out\n")
    result = cluster.run(
        "install",
        "--yes",
        "--kubeconfig",
        str(kubeconfig),
        "--context",
        "prod-eu",
        "-n",
        "team-a",
        **env_for(backend),
    )

    assert result.returncode == 1
    flags = f"-n team-a --kubeconfig '{kubeconfig}' --kube-context prod-eu"
    commands = [line for line in result.stderr.splitlines() if "helm " in line]
    assert commands
    for verb in ("status", "history", "rollback", "uninstall"):
        assert f"helm {verb} team-a {flags}" in result.stderr
    assert (
        f"tracebloc-installer --kubeconfig '{kubeconfig}' --context prod-eu -n team-a"
        in result.stderr
    )


@pytest.mark.parametrize("flags", [(), ("--json",)], ids=["text", "json"])
def test_an_unreachable_cluster_is_exit_1_before_credentials(
    cluster: FakeCluster, backend: BackendServer, flags: tuple[str, ...]
) -> None:
    refused = (
        "The connection to the server 10.0.0.1:6443 was refused - did you specify the "
        "right host or port?\n"
    )
    fresh(cluster).kube_target("prod-eu", "https://10.0.0.1:6443")
    cluster.on("kubectl", "get", "nodes", rc=1, stderr=refused)
    cluster.on(
        "helm",
        "list",
        rc=1,
        stderr="Error: Kubernetes cluster unreachable: Get "
        '"https://10.0.0.1:6443/version": dial tcp 10.0.0.1:6443: connect: connection '
        "refused\n",
    )
    env = env_for(backend)
    del env["TRACEBLOC_CLIENT_ID"], env["TRACEBLOC_CLIENT_PASSWORD"]  # would be exit 2

    result = cluster.run("install", *flags, **env)

    assert result.returncode == 1, result.stderr
    assert "cannot reach the cluster" in result.stderr
    assert "context 'prod-eu', API server https://10.0.0.1:6443" in result.stderr
    for check in ("--context", "KUBECONFIG", "VPN", "HTTPS_PROXY"):
        assert check in result.stderr
    assert backend.requests == []
    assert mutations(cluster) == []
    if flags:
        assert json.loads(result.stdout)["exit"] == 1
    plan = cluster.run_json("plan", **env)
    assert plan["verdict"]["action"] == "unreachable"


@pytest.mark.parametrize("where", ["HOST_DATA_DIR", "HOME"])
def test_an_unwritable_data_directory_stops_before_any_change(
    cluster: FakeCluster, backend: BackendServer, where: str
) -> None:
    # A file stands where the data directory goes: under the home, its parent present, so the
    # path rules pass and only trying to write there finds it unusable (root included).
    fresh(cluster)
    if where == "HOST_DATA_DIR":
        blocker = cluster.home / "a-file"
        env = env_for(backend, HOST_DATA_DIR=str(blocker))
    else:
        blocker = cluster.home / ".tracebloc"  # the default under HOME
        env = env_for(backend)
        where = "USERPROFILE" if sys.platform == "win32" else "HOME"
    blocker.write_text("not a directory\n", encoding="utf-8")

    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: {where}: cannot write to {blocker}")
    assert cluster.calls() == [] and backend.requests == []
    assert blocker.read_text(encoding="utf-8") == "not a directory\n"


@pytest.mark.parametrize("where", ["HOST_DATA_DIR", "HOME"])
def test_a_data_directory_with_no_parent_stops_naming_the_variable_that_chose_it(
    cluster: FakeCluster, backend: BackendServer, where: str
) -> None:
    fresh(cluster)
    blocker = (cluster.home if where == "HOST_DATA_DIR" else cluster.root) / "a-file"
    blocker.write_text("not a directory\n", encoding="utf-8")
    if where == "HOST_DATA_DIR":
        env = env_for(backend, HOST_DATA_DIR=str(blocker / "sub"))
    else:
        env = env_for(backend, HOME=str(blocker / "sub"))
        if sys.platform == "win32":
            env["USERPROFILE"] = env.pop("HOME")
            where = "USERPROFILE"

    result = cluster.run("install", "--yes", **env)

    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: {where}")
    assert "does not exist, and neither does the directory it would be created in" in result.stderr
    assert cluster.calls() == [] and backend.requests == []


def test_install_json_is_one_object_on_success(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    result = cluster.run("install", "--yes", "--json", **env_for(backend))
    doc = json.loads(result.stdout)  # exactly one document: json.loads rejects trailing data
    assert doc["ok"] is True and doc["exit"] == 0
    assert doc["context"] == "k3d-tracebloc"


def test_install_json_on_a_bad_flag(cluster: FakeCluster) -> None:
    result = cluster.run("install", "--json", "--no-such-flag")
    assert result.returncode == 2
    assert json.loads(result.stdout)["exit"] == 2


# --- stdout that cannot be written, and Ctrl-C -----------------------------------------------


def _run_with_stdout(
    cluster: FakeCluster, stdout: object, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*installer_command(), *args],
        env=cluster.env(**env),
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_is_one_line(cluster: FakeCluster) -> None:
    cluster.nodes(node("laptop")).release_absent()
    with open("/dev/full", "w") as full:
        result = _run_with_stdout(cluster, full, "probe", "--json")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: cannot write to standard output: No space left on device"
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="closing fd 1 in the child is POSIX")
def test_a_closed_stdout_is_one_line(cluster: FakeCluster) -> None:
    cluster.nodes(node("laptop")).release_absent()
    result = subprocess.run(
        [*installer_command(), "probe"],
        env=cluster.env(),
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("error: cannot write to standard output")


@pytest.mark.skipif(sys.platform == "win32", reason="a pipe closed by its reader is POSIX here")
def test_a_reader_that_goes_away_gets_silence(cluster: FakeCluster) -> None:
    cluster.nodes(*(node(f"node-{i}") for i in range(2000))).release_absent()
    child = subprocess.Popen(
        [*installer_command(), "probe", "--json"],
        env=cluster.env(),
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.read(10)
    child.stdout.close()  # `| head -c 10`
    err = child.stderr.read()
    assert child.wait(timeout=60) == 1
    assert err == b""


PACKAGE = Path(__file__).resolve().parents[1] / "installer"
SIGNALS_KILL_ON_WINDOWS = pytest.mark.skipif(
    sys.platform == "win32", reason="os.kill with SIGINT/SIGHUP ends a Windows process outright"
)


def _disposed(number: int, action: signal.Handlers) -> Callable[[], None]:
    """For preexec_fn: SIG_IGN and SIG_DFL are inherited across exec."""
    return lambda: signal.signal(number, action)


def _ours(frame: str) -> bool:
    """A traceback frame in the engine's package: the source tree's, or the frozen
    archive's (`installer/cli.py`, relative)."""
    path = PurePath(frame)
    return path.is_relative_to(PACKAGE) if path.is_absolute() else path.parts[:1] == ("installer",)


@SIGNALS_KILL_ON_WINDOWS
@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2, 0.4])
def test_an_early_ctrl_c_stops_the_run(
    cluster: FakeCluster, backend: BackendServer, delay: float
) -> None:
    fresh(cluster).on("kubectl", "get", "nodes", sleep=5)
    # As from a terminal, whatever this test runner's own SIGINT is (a shell without job
    # control starts `cmd &` with it ignored, and the engine keeps an ignored one).
    child = subprocess.Popen(
        [*installer_command(), "install", "--yes"],
        env=cluster.env(**env_for(backend)),
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_disposed(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode != 0, err  # stopped, whenever it came: never a success
    assert upgrade_calls(cluster) == []
    # A Ctrl-C before the first line of ours ends the run the way Python, runpy or the
    # frozen loader ([PYI-...] lines, exit 1 or 255) end it; from our first line on, it is 130.
    frames = re.findall(r'^\s*File "([^"]+)"', err, re.MULTILINE)
    starting = any(words in err for words in ("Traceback", "[PYI-", "Fatal Python error"))
    if starting and not any(_ours(frame) for frame in frames):
        return
    assert child.returncode in (130, -signal.SIGINT), err
    assert "Traceback" not in err


@SIGNALS_KILL_ON_WINDOWS
@pytest.mark.parametrize("name", ["SIGINT", "SIGHUP"])
def test_a_signal_the_parent_ignores_stays_ignored(
    cluster: FakeCluster, backend: BackendServer, name: str
) -> None:
    """`cmd &` in sh ignores SIGINT; `nohup` ignores SIGHUP: the run goes on through them."""
    number = getattr(signal, name)
    fresh(cluster).on("kubectl", "get", "nodes", sleep=2)
    child = subprocess.Popen(
        [*installer_command(), "install", "--yes"],
        env=cluster.env(**env_for(backend)),
        cwd=cluster.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_disposed(number, signal.SIG_IGN),
    )
    cluster.sleeping_call("get", "nodes", tool="kubectl", timeout=60)  # reading the cluster
    child.send_signal(number)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert len(upgrade_calls(cluster)) == 1


# CPython can turn a KeyboardInterrupt raised inside an import into another error (seen: a
# TypeError, "expected a message argument", from a Ctrl-C 0.4 s into the frozen binary). A
# command stands in for that import here, in a child Python of its own.
_TORN = """
import dataclasses, os, signal, sys, time
from installer import cli
def torn(args, env, redactor):
    try:
        if {signal}:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    except KeyboardInterrupt as exc:
        exc.remedy = "the wait was cut short; run the installer again"
        if {inside}:
            raise TypeError("expected a message argument")
    raise TypeError("expected a message argument")
cli.COMMANDS[:] = [dataclasses.replace(c, run=torn) if c.name == "probe" else c
                   for c in cli.COMMANDS]
sys.exit(cli.main(["probe"]))
"""


@SIGNALS_KILL_ON_WINDOWS
@pytest.mark.parametrize(
    ("after_a_ctrl_c", "inside", "code", "said"),
    [
        pytest.param(True, False, 130, "error: interrupted", id="after-ctrl-c-is-the-interruption"),
        pytest.param(
            True,
            True,
            130,
            "error: interrupted\n  the wait was cut short",
            id="while-handling-it-keeps-its-remedy",
        ),
        pytest.param(
            False, False, 1, "error: internal error: TypeError", id="alone-is-an-internal-error"
        ),
    ],
)
def test_an_error_on_the_way_out_of_a_ctrl_c_is_reported_as_the_interruption(
    tmp_path: Path, after_a_ctrl_c: bool, inside: bool, code: int, said: str
) -> None:
    script = _TORN.format(signal=after_a_ctrl_c, inside=inside)
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path.cwd(),
        env={
            **os.environ,
            "HOME": str(tmp_path),
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        },
    )
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith(said), result.stderr
    assert "Traceback" not in result.stderr


# --- smaller truths -----------------------------------------------------------------------


def test_verbose_prints_each_line_once_in_one_format(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    result = cluster.run("install", "--yes", "--verbose", **env_for(backend))
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    stamped = re.compile(r"^\[\d\d:\d\d:\d\d\] ")
    assert all(stamped.match(line) or line.startswith("  ") for line in lines), result.stderr
    bodies = [stamped.sub("", line) for line in lines]
    assert any(body.startswith("run: helm upgrade --install") for body in bodies)
    # No message twice: neither as a progress line and again as its log record. (Two tool
    # calls may well end alike: "exit 0: kubectl in 0.16s".)
    said = [body for body in bodies if not body.startswith(("exit 0:", "run:"))]
    assert len(said) == len(set(said)), result.stderr
    assert bodies.count("Reading the cluster ...") == 1
    assert not any(body.startswith(("INFO", "DEBUG", "step:")) for body in bodies)


def test_a_wait_that_runs_out_says_how_long_it_waited(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).on(
        "kubectl",
        "get",
        "apiservice",
        stdout=json.dumps({"status": {"conditions": [{"type": "Available", "status": "False"}]}}),
    )
    started = time.monotonic()
    result = cluster.run("install", "--yes", **env_for(backend, TB_METRICS_WAIT_S="2"))
    waited = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert waited >= 2
    said = re.search(r"is registered but not Available after (\d+)s of waiting", result.stderr)
    assert said is not None, result.stderr
    assert 2 <= int(said.group(1)) <= math.ceil(waited)  # the time it took, as measured
    assert "Waiting for the metrics API (up to 2s): warning" in result.stderr  # not "done"


@POSIX_ONLY
def test_a_failed_step_never_gets_a_check_mark(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    from tests.fakes.backend_server import Reply
    from tests.fakes.terminal import Pty

    fresh(cluster)
    backend.script.append(Reply(400, b'{"non_field_errors": ["Unable to log in"]}'))
    env = cluster.env(**env_for(backend))
    del env["TB_PLAIN"]
    with Pty.spawn(["install", "--yes"], env=env, cwd=cluster.root) as term:
        code = term.wait(timeout=60)
        screen = term.screen()
    assert code == 2, screen
    assert "✗\x1b[0m Checking the client credentials" in screen
    assert "✓\x1b[0m Checking the client credentials" not in screen


@POSIX_ONLY
def test_the_spinner_survives_a_resize(cluster: FakeCluster, backend: BackendServer) -> None:
    from tests.fakes.terminal import Pty

    namespace = "a-namespace-with-a-rather-long-name-for-the-test"
    fresh(cluster).on("helm", "upgrade", "--install", sleep=2.5)
    cluster.workloads(*workloads.client(release=namespace, namespace=namespace))
    env = cluster.env(**env_for(backend))
    del env["TB_PLAIN"]
    with Pty.spawn(["install", "--yes", "-n", namespace], env=env, cwd=cluster.root) as term:
        term.resize(24, 200)
        term.expect("Installing the tracebloc client")
        term.resize(24, 30)
        mark = len(term.seen)
        code = term.wait(timeout=60)
        after = term.seen[mark:].decode("utf-8", errors="replace")
    assert code == 0, after[-1500:]
    frames = [part for part in re.split(r"[\r\n]", after) if part.startswith(tuple("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"))]
    assert frames, after
    # The frame in flight when the size changed may be long; every later one fits.
    assert all(len(frame.rstrip(" ")) <= 29 for frame in frames[1:]), frames


@SOURCE_ONLY
def test_probe_with_an_override_imports_no_yaml_or_rendering(cluster: FakeCluster) -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "installer", "probe", "--json"],
        env=cluster.env(TRACEBLOC_TRAINING_RESOURCES="cpu=4,memory=16Gi"),
        cwd=cluster.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "installer.commands.probe" in imported
    assert not {m for m in imported if m == "yaml" or m.startswith("yaml.")}
    assert "installer.decide.render" not in imported
    assert cluster.calls() == []


def test_the_log_is_where_help_says(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster)
    cluster.run("install", "--yes", **env_for(backend))
    assert log_file(cluster).exists()
    assert "HOST_DATA_DIR/install.log" in cluster.run("--help").stdout


@pytest.mark.parametrize("tool", ["helm", "kubectl"])
def test_plan_without_a_tool_answers_what_install_would_lack(
    cluster: FakeCluster, backend: BackendServer, tool: str
) -> None:
    # Not on PATH and not to be had: no verified checksum pinned, an empty mirror.
    env = env_for(backend, **nothing_to_download(cluster.root, PLATFORM))
    fresh(cluster).remove(tool)

    doc = cluster.run_json("plan", **env)

    assert doc["verdict"]["action"] == "missing-tools"
    assert doc["verdict"]["reason"].startswith(f"{tool}: {tool} v")
    assert "cannot be downloaded" in doc["verdict"]["reason"]
    assert doc["tools"][tool]["source"] is None
    result = cluster.run("install", "--yes", **env)
    assert result.returncode == 1, result.stderr
    assert f"error: {tool} is not available: {tool} v" in result.stderr
    assert "cannot be downloaded" in result.stderr
    assert mutations(cluster) == [] and backend.requests == []


@pytest.mark.parametrize("tool", ["helm", "kubectl"])
def test_plan_without_a_tool_it_can_fetch_neither_promises_nor_refuses(
    cluster: FakeCluster, backend: BackendServer, tool: str
) -> None:
    # install would download the pinned tool and only then read the cluster: nothing is
    # lacking, and what install will decide is not known yet.
    fresh(cluster).remove(tool)

    doc = cluster.run_json("plan", **env_for(backend))

    assert doc["verdict"]["action"] == "fetch-tools-first"
    assert tool in doc["verdict"]["reason"]
    assert doc["tools"][tool]["source"] == "download" and doc["tools"][tool]["sha256"]
    assert not (cluster.home / ".tracebloc" / "bin").exists()  # plan fetched nothing
