"""installer.edges.apply against fake helm/kubectl executables on PATH (tests/fakes/cluster.py).

Each test scripts the tools' answers, calls one apply function, and asserts what it returned
or raised and the exact calls the fakes logged. Time in wait_for_metrics is a fake clock.
"""

from __future__ import annotations

import json

import pytest

from installer.decide import recovery
from installer.decide.errors import InstallerError, Refused
from installer.decide.model import Connection
from installer.decide.redact import Redactor
from installer.edges import apply, toolpath
from tests.fakes.cluster import HELM_NOT_FOUND, FakeCluster

REPO_URL = "https://tracebloc.github.io/client"
NO_REPOS = "Error: no repositories to show\n"
CONN = Connection(kubeconfig="/home/ana/.kube/config", context="prod-eu")


def tools_for(cluster: FakeCluster) -> apply.Tools:
    env = cluster.env()
    return apply.Tools(
        helm=toolpath.find_tool("helm", env),
        kubectl=toolpath.find_tool("kubectl", env),
        env=env,
        redactor=Redactor(),
    )


def apiservice(*conditions: tuple[str, str]) -> str:
    return json.dumps(
        {
            "kind": "APIService",
            "metadata": {"name": apply.METRICS_APISERVICE},
            "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]},
        }
    )


class FakeTime:
    """A monotonic clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


# --- recovery -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "verb"),
    [
        pytest.param("deployed", None, id="deployed-needs-nothing"),
        pytest.param("failed", None, id="failed-is-upgraded-over"),
        pytest.param("superseded", None, id="superseded-needs-nothing"),
        pytest.param("pending-install", "uninstall", id="pending-install-uninstalls"),
        pytest.param("pending-upgrade", "rollback", id="pending-upgrade-rolls-back"),
        pytest.param("pending-rollback", "rollback", id="pending-rollback-rolls-back"),
        pytest.param("uninstalling", "uninstall", id="uninstalling-uninstalls"),
        pytest.param("uninstalled", None, id="uninstalled-is-installed-over"),
        pytest.param("unknown", None, id="unknown-state-is-left-alone"),
        pytest.param(None, None, id="absent-needs-nothing"),
    ],
)
def test_recovery_for(status: str | None, verb: str | None) -> None:
    assert recovery.recovery_for(status) == verb


def test_release_status_reads_the_state(cluster: FakeCluster) -> None:
    cluster.status_of("tracebloc", "pending-upgrade")

    assert apply.release_status(tools_for(cluster), "tracebloc", "tb", CONN) == "pending-upgrade"
    assert cluster.calls("helm") == [
        [
            "status",
            "tracebloc",
            "-n",
            "tb",
            "-o",
            "json",
            "--kubeconfig",
            "/home/ana/.kube/config",
            "--kube-context",
            "prod-eu",
        ]
    ]


def test_release_status_absent_is_none(cluster: FakeCluster) -> None:
    cluster.on("helm", "status", stderr=HELM_NOT_FOUND, rc=1)

    assert apply.release_status(tools_for(cluster), "tracebloc", "tb", Connection()) is None


def test_release_status_unreadable_is_refused_with_the_manual_commands(
    cluster: FakeCluster,
) -> None:
    cluster.on("helm", "status", stderr="Error: Kubernetes cluster unreachable\n", rc=1)

    with pytest.raises(Refused) as caught:
        apply.release_status(tools_for(cluster), "tracebloc", "tb", Connection())

    assert "Kubernetes cluster unreachable" in caught.value.message
    assert "helm status tracebloc -n tb" in caught.value.remedy


@pytest.mark.parametrize("verb", ["rollback", "uninstall"])
def test_recover_runs_the_verb(cluster: FakeCluster, verb: str) -> None:
    cluster.on("helm", verb, stdout="done\n")

    apply.recover(tools_for(cluster), "tracebloc", "tb", Connection(), verb)

    assert cluster.calls("helm") == [[verb, "tracebloc", "-n", "tb", "--wait", "--timeout", "5m"]]


def test_recover_failing_names_the_manual_commands(cluster: FakeCluster) -> None:
    cluster.on("helm", "rollback", stderr="Error: no revision to roll back to\n", rc=1)

    with pytest.raises(InstallerError) as caught:
        apply.recover(tools_for(cluster), "tracebloc", "tb", Connection(), "rollback")

    assert "helm rollback of the wedged release failed" in caught.value.message
    assert "no revision to roll back to" in caught.value.message
    assert "helm rollback tracebloc -n tb" in caught.value.remedy
    assert "helm uninstall tracebloc -n tb" in caught.value.remedy


def test_manual_commands_carry_the_runs_cluster_and_namespace() -> None:
    conn = Connection(kubeconfig="/home/ana/my kube/config", context="prod-eu")

    said = recovery.manual_commands("tracebloc", "tb", conn)

    flags = "-n tb --kubeconfig '/home/ana/my kube/config' --kube-context prod-eu"
    for verb in ("status", "history", "rollback", "uninstall"):
        assert f"helm {verb} tracebloc {flags}" in said
    assert (
        "tracebloc-installer --kubeconfig '/home/ana/my kube/config' --context prod-eu -n tb"
    ) in said


# --- the chart repository -------------------------------------------------------------------


def repos(*pairs: tuple[str, str]) -> str:
    return json.dumps([{"name": n, "url": u} for n, u in pairs])


def test_missing_repo_is_added_and_needs_no_update(cluster: FakeCluster) -> None:
    # `helm repo add` downloads the index itself: an update right after it is a second
    # download of the same file.
    cluster.on("helm", "repo", "list", stderr=NO_REPOS, rc=1)
    cluster.on("helm", "repo", "add", stdout='"tracebloc" has been added\n')
    cluster.on("helm", "repo", "update", stdout="Update Complete.\n")

    done = apply.ensure_repo(tools_for(cluster), "tracebloc", REPO_URL, None)

    assert done == f"added repo tracebloc ({REPO_URL})"
    assert cluster.calls("helm") == [
        ["repo", "list", "-o", "json"],
        ["repo", "add", "tracebloc", REPO_URL],
    ]


def test_a_repo_list_already_read_is_not_read_again(cluster: FakeCluster) -> None:
    cluster.on("helm", "repo", "update", stdout="Update Complete.\n")

    done = apply.ensure_repo(
        tools_for(cluster), "tracebloc", REPO_URL, None, repos={"tracebloc": REPO_URL}
    )

    assert done == "repo tracebloc already configured"
    assert cluster.calls("helm") == [["repo", "update", "tracebloc"]]


def test_missing_repo_is_added_with_the_ca_file(cluster: FakeCluster) -> None:
    cluster.on("helm", "repo", "list", stdout=repos(("bitnami", "https://charts.bitnami.com")))
    cluster.on("helm", "repo", "add", stdout="added\n")
    cluster.on("helm", "repo", "update", stdout="Update Complete.\n")

    apply.ensure_repo(tools_for(cluster), "tracebloc", REPO_URL, "/etc/corp-ca.pem")

    assert ["repo", "add", "tracebloc", REPO_URL, "--ca-file", "/etc/corp-ca.pem"] in cluster.calls(
        "helm"
    )


@pytest.mark.parametrize(
    "url",
    [
        pytest.param(REPO_URL, id="same-url"),
        pytest.param(REPO_URL + "/", id="same-url-with-trailing-slash"),
    ],
)
def test_present_repo_is_only_updated(cluster: FakeCluster, url: str) -> None:
    cluster.on("helm", "repo", "list", stdout=repos(("tracebloc", url)))
    cluster.on("helm", "repo", "update", stdout="Update Complete.\n")

    done = apply.ensure_repo(tools_for(cluster), "tracebloc", REPO_URL, None)

    assert done == "repo tracebloc already configured"
    assert cluster.calls("helm") == [
        ["repo", "list", "-o", "json"],
        ["repo", "update", "tracebloc"],
    ]


def test_present_repo_with_another_url_is_kept_and_said(cluster: FakeCluster) -> None:
    mirror = "https://charts.corp.example/tracebloc"
    cluster.on("helm", "repo", "list", stdout=repos(("tracebloc", mirror)))
    cluster.on("helm", "repo", "update", stdout="Update Complete.\n")

    done = apply.ensure_repo(tools_for(cluster), "tracebloc", REPO_URL, None)

    assert done == f"repo tracebloc is configured as {mirror} (kept)"
    assert cluster.calls("helm") == [
        ["repo", "list", "-o", "json"],
        ["repo", "update", "tracebloc"],
    ]


def test_repo_add_failing_names_the_proxy_and_ca_remedies(cluster: FakeCluster) -> None:
    cluster.on("helm", "repo", "list", stderr=NO_REPOS, rc=1)
    cluster.on(
        "helm",
        "repo",
        "add",
        rc=1,
        stderr="Error: looks like the URL is not a valid chart repository: x509: "
        "certificate signed by unknown authority\n",
    )

    with pytest.raises(InstallerError) as caught:
        apply.ensure_repo(tools_for(cluster), "tracebloc", REPO_URL, None)

    assert REPO_URL in caught.value.message
    assert "certificate signed by unknown authority" in caught.value.message
    for remedy in ("HTTPS_PROXY", "TRACEBLOC_CA_BUNDLE", "TRACEBLOC_CHART_PATH"):
        assert remedy in caught.value.remedy
    assert not any(c[:2] == ["repo", "update"] for c in cluster.calls("helm"))


def test_repo_update_failing_is_an_error(cluster: FakeCluster) -> None:
    cluster.on("helm", "repo", "list", stdout=repos(("tracebloc", REPO_URL)))
    cluster.on(
        "helm",
        "repo",
        "update",
        rc=1,
        stderr="Error: failed to fetch https://tracebloc.github.io/client/index.yaml\n",
    )

    with pytest.raises(InstallerError) as caught:
        apply.ensure_repo(tools_for(cluster), "tracebloc", REPO_URL, None)

    assert "could not update the chart repository tracebloc" in caught.value.message
    assert "index.yaml" in caught.value.message
    assert "TRACEBLOC_CA_BUNDLE" in caught.value.remedy


def test_repo_list_failing_is_an_error_before_any_change(cluster: FakeCluster) -> None:
    cluster.on("helm", "repo", "list", stderr="Error: couldn't load repositories file\n", rc=1)

    with pytest.raises(InstallerError) as caught:
        apply.ensure_repo(tools_for(cluster), "tracebloc", REPO_URL, None)

    assert "couldn't load repositories file" in caught.value.message
    assert cluster.calls("helm") == [["repo", "list", "-o", "json"]]


# --- the metrics API ------------------------------------------------------------------------


def test_metrics_available_at_once_does_not_sleep(cluster: FakeCluster) -> None:
    cluster.on("kubectl", "get", "apiservice", stdout=apiservice(("Available", "True")))
    time = FakeTime()

    said = apply.wait_for_metrics(tools_for(cluster), CONN, 120, clock=time.clock, sleep=time.sleep)

    assert said == "the metrics API is available"
    assert time.slept == []
    assert cluster.calls("kubectl") == [
        [
            "get",
            "apiservice",
            apply.METRICS_APISERVICE,
            "-o",
            "json",
            "--kubeconfig",
            "/home/ana/.kube/config",
            "--context",
            "prod-eu",
        ]
    ]


@pytest.mark.parametrize(
    ("seconds", "slept"),
    [
        pytest.param(120, [apply.METRICS_POLL_S] * 24, id="default-bound"),
        pytest.param(12, [5, 5, 2], id="bound-between-polls-waits-the-rest"),
        pytest.param(5, [5], id="bound-of-one-poll"),
        pytest.param(4, [4], id="bound-shorter-than-a-poll-is-waited-in-full"),
        pytest.param(0, [], id="no-wait"),
    ],
)
def test_metrics_never_available_says_how_long_it_actually_waited(
    cluster: FakeCluster, seconds: float, slept: list[float]
) -> None:
    cluster.on(
        "kubectl", "get", "apiservice", stdout=apiservice(("Available", "False"), ("Ready", "True"))
    )
    time = FakeTime()

    said = apply.wait_for_metrics(
        tools_for(cluster), Connection(), seconds, clock=time.clock, sleep=time.sleep
    )

    assert said.startswith(
        f"the metrics API ({apply.METRICS_APISERVICE}) is registered but "
        f"not Available after {sum(slept):g}s of waiting; continuing"
    )
    assert time.slept == slept
    assert len(cluster.calls("kubectl")) == len(slept) + 1


def test_metrics_becoming_available_stops_the_wait(cluster: FakeCluster) -> None:
    cluster.on("kubectl", "get", "apiservice", stdout=apiservice(("Available", "False")))
    time = FakeTime()
    tools = tools_for(cluster)

    def sleep(seconds: float) -> None:
        time.sleep(seconds)
        if len(time.slept) == 2:  # metrics-server becomes ready during the second pause
            cluster.on("kubectl", "get", "apiservice", stdout=apiservice(("Available", "True")))

    said = apply.wait_for_metrics(tools, Connection(), 120, clock=time.clock, sleep=sleep)

    assert said == "the metrics API is available"
    assert len(time.slept) == 2
    assert len(cluster.calls("kubectl")) == 3


NOT_FOUND = (
    "Error from server (NotFound): apiservices.apiregistration.k8s.io "
    '"v1beta1.metrics.k8s.io" not found\n'
)


@pytest.mark.parametrize(
    ("stdout", "stderr", "rc", "seen"),
    [
        pytest.param("", NOT_FOUND, 1, "is not registered", id="not-registered-yet"),
        pytest.param(
            "",
            'error: the server doesn\'t have a resource type "apiservice"\n',
            1,
            "could not be read",
            id="no-such-resource",
        ),
        pytest.param("<html>proxy error</html>", "", 0, "could not be read", id="garbage-not-json"),
        pytest.param("[]", "", 0, "could not be read", id="json-list"),
        pytest.param('{"status": null}', "", 0, "could not be read", id="null-status"),
        pytest.param(
            '{"status": {"conditions": null}}', "", 0, "could not be read", id="null-conditions"
        ),
        pytest.param(
            '{"status": {"conditions": ["Available"]}}',
            "",
            0,
            "could not be read",
            id="condition-not-an-object",
        ),
    ],
)
def test_metrics_not_registered_or_unreadable_is_waited_out_to_the_bound(
    cluster: FakeCluster, stdout: str, stderr: str, rc: int, seen: str
) -> None:
    # "Not registered yet" is not "absent" (#553 upstream): the wait goes on to its bound.
    cluster.on("kubectl", "get", "apiservice", stdout=stdout, stderr=stderr, rc=rc)
    time = FakeTime()

    said = apply.wait_for_metrics(
        tools_for(cluster), Connection(), 12, clock=time.clock, sleep=time.sleep
    )

    assert f"{seen}" in said and "after 12s of waiting; continuing" in said
    assert time.slept == [apply.METRICS_POLL_S] * 2 + [12 - 2 * apply.METRICS_POLL_S]
    assert len(cluster.calls("kubectl")) == 4


def test_metrics_registering_late_then_available_ends_the_wait(cluster: FakeCluster) -> None:
    # A fresh cluster: NotFound, then registered but not Available, then Available.
    cluster.on("kubectl", "get", "apiservice", stderr=NOT_FOUND, rc=1)
    time = FakeTime()
    answers = iter([apiservice(("Available", "False")), apiservice(("Available", "True"))])

    def sleep(seconds: float) -> None:
        time.sleep(seconds)
        cluster.on("kubectl", "get", "apiservice", stdout=next(answers))

    said = apply.wait_for_metrics(
        tools_for(cluster), Connection(), 120, clock=time.clock, sleep=sleep
    )

    assert said == "the metrics API is available"
    assert len(cluster.calls("kubectl")) == 3


@pytest.mark.parametrize(
    ("stdout", "available"),
    [
        pytest.param(apiservice(("Available", "True")), True, id="available"),
        pytest.param(apiservice(("Available", "False")), False, id="not-available"),
        pytest.param(apiservice(), False, id="no-conditions-yet"),
        pytest.param(json.dumps({"status": {}}), False, id="no-status-yet"),
        pytest.param(apiservice(("Available", "Unknown")), False, id="available-unknown"),
    ],
)
def test_metrics_available_reads_the_available_condition(
    cluster: FakeCluster, stdout: str, available: bool
) -> None:
    cluster.on("kubectl", "get", "apiservice", stdout=stdout)

    assert apply.metrics_available(tools_for(cluster), Connection()) is available


# --- the install itself ---------------------------------------------------------------------

ARGV = [
    "helm",
    "upgrade",
    "--install",
    "tracebloc",
    "tracebloc/client",
    "--namespace",
    "tb",
    "--create-namespace",
    "--cleanup-on-fail",
    "--values",
    "/home/ana/.tracebloc/values.yaml",
]


def test_upgrade_install_runs_the_planned_argv(cluster: FakeCluster) -> None:
    cluster.on("helm", "upgrade", "--install", stdout='Release "tracebloc" has been upgraded.\n')

    result = apply.upgrade_install(tools_for(cluster), ARGV, "tracebloc", "tb", 600)

    assert result.rc == 0
    assert cluster.calls("helm") == [ARGV[1:]]


def test_upgrade_install_failing_shows_the_tail_and_the_unwedge_commands(
    cluster: FakeCluster,
) -> None:
    noise = [f"client.go:{n}: waiting for pod {n}" for n in range(30)]
    cluster.on(
        "helm",
        "upgrade",
        rc=1,
        stdout='Release "tracebloc" does not exist. Installing it now.\n',
        stderr="\n".join([*noise, "Error: context deadline exceeded"]) + "\n",
    )

    with pytest.raises(InstallerError) as caught:
        apply.upgrade_install(tools_for(cluster), ARGV, "tracebloc", "tb", 600)

    message = caught.value.message
    header, _, said = message.partition("\n")
    assert header == "helm upgrade --install failed (exit 1):"
    assert "Error: context deadline exceeded" in said
    assert "client.go:29:" in said and "client.go:0:" not in said  # the tail, not the head
    assert len(said.splitlines()) <= apply.TAIL_LINES
    assert caught.value.exit_code == 1
    assert "helm rollback tracebloc -n tb" in caught.value.remedy
    assert "helm uninstall tracebloc -n tb" in caught.value.remedy


def test_a_first_install_helm_refused_names_no_release_to_roll_back_or_uninstall(
    cluster: FakeCluster,
) -> None:
    """helm refused before it created anything (the chart's kubeVersion excludes the
    server): helm's own word is that there is no release, so no remedy names one."""
    cluster.on(
        "helm",
        "upgrade",
        rc=1,
        stderr="Error: INSTALLATION FAILED: chart requires "
        "kubeVersion: >=1.24.0-0 which is incompatible with Kubernetes v1.20.2\n",
    )
    cluster.on("helm", "status", rc=1, stderr="Error: release: not found\n")
    conn = Connection(kubeconfig="/k/config", context="prod")

    with pytest.raises(InstallerError) as caught:
        apply.upgrade_install(tools_for(cluster), ARGV, "tracebloc", "tb", 600, conn)

    assert "chart requires kubeVersion" in caught.value.message
    remedy = caught.value.remedy
    assert "rollback" not in remedy and "helm uninstall" not in remedy
    assert "no release tracebloc was created in namespace tb" in remedy
    assert "tracebloc-installer --kubeconfig /k/config --context prod -n tb" in remedy


def test_upgrade_install_failing_silently_says_the_exit_code(cluster: FakeCluster) -> None:
    cluster.on("helm", "upgrade", rc=2)

    with pytest.raises(InstallerError) as caught:
        apply.upgrade_install(tools_for(cluster), ARGV, "tracebloc", "tb", 600)

    assert caught.value.message == "helm upgrade --install failed (exit 2)"


def test_upgrade_install_failing_keeps_helms_error_line_after_long_stdout(
    cluster: FakeCluster,
) -> None:
    progress = "".join(f"waiting for resource {n}\n" for n in range(apply.TAIL_LINES + 5))
    cluster.on(
        "helm",
        "upgrade",
        rc=1,
        stdout=progress,
        stderr="Error: UPGRADE FAILED: context deadline exceeded\n",
    )

    with pytest.raises(InstallerError) as caught:
        apply.upgrade_install(tools_for(cluster), ARGV, "tracebloc", "tb", 600)

    assert "Error: UPGRADE FAILED: context deadline exceeded" in caught.value.message


# --- the kube context -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conn", "argv"),
    [
        pytest.param(
            Connection(),
            ["config", "set-context", "--current", "--namespace", "tb"],
            id="current-context",
        ),
        pytest.param(
            Connection(context="prod-eu"),
            ["config", "set-context", "prod-eu", "--namespace", "tb"],
            id="named-context",
        ),
        pytest.param(
            Connection(kubeconfig="/k/config"),
            [
                "config",
                "set-context",
                "--current",
                "--namespace",
                "tb",
                "--kubeconfig",
                "/k/config",
            ],
            id="current-context-in-a-kubeconfig",
        ),
        pytest.param(
            CONN,
            [
                "config",
                "set-context",
                "prod-eu",
                "--namespace",
                "tb",
                "--kubeconfig",
                "/home/ana/.kube/config",
            ],
            id="named-context-in-a-kubeconfig",
        ),
    ],
)
def test_point_context(cluster: FakeCluster, conn: Connection, argv: list[str]) -> None:
    cluster.on("kubectl", "config", "set-context", stdout="Context modified.\n")

    assert apply.point_context(tools_for(cluster), conn, "tb") is True
    assert cluster.calls("kubectl") == [argv]


def test_point_context_failing_is_best_effort(cluster: FakeCluster) -> None:
    cluster.on(
        "kubectl", "config", "set-context", stderr="error: no current context is set\n", rc=1
    )

    assert apply.point_context(tools_for(cluster), Connection(), "tb") is False


def test_point_context_without_kubectl_is_best_effort(cluster: FakeCluster) -> None:
    tools = tools_for(cluster)
    cluster.remove("kubectl")

    assert apply.point_context(tools, Connection(), "tb") is False


# --- helpers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lines", "kept"),
    [
        pytest.param("", 3, "", id="empty"),
        pytest.param("a\n\n  \nb\n", 3, "a\nb", id="blank-lines-dropped"),
        pytest.param("1\n2\n3\n4\n", 2, "3\n4", id="last-lines-kept"),
        pytest.param("x  \r\ny\t\n", 5, "x\ny", id="trailing-space-and-crlf-trimmed"),
    ],
)
def test_tail(text: str, lines: int, kept: str) -> None:
    assert apply.tail(text, lines) == kept
