"""`install` end to end: the CLI as a process, fake kubectl/helm on PATH, and a loopback HTTP
server standing in for the tracebloc backend.

Each test scripts a cluster state, runs the CLI, and asserts the exit code, what the operator
reads, the files on disk, and the exact helm/kubectl calls — in order where order matters.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import stat
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.fakes import workloads
from tests.fakes.backend_server import BackendServer, Reply
from tests.fakes.cluster import FakeCluster, node, release_row
from tests.fakes.processes import gone_soon

CLIENT_ID = "client-7f3a"
PASSWORD = "Cl1ent-P4ss:#w0rd"
REGISTRY_PASSWORD = "Reg1stry-S3cret@x"
PROXY_PASSWORD = "Pr0xy-S3cret:@y"
SECRETS = (PASSWORD, REGISTRY_PASSWORD, PROXY_PASSWORD)
# A self-signed root, as an enterprise CA would be handed out (certificate only, no key).
CA_PEM = """\
-----BEGIN CERTIFICATE-----
MIIDGzCCAgOgAwIBAgIUENB8QUmY+kKVsVKc4clplG7pBa0wDQYJKoZIhvcNAQEL
BQAwHDEaMBgGA1UEAwwRQ29ycCBUZXN0IFJvb3QgQ0EwIBcNMjYxMTI5MjMxNDE5
WhgPMjEyNjExMDUyMzE0MTlaMBwxGjAYBgNVBAMMEUNvcnAgVGVzdCBSb290IENB
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAviDXnTG1XBE66l0RhG8a
UthsEFvsRwZ8cZhWD50l7jddTyF1gw7CFyfW7lEm1GfZRh7Qa4ocM/18Hf6Rz1a6
D1ssraad8r+lwtntZpAf9vpw+Hrsd0qiaqoU7nF1ATvzvR+W7BZCN2aL+HfdtthG
B2sw2hV38HAr0oCtrD5kYgt+qpBywkJ0v1uNaXlYEq/++C7TcwXKfqy1a+bF6wyx
uRYTPCuL45xH97kfZaSbNnt7g7pyqdG2YrKl+bVrx7Sb4Ya8inIRdnZgV17sTaiw
nMnfWN55OX7PWIatYLubeZ05parklb0kAQ3NYWGURt36OZVwYczh8R5EW5q5vl74
hQIDAQABo1MwUTAdBgNVHQ4EFgQUsjL1gpxdg14nEXmrPCLfXo5Y2l0wHwYDVR0j
BBgwFoAUsjL1gpxdg14nEXmrPCLfXo5Y2l0wDwYDVR0TAQH/BAUwAwEB/zANBgkq
hkiG9w0BAQsFAAOCAQEAgANwy6MXui5ODnMXdic4ciSla7Om+5qxY1/eh+bgN1gf
xTkqaUTeUIWZ/ONZVvwqqm01Nar2PgDgTCZ9x9AUgbo8GH3FsrkXPpl1CcgvecmO
OEpUaXMz8y+ITDesxmt/diZ1dY2sdHgIBsf6RvGAnRDdvQOIS/ObX8BT12RBp831
WtgalSBOcJJl0FZCMgUJa62wgcgFs8Xt7FCNZU3BmGSDeacZyEAeFt0eUrsUYWVm
5VYQ55q3wsQATUrVErfE4kEd4IF/aMcXcr7zjfznlPfQsoPXcVyR6TzSt9EiUv7i
dH20Qs2+9QrXa6FohJgN0wGGMwzMen859hqAvKEJlA==
-----END CERTIFICATE-----
"""


def env_for(backend: BackendServer, **extra: str) -> dict[str, str]:
    """Credentials from the environment, the loopback backend, quick metrics wait."""
    base = {
        "TRACEBLOC_CLIENT_ID": CLIENT_ID,
        "TRACEBLOC_CLIENT_PASSWORD": PASSWORD,
        "TRACEBLOC_BACKEND_URL": backend.url,
        "TRACEBLOC_SKIP_PREFLIGHT": "1",
        "TB_METRICS_WAIT_S": "5",
        "TB_PLAIN": "1",
        "READY_TIMEOUT": "30",
    }
    base.update(extra)
    return base


READS = [
    "kubectl config view",
    "helm list --all-namespaces",
    "kubectl get nodes",
    "helm repo list",
    "kubectl get apiservice",
    "helm get values",
    "helm status tracebloc",
]


def fresh(cluster: FakeCluster) -> FakeCluster:
    return cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()


def values_file(cluster: FakeCluster) -> Path:
    return cluster.home / ".tracebloc" / "values.yaml"


def log_file(cluster: FakeCluster) -> Path:
    return cluster.home / ".tracebloc" / "install.log"


def verbs(cluster: FakeCluster) -> list[str]:
    """Each call as "<tool> <first two args>", in the order they were made; the version
    queries that pick the tools are left out (see test_cli_tools.py)."""
    return [
        f"{e['tool']} {' '.join(e['argv'][:2])}"
        for e in cluster.call_log()
        if e["argv"][:1] != ["version"]
    ]


def upgrade_calls(cluster: FakeCluster) -> list[list[str]]:
    return [argv for argv in cluster.calls("helm") if argv[:2] == ["upgrade", "--install"]]


def mutations(cluster: FakeCluster) -> list[list[str]]:
    """Every call that changes something: helm's changing verbs (a `repo list` is a read),
    and kubectl's context change."""
    changing = {"upgrade", "rollback", "uninstall", "install", "repo"}
    return [
        argv
        for argv in cluster.calls()
        if (argv and argv[0] in changing and argv[:2] != ["repo", "list"])
        or argv[:2] == ["config", "set-context"]
    ]


def assert_no_secret_leaked(cluster: FakeCluster, *texts: str) -> None:
    argvs = [" ".join(argv) for argv in cluster.calls()]
    log = log_file(cluster).read_text(encoding="utf-8") if log_file(cluster).exists() else ""
    for secret in SECRETS:
        for argv in argvs:
            assert secret not in argv
        assert secret not in log
        for text in texts:
            assert secret not in text


# --- a fresh machine -------------------------------------------------------------------


def test_fresh_install_runs_every_step_in_order(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    # First the tools are chosen (both at once, so in either order), then the work.
    assert sorted(e["tool"] for e in cluster.call_log()[:2]) == ["helm", "kubectl"]
    assert all(e["argv"][:1] == ["version"] for e in cluster.call_log()[:2])
    # Every read first, all at once (in any order); then the changes, in this order. A repo
    # just added needs no `helm repo update`: `repo add` downloaded its index.
    called = verbs(cluster)
    assert sorted(called[:7]) == sorted(READS)
    assert called[7:9] == ["helm repo add", "helm upgrade --install"]
    # The kube context is pointed while the first readiness poll is out (either first).
    assert sorted(called[9:]) == [
        "kubectl config set-context",
        "kubectl get deployments,statefulsets,daemonsets,pods,events",
    ]
    # The release asked for is read beside the list (a re-install then needs no second
    # round), but the list is the evidence: here the fake does not even answer that read.
    assert [a[:3] for a in cluster.calls("helm") if a[:2] == ["get", "values"]] == [
        ["get", "values", "tracebloc"]
    ]
    written = yaml.safe_load(values_file(cluster).read_text(encoding="utf-8"))
    assert written["clientId"] == CLIENT_ID
    assert written["clientPassword"] == PASSWORD
    assert written["env"]["RESOURCE_PROVENANCE"] == "installer"
    assert stat.S_IMODE(values_file(cluster).stat().st_mode) == 0o600 or sys.platform == "win32"
    assert upgrade_calls(cluster) == [
        [
            "upgrade",
            "--install",
            "tracebloc",
            "tracebloc/client",
            "--namespace",
            "tracebloc",
            "--create-namespace",
            "--cleanup-on-fail",
            "--values",
            str(values_file(cluster)),
        ]
    ]
    assert [r.fields["username"] for r in backend.requests] == [CLIENT_ID]
    assert "The tracebloc client is installed and connected." in result.stdout
    assert "namespace:      tracebloc" in result.stdout
    assert "(measured by the installer; installer)" in result.stdout
    assert str(log_file(cluster)) in result.stdout
    assert_no_secret_leaked(cluster, result.stdout, result.stderr)


def test_fresh_install_json_reports_the_outcome(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    result = cluster.run("install", "--yes", "--json", **env_for(backend))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["namespace"] == "tracebloc"
    assert doc["training"]["provenance"] == "installer"
    assert doc["values_file"] == str(values_file(cluster))
    assert doc["log_file"] == str(log_file(cluster))


def test_log_file_records_every_command_and_no_secret(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    proxy = f"http://ana:{PROXY_PASSWORD}@127.0.0.1:9"
    result = cluster.run(
        "install",
        "--yes",
        **env_for(
            backend,
            TRACEBLOC_REGISTRY_USERNAME="robot",
            TRACEBLOC_REGISTRY_PASSWORD=REGISTRY_PASSWORD,
            HTTPS_PROXY=proxy,
            NO_PROXY="127.0.0.1,localhost",
        ),
    )
    assert result.returncode == 0, result.stderr
    log = log_file(cluster).read_text(encoding="utf-8")
    for command in (
        "helm list",
        "kubectl get nodes",
        "helm repo add",
        "helm upgrade --install",
        "kubectl config set-context",
    ):
        assert command in log, command
    assert "exit 0" in log
    assert_no_secret_leaked(cluster, result.stdout, result.stderr)
    # The helm child got the proxy through its environment, never its argv.
    assert all(PROXY_PASSWORD not in " ".join(a) for a in cluster.calls())


def test_second_run_appends_to_the_log(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster)
    assert cluster.run("install", "--yes", **env_for(backend)).returncode == 0
    first = log_file(cluster).read_text(encoding="utf-8")
    assert cluster.run("install", "--yes", **env_for(backend)).returncode == 0
    second = log_file(cluster).read_text(encoding="utf-8")
    assert second.startswith(first) and len(second) > len(first)


# --- re-install ------------------------------------------------------------------------


def test_reinstall_keeps_a_user_marker_and_size(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).installed(release_row())
    cluster.values_of(
        "tracebloc",
        "tracebloc",
        {
            "clientId": CLIENT_ID,
            "env": {
                "RESOURCE_LIMITS": "cpu=3,memory=12Gi",
                "RESOURCE_REQUESTS": "cpu=3,memory=12Gi",
                "RESOURCE_PROVENANCE": "user",
            },
        },
    )
    cluster.status_of("tracebloc", "deployed")
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    written = yaml.safe_load(values_file(cluster).read_text(encoding="utf-8"))
    assert written["env"]["RESOURCE_LIMITS"] == "cpu=3,memory=12Gi"
    assert written["env"]["RESOURCE_PROVENANCE"] == "user"
    # One read of the installed release serves both the guard and the sizing.
    assert [a for a in cluster.calls("helm") if a[:2] == ["get", "values"]] == [
        ["get", "values", "tracebloc", "-n", "tracebloc", "-o", "json"]
    ]
    assert (
        "cpu=3,memory=12Gi (carried from the installed release, chosen by a person; user)"
        in result.stdout
    )
    assert not [a for a in cluster.calls("helm") if a[0] in ("rollback", "uninstall")]


def test_reinstall_carrying_the_installers_size_does_not_claim_it_was_measured(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """The size the installer chose last time is carried, not measured again: the summary
    says so, and "measured by the installer" only where this run measured."""
    fresh(cluster).installed(release_row())
    cluster.values_of(
        "tracebloc",
        "tracebloc",
        {
            "clientId": CLIENT_ID,
            "env": {"RESOURCE_LIMITS": "cpu=3,memory=10Gi", "RESOURCE_PROVENANCE": "installer"},
        },
    )
    cluster.status_of("tracebloc", "deployed")
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    assert (
        "cpu=3,memory=10Gi (carried from the installed release, chosen by the installer; installer)"
    ) in result.stdout
    assert "measured by the installer" not in result.stdout


def test_reinstall_keeps_an_unknown_marker(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster).installed(release_row())
    cluster.values_of(
        "tracebloc",
        "tracebloc",
        {
            "clientId": CLIENT_ID,
            "env": {"RESOURCE_LIMITS": "cpu=2,memory=6Gi", "RESOURCE_PROVENANCE": "unknown"},
        },
    )
    cluster.status_of("tracebloc", "deployed")
    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    written = yaml.safe_load(values_file(cluster).read_text(encoding="utf-8"))
    assert written["env"]["RESOURCE_PROVENANCE"] == "unknown"
    assert written["env"]["RESOURCE_LIMITS"] == "cpu=2,memory=6Gi"


def test_same_client_in_another_namespace_is_upgraded_in_place(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).installed(
        release_row("edge", "ml-edge"), release_row("web", "web", chart="nginx-1.0.0")
    )
    cluster.values_of("edge", "ml-edge", {"clientId": CLIENT_ID})
    cluster.status_of("edge", "deployed")
    cluster.workloads(*workloads.client(release="edge", namespace="ml-edge"))
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    [upgrade] = upgrade_calls(cluster)
    assert upgrade[2:4] == ["edge", "tracebloc/client"]
    assert upgrade[upgrade.index("--namespace") + 1] == "ml-edge"
    assert "upgrading it there" in result.stderr
    # Only client releases' values were read (and the one asked for, beside the list); the
    # nginx release is none of our business.
    assert sorted(a[2:5] for a in cluster.calls("helm") if a[:2] == ["get", "values"]) == [
        ["edge", "-n", "ml-edge"],
        ["tracebloc", "-n", "tracebloc"],
    ]


# --- the one-client guard: refusals ---------------------------------------------------


def test_a_different_client_is_refused_and_nothing_changes(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).installed(release_row())
    cluster.values_of("tracebloc", "tracebloc", {"clientId": "someone-else"})
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    assert "someone-else" in result.stderr
    assert "helm uninstall tracebloc -n tracebloc" in result.stderr
    assert "another machine" in result.stderr
    assert mutations(cluster) == []
    assert not values_file(cluster).exists()


def test_release_list_failing_is_refused_and_nothing_written(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).on("helm", "list", stderr="Error: Kubernetes cluster unreachable\n", rc=1)
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    assert "could not list the installed Helm releases" in result.stderr
    assert "cluster unreachable" in result.stderr
    assert mutations(cluster) == []
    assert not values_file(cluster).exists()


def test_unreadable_client_values_are_refused(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster).installed(release_row())
    cluster.on("helm", "get", "values", stderr="Error: secrets is forbidden\n", rc=1)
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    assert "could not read the values" in result.stderr
    assert "forbidden" in result.stderr
    assert mutations(cluster) == []


def test_another_chart_under_our_release_name_is_refused(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).installed(release_row(chart="postgresql-15.2.0"))
    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 3, result.stderr
    assert "postgresql-15.2.0" in result.stderr
    assert mutations(cluster) == []


# --- recovery of a wedged release -----------------------------------------------------


@pytest.mark.parametrize(
    ("status", "verb"),
    [
        pytest.param("pending-upgrade", "rollback", id="pending-upgrade-rolls-back"),
        pytest.param("pending-rollback", "rollback", id="pending-rollback-rolls-back"),
        pytest.param("pending-install", "uninstall", id="pending-install-uninstalls"),
        pytest.param("uninstalling", "uninstall", id="uninstalling-uninstalls"),
    ],
)
def test_wedged_release_is_recovered_before_the_upgrade(
    cluster: FakeCluster, backend: BackendServer, status: str, verb: str
) -> None:
    fresh(cluster).installed(release_row(status=status))
    cluster.values_of("tracebloc", "tracebloc", {"clientId": CLIENT_ID})
    cluster.status_of("tracebloc", status)
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    helm_verbs = [
        a[0] for a in cluster.calls("helm") if a[0] in ("rollback", "uninstall", "upgrade")
    ]
    assert helm_verbs == [verb, "upgrade"]
    [recovery] = [a for a in cluster.calls("helm") if a[0] == verb]
    assert recovery == [verb, "tracebloc", "-n", "tracebloc", "--wait", "--timeout", "5m"]


def test_recovery_failing_stops_with_the_manual_commands(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).installed(release_row(status="pending-upgrade"))
    cluster.values_of("tracebloc", "tracebloc", {"clientId": CLIENT_ID})
    cluster.status_of("tracebloc", "pending-upgrade")
    cluster.on("helm", "rollback", stderr="Error: no revision to roll back to\n", rc=1)
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 1
    assert "rollback of the wedged release failed" in result.stderr
    assert "helm uninstall tracebloc -n tracebloc" in result.stderr
    assert upgrade_calls(cluster) == []


def test_deployed_release_needs_no_recovery(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster).installed(release_row(status="failed"))
    cluster.values_of("tracebloc", "tracebloc", {"clientId": CLIENT_ID})
    cluster.status_of("tracebloc", "failed")
    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    assert not [a for a in cluster.calls("helm") if a[0] in ("rollback", "uninstall")]


# --- the chart repository -------------------------------------------------------------


def test_existing_repo_is_not_added_again(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster).on(
        "helm",
        "repo",
        "list",
        stdout=json.dumps([{"name": "tracebloc", "url": "https://tracebloc.github.io/client"}]),
    )
    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    repo = [a[:2] for a in cluster.calls("helm") if a[0] == "repo"]
    assert repo == [["repo", "list"], ["repo", "update"]]


def test_local_chart_needs_no_repo(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster)
    chart = Path(__file__).parent / "chart"
    result = cluster.run("install", "--yes", **env_for(backend, TRACEBLOC_CHART_PATH=str(chart)))
    assert result.returncode == 0, result.stderr
    assert not [a for a in cluster.calls("helm") if a[0] == "repo"]
    [upgrade] = upgrade_calls(cluster)
    assert upgrade[3] == str(chart)


def test_ca_bundle_reaches_helm_repo_add(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    ca = tmp_path / "corp-root.pem"
    ca.write_text(CA_PEM, encoding="ascii")
    fresh(cluster)
    result = cluster.run("install", "--yes", **env_for(backend, TRACEBLOC_CA_BUNDLE=str(ca)))
    assert result.returncode == 0, result.stderr
    [add] = [a for a in cluster.calls("helm") if a[:2] == ["repo", "add"]]
    assert add == [
        "repo",
        "add",
        "tracebloc",
        "https://tracebloc.github.io/client",
        "--ca-file",
        str(ca),
    ]


# --- helm failing, timing out, interrupted ---------------------------------------------


def test_helm_failure_exits_1_and_keeps_the_previous_values(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    previous = b"clientId: client-7f3a\nenv: {RESOURCE_LIMITS: cpu=1}\n"
    values_file(cluster).parent.mkdir(parents=True)
    values_file(cluster).write_bytes(previous)
    cluster.on(
        "helm",
        "upgrade",
        "--install",
        rc=1,
        stderr="Error: UPGRADE FAILED: context deadline exceeded\n",
    )
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 1
    assert "UPGRADE FAILED: context deadline exceeded" in result.stderr
    assert str(log_file(cluster)) in result.stderr
    assert "helm rollback tracebloc -n tracebloc" in result.stderr
    assert Path(str(values_file(cluster)) + ".bak").read_bytes() == previous


def test_helm_past_its_deadline_is_asked_to_stop_then_reported(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).on("helm", "upgrade", "--install", sleep=60, on_term=1)
    started = time.monotonic()
    result = cluster.run("install", "--yes", **env_for(backend, TB_HELM_TIMEOUT_MIN="0.03"))

    assert result.returncode == 1
    assert time.monotonic() - started < 40
    assert "did not finish within 0.03 min" in result.stderr
    assert "TB_HELM_TIMEOUT_MIN" in result.stderr
    [upgrade_pid] = [e["pid"] for e in cluster.call_log() if e["argv"][:1] == ["upgrade"]]
    assert [pid for pid, _ in cluster.signals()] == [upgrade_pid]
    assert gone_soon(upgrade_pid)


@pytest.mark.skipif(sys.platform == "win32", reason="signals to a child process are POSIX")
@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        pytest.param("SIGINT", 130, "interrupted", id="ctrl-c"),
        # 128 + the signal's number, as the bash twin's traps exited: wrappers read it.
        pytest.param("SIGTERM", 143, "terminated", id="terminated-by-a-service-manager"),
        pytest.param("SIGHUP", 129, "terminated", id="terminal-closed"),
    ],
)
def test_interrupt_during_helm_exits_128_plus_signal_and_leaves_values_intact(
    cluster: FakeCluster, backend: BackendServer, signum: str, code: int, said: str
) -> None:
    fresh(cluster).on("helm", "upgrade", "--install", sleep=60, on_term=1)
    running = cluster.start("install", "--yes", **env_for(backend))
    upgrade_pid = _wait_for_call(cluster, "upgrade")
    written = values_file(cluster).read_bytes()
    running.send_signal(getattr(signal, signum))
    out, err = running.communicate(timeout=30)

    assert running.returncode == code, err
    assert f"error: {said}" in err
    assert "run tracebloc-installer again" in err
    assert [pid for pid, _ in cluster.signals()] == [upgrade_pid]
    assert gone_soon(upgrade_pid)
    assert values_file(cluster).read_bytes() == written


def _wait_for_call(cluster: FakeCluster, verb: str, timeout: float = 30) -> int:
    """The pid of helm's `verb` once it sleeps, its signal handler installed."""
    return cluster.sleeping_call(verb, tool="helm", timeout=timeout)


# --- credentials -----------------------------------------------------------------------


def test_no_terminal_and_no_credentials_exits_2_quickly(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    env = env_for(backend)
    del env["TRACEBLOC_CLIENT_ID"], env["TRACEBLOC_CLIENT_PASSWORD"]
    started = time.monotonic()
    result = cluster.run("install", timeout=30, **env)  # interactive, but stdin is /dev/null

    assert result.returncode == 2
    assert time.monotonic() - started < 20
    assert "TRACEBLOC_CLIENT_ID" in result.stderr and "TRACEBLOC_CLIENT_PASSWORD" in result.stderr
    assert mutations(cluster) == []


def test_rejected_environment_credentials_stop_before_any_change(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    backend.script.append(Reply(400, b'{"non_field_errors": ["Unable to log in"]}'))
    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 2
    assert "TRACEBLOC_CLIENT_PASSWORD" in result.stderr
    assert mutations(cluster) == []
    assert "✓ Checking the client credentials" not in result.stderr
    assert "Checking the client credentials: failed" in result.stderr


def test_inactive_account_stops(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster)
    backend.script.append(Reply(401))
    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 1
    assert "not active" in result.stderr
    assert mutations(cluster) == []


def test_unreachable_backend_warns_and_continues(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    result = cluster.run(
        "install", "--yes", **env_for(backend, TRACEBLOC_BACKEND_URL="http://127.0.0.1:9/")
    )
    assert result.returncode == 0, result.stderr
    assert "warning: could not verify" in result.stderr
    assert "warning: warning" not in result.stderr
    assert "Warning" not in result.stderr  # no library warning reaches the operator
    assert len(upgrade_calls(cluster)) == 1


def test_non_interactive_rerun_reuses_the_saved_credentials(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    assert cluster.run("install", "--yes", **env_for(backend)).returncode == 0
    env = env_for(backend)
    del env["TRACEBLOC_CLIENT_ID"], env["TRACEBLOC_CLIENT_PASSWORD"]
    result = cluster.run("install", "--yes", **env)
    assert result.returncode == 0, result.stderr
    assert [r.fields["username"] for r in backend.requests] == [CLIENT_ID, CLIENT_ID]
    assert backend.requests[1].fields["password"] == PASSWORD


# --- preflight --------------------------------------------------------------------------


def test_preflight_failure_lists_problems_and_changes_nothing(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    env = env_for(backend, PF_MIN_DISK_GB="1000000000")
    del env["TRACEBLOC_SKIP_PREFLIGHT"]
    result = cluster.run("install", "--yes", **env)
    if sys.platform.startswith("linux"):
        assert result.returncode == 1, result.stderr
        assert "below the minimum" in result.stderr
        assert "TRACEBLOC_SKIP_PREFLIGHT" in result.stderr
        assert mutations(cluster) == []
        assert backend.requests == []  # before credentials are sent
    else:  # a disk shortfall only warns on macOS and Windows
        assert result.returncode == 0, result.stderr


# --- the interactive prompt, through a pseudo-terminal --------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_rejected_password_is_asked_again_on_the_terminal(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    from tests.fakes.terminal import Pty

    fresh(cluster)
    backend.script.append(Reply(400, b'{"non_field_errors": ["Unable to log in"]}'))
    env = cluster.env(**env_for(backend))
    del env["TRACEBLOC_CLIENT_ID"], env["TRACEBLOC_CLIENT_PASSWORD"]
    with Pty.spawn(["install"], env=env, cwd=cluster.root) as term:
        term.expect("Client ID")
        term.send(CLIENT_ID)
        term.expect("Client password")
        term.send("wrong-password")
        term.expect("not correct")
        term.expect("Client ID [client-7f3a]")
        term.send("")  # Enter keeps the id typed before
        term.expect("Client password")
        term.send(PASSWORD)
        term.expect("Install? [y/N]")
        term.send("y")
        code = term.wait(timeout=60)
        screen = term.screen()

    assert code == 0, screen
    assert [r.fields["password"] == PASSWORD for r in backend.requests] == [False, True]
    assert PASSWORD not in screen and "wrong-password" not in screen  # never echoed
    assert len(upgrade_calls(cluster)) == 1
    written = yaml.safe_load(values_file(cluster).read_text(encoding="utf-8"))
    assert written["clientPassword"] == PASSWORD


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize(
    ("extra", "fancy"),
    [
        pytest.param({}, True, id="terminal-gets-spinner-marks-and-colour"),
        pytest.param({"NO_COLOR": "1"}, False, id="no-color-gets-plain-lines"),
        pytest.param({"TB_PLAIN": "1"}, False, id="tb-plain-gets-plain-lines"),
    ],
)
def test_progress_on_a_terminal(
    cluster: FakeCluster, backend: BackendServer, extra: dict[str, str], fancy: bool
) -> None:
    from tests.fakes.terminal import Pty

    fresh(cluster).on("helm", "upgrade", "--install", sleep=0.5)  # long enough to spin
    env = cluster.env(**env_for(backend))
    del env["TB_PLAIN"]
    env.update(extra)
    with Pty.spawn(["install", "--yes"], env=env, cwd=cluster.root) as term:
        code = term.wait(timeout=60)
        screen = term.screen()

    assert code == 0, screen
    assert "The tracebloc client is installed and connected" in screen
    timestamped = [
        line
        for line in screen.splitlines()
        if line[:1] == "[" and line[3:4] == ":" and "Installing" in line
    ]
    if fancy:
        assert "\x1b[32m✓\x1b[0m Installing the tracebloc client" in screen  # a green mark
        assert "⠋ Installing the tracebloc client" in screen  # the spinner ran
        assert timestamped == []
    else:
        assert "\x1b[" not in screen
        assert timestamped, screen


# --- missing tools and bad settings stop before anything happens -----------------------


@pytest.mark.parametrize("tool", ["helm", "kubectl"])
def test_a_missing_tool_stops_before_credentials_are_asked(
    cluster: FakeCluster, backend: BackendServer, tool: str
) -> None:
    fresh(cluster).remove(tool)
    # An empty mirror: the pinned tool cannot be had, and no test reaches the internet.
    empty = cluster.root / "empty-mirror"
    empty.mkdir()
    result = cluster.run("install", "--yes", TRACEBLOC_TOOLS_MIRROR=str(empty), **env_for(backend))
    assert result.returncode == 1
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    # Either no checksum is pinned for this platform (no download: nothing unverified is
    # fetched), or the mirror lacks the file.
    assert error.startswith(
        (f"error: {tool} is not available: {tool} v", f"error: cannot read {empty}")
    ), error
    assert backend.requests == []
    assert mutations(cluster) == []


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        pytest.param("TB_HELM_TIMEOUT_MIN", "ten", id="helm-timeout-not-a-number"),
        pytest.param("TB_METRICS_WAIT_S", "-1", id="negative-metrics-wait"),
        pytest.param("PF_MIN_MEM_GB", "lots", id="preflight-floor-not-a-number"),
        pytest.param("TRACEBLOC_CA_BUNDLE", "/nonexistent/ca.pem", id="ca-bundle-missing"),
        pytest.param(
            "TRACEBLOC_BACKEND_URL", "http://api.example.com/", id="backend-over-plain-http"
        ),
    ],
)
def test_bad_settings_are_one_line_errors_and_nothing_runs(
    cluster: FakeCluster, backend: BackendServer, variable: str, raw: str
) -> None:
    fresh(cluster)
    env = env_for(backend, **{variable: raw})
    env.pop("TRACEBLOC_SKIP_PREFLIGHT")
    result = cluster.run("install", "--yes", **env)
    assert result.returncode == 2, result.stderr
    assert variable in result.stderr
    assert "Traceback" not in result.stderr
    assert backend.requests == []
    assert mutations(cluster) == []


def test_metrics_api_not_ready_is_waited_for_then_the_install_goes_on(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).on(
        "kubectl",
        "get",
        "apiservice",
        stdout=json.dumps({"status": {"conditions": [{"type": "Available", "status": "False"}]}}),
    )
    result = cluster.run("install", "--yes", **env_for(backend, TB_METRICS_WAIT_S="1"))
    assert result.returncode == 0, result.stderr
    assert "is registered but not Available after 1s" in result.stderr
    assert len(upgrade_calls(cluster)) == 1


def test_metrics_api_not_registered_yet_is_waited_for_to_the_bound(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    # A fresh cluster whose metrics-server has not registered yet (#553 upstream): waited
    # for, as the twins did, not taken for "absent".
    fresh(cluster).on(
        "kubectl",
        "get",
        "apiservice",
        rc=1,
        stderr=(
            "Error from server (NotFound): apiservices.apiregistration.k8s.io "
            '"v1beta1.metrics.k8s.io" not found\n'
        ),
    )
    started = time.monotonic()
    result = cluster.run("install", "--yes", **env_for(backend, TB_METRICS_WAIT_S="6"))
    waited = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    # the message states the time measured, at least the bound and no more than it took
    said = re.search(r"is not registered after (\d+)s of waiting; continuing", result.stderr)
    assert said is not None, result.stderr
    assert 6 <= int(said.group(1)) <= math.ceil(waited)
    # one in the overlapped reads, then the wait's at 0s, after one poll (5s), at the bound
    assert len([a for a in cluster.calls("kubectl") if a[:2] == ["get", "apiservice"]]) == 4
    assert len(upgrade_calls(cluster)) == 1


def test_override_replaces_the_size_only_and_still_guards(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).installed(release_row())
    cluster.values_of(
        "tracebloc",
        "tracebloc",
        {
            "clientId": CLIENT_ID,
            "env": {"RESOURCE_LIMITS": "cpu=3,memory=12Gi", "RESOURCE_PROVENANCE": "installer"},
        },
    )
    cluster.status_of("tracebloc", "deployed")
    result = cluster.run(
        "install", "--yes", **env_for(backend, TRACEBLOC_TRAINING_RESOURCES="cpu=6,memory=20Gi")
    )
    assert result.returncode == 0, result.stderr
    written = yaml.safe_load(values_file(cluster).read_text(encoding="utf-8"))
    assert written["env"]["RESOURCE_LIMITS"] == "cpu=6,memory=20Gi"
    assert written["env"]["RESOURCE_PROVENANCE"] == "user"
    # The other decisions still come from what the cluster shows: its nodes are read.
    assert [a for a in cluster.calls("kubectl") if a[:2] == ["get", "nodes"]]
    helm_verbs = [a[:2] for a in cluster.calls("helm")]
    assert ["list", "--all-namespaces"] in helm_verbs and ["get", "values"] in helm_verbs


def test_install_writes_and_runs_exactly_what_plan_showed(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    fresh(cluster).release_absent()
    planned_values = tmp_path / "planned.yaml"
    plan = cluster.run("plan", "--json", "--values-out", str(planned_values), **env_for(backend))
    assert plan.returncode == 0, plan.stderr
    planned_argv = json.loads(plan.stdout)["helm"]["argv"]

    result = cluster.run("install", "--yes", **env_for(backend))
    assert result.returncode == 0, result.stderr
    assert values_file(cluster).read_bytes() == planned_values.read_bytes()
    [upgrade] = upgrade_calls(cluster)
    assert ["helm", *upgrade] == planned_argv


@pytest.mark.parametrize(
    ("context", "server", "prepared"),
    [
        pytest.param(
            "k3d-tracebloc", "https://127.0.0.1:6443", True, id="local-cluster-named-with-context"
        ),
        pytest.param("prod-eu", "https://k8s.prod.example.com:6443", False, id="remote-cluster"),
    ],
)
def test_release_directories_are_prepared_whenever_the_cluster_runs_here(
    cluster: FakeCluster, backend: BackendServer, context: str, server: str, prepared: bool
) -> None:
    """The hostPath directories with the twins' modes exist before helm runs when the cluster
    is on this machine, also when it is named with --context; never for a remote one."""
    fresh(cluster).kube_target(context, server)
    result = cluster.run("install", "--yes", "--context", context, **env_for(backend))

    assert result.returncode == 0, result.stderr
    base = cluster.home / ".tracebloc" / "tracebloc"
    if not prepared:
        assert not base.exists()
        return
    if sys.platform != "win32":
        modes = {
            name: stat.S_IMODE(os.stat(base / name).st_mode) for name in ("data", "logs", "mysql")
        }
        assert modes == {"data": 0o2777, "logs": 0o3777, "mysql": 0o777}
    else:
        assert all((base / name).is_dir() for name in ("data", "logs", "mysql"))


def test_an_undersized_training_envelope_is_warned_during_install_as_in_plan(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    cluster.nodes(node("small", "2", "4Gi")).installed().installable()
    warning = "node small (2 CPU, 4.0 GiB allocatable) is small"
    planned = cluster.run("plan", **env_for(backend))
    assert warning in planned.stdout + planned.stderr
    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    assert f"warning: {warning}" in result.stderr
