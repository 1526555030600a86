"""`plan` as a process against fake kubectl/helm (and nvidia-smi) on PATH.

Asserts what the operator reads (JSON and text), the helm argv install would run, the
files plan does and does not write, and that no secret reaches a child's argv or our
output.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

import pytest
import yaml

from installer.config import plan_config, probe_config
from installer.decide.model import os_name
from installer.decide.redact import MASK
from installer.decide.render import to_yaml
from installer.edges.helm import upgrade_install_args
from tests.fakes.cluster import KUBECONFIG_OF_A_CLUSTER, REPO, FakeCluster, node, release_row

CLIENT_PASSWORD = "Cl1ent-P4ss:#w0rd"
REGISTRY_PASSWORD = "Reg1stry-S3cret@x"
PROXY_PASSWORD = "Pr0xy-S3cret:@y"
SECRETS = (CLIENT_PASSWORD, REGISTRY_PASSWORD, PROXY_PASSWORD)
SECRET_ENV: dict[str, Any] = {
    "TRACEBLOC_CLIENT_ID": "client-7f3a",
    "TRACEBLOC_CLIENT_PASSWORD": CLIENT_PASSWORD,
    "TRACEBLOC_IMAGE_REGISTRY": "mirror.corp.example",
    "TRACEBLOC_REGISTRY_USERNAME": "robot",
    "TRACEBLOC_REGISTRY_PASSWORD": REGISTRY_PASSWORD,
    "HTTPS_PROXY": f"http://ana:{PROXY_PASSWORD}@proxy.corp.example:3128",
    "NO_PROXY": "localhost,.svc",
}
CREDENTIALS: dict[str, Any] = {
    "TRACEBLOC_CLIENT_ID": "client-7f3a",
    "TRACEBLOC_CLIENT_PASSWORD": "pw-7f3a",
}


def fresh(cluster: FakeCluster, *nodes: dict[str, Any]) -> FakeCluster:
    return cluster.nodes(*(nodes or (node("laptop", "8", "16Gi"),))).installed().release_absent()


def values_path(cluster: FakeCluster) -> str:
    return str(cluster.home / ".tracebloc" / "values.yaml")


def expected_argv(cluster: FakeCluster, *extra: str) -> list[str]:
    return [
        "helm",
        "upgrade",
        "--install",
        "tracebloc",
        "tracebloc/client",
        "--namespace",
        "tracebloc",
        "--create-namespace",
        "--cleanup-on-fail",
        "--values",
        values_path(cluster),
        *extra,
    ]


def test_plan_json_shows_training_release_values_and_helm(cluster: FakeCluster) -> None:
    fresh(cluster)
    doc = cluster.run_json("plan", **SECRET_ENV)
    assert {"training", "release", "values", "helm"} <= set(doc)
    assert doc["training"]["size"] == "cpu=7,memory=13Gi"
    assert doc["training"]["provenance"] == "installer"
    assert doc["release"]["state"] == "absent"
    assert doc["helm"]["argv"] == expected_argv(cluster)
    assert doc["helm"]["repo"] == {"name": "tracebloc", "url": "https://tracebloc.github.io/client"}
    values = doc["values"]
    assert values["clientId"] == "client-7f3a"
    assert values["clientPassword"] == MASK
    assert values["dockerRegistry"]["password"] == MASK
    assert values["env"]["HTTP_PROXY_PASSWORD"] == MASK
    assert values["env"]["RESOURCE_LIMITS"] == "cpu=7,memory=13Gi"
    assert doc["missing"] == []


def test_plan_writes_no_file(cluster: FakeCluster) -> None:
    fresh(cluster)
    for args in (("plan",), ("plan", "--json")):
        result = cluster.run(*args, **CREDENTIALS)
        assert result.returncode == 0, result.stderr
    assert not (cluster.home / ".tracebloc").exists()
    # Only the kubeconfig the fixture wrote, unchanged.
    assert sorted(p.name for p in cluster.home.iterdir()) == [".kube"]
    assert cluster.kubeconfig.read_text(encoding="utf-8") == KUBECONFIG_OF_A_CLUSTER


def test_plan_never_writes_to_the_cluster(cluster: FakeCluster) -> None:
    fresh(cluster)
    cluster.run_json("plan", **CREDENTIALS)
    # install's reads, and nothing else: which cluster, the release list, the nodes, and
    # the release asked for (read beside the list).
    assert sorted(cluster.calls("kubectl")) == [
        ["config", "view", "--minify", "-o", "json"],
        ["get", "nodes", "-o", "json", "--request-timeout=10s"],
    ]
    assert sorted(cluster.calls("helm")) == [
        ["get", "values", "tracebloc", "-n", "tracebloc", "-o", "json"],
        [
            "list",
            "--all-namespaces",
            "--deployed",
            "--failed",
            "--pending",
            "--uninstalling",
            "--max",
            "0",
            "-o",
            "json",
        ],
        ["status", "tracebloc", "-n", "tracebloc", "-o", "json"],
    ]


def test_kubeconfig_and_context_reach_helm_argv(cluster: FakeCluster) -> None:
    fresh(cluster)
    kubeconfig = str(cluster.root / "kube config")
    (cluster.root / "kube config").write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    doc = cluster.run_json(
        "plan", "--kubeconfig", kubeconfig, "--context", "prod-eu", **CREDENTIALS
    )
    assert doc["helm"]["argv"] == expected_argv(
        cluster, "--kubeconfig", kubeconfig, "--kube-context", "prod-eu"
    )
    assert sorted(cluster.calls("kubectl")) == [
        [
            "config",
            "view",
            "--minify",
            "-o",
            "json",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "prod-eu",
        ],
        [
            "get",
            "nodes",
            "-o",
            "json",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "prod-eu",
            "--request-timeout=10s",
        ],
    ]


def test_namespace_names_release_and_namespace(cluster: FakeCluster) -> None:
    fresh(cluster)
    doc = cluster.run_json("plan", "--namespace", "team-a", **CREDENTIALS)
    argv = doc["helm"]["argv"]
    assert argv[3] == "team-a"
    assert argv[argv.index("--namespace") + 1] == "team-a"


def test_chart_path_is_used_as_the_chart(cluster: FakeCluster) -> None:
    fresh(cluster).on("helm", "upgrade", "--dry-run=server", stdout=DRY_RUN_OK)
    chart = str(REPO / "tests" / "chart")
    doc = cluster.run_json("plan", TRACEBLOC_CHART_PATH=chart, **CREDENTIALS)
    assert doc["helm"]["argv"][4] == chart
    assert "repo" not in doc["helm"]


def test_chart_flag_is_used_as_the_chart(cluster: FakeCluster) -> None:
    fresh(cluster)
    doc = cluster.run_json(
        "plan", "--chart", "oci://registry.corp.example/charts/client", **CREDENTIALS
    )
    assert doc["helm"]["argv"][4] == "oci://registry.corp.example/charts/client"


@pytest.mark.skipif(
    sys.platform == "win32",
    reason="POSIX file mode; Windows restricts the "
    "file with an ACL instead (tests/test_valuesfile.py's icacls tests)",
)
def test_values_out_writes_exactly_the_rendered_bytes(cluster: FakeCluster) -> None:
    fresh(cluster)
    out = cluster.root / "out" / "values.yaml"
    out.parent.mkdir()
    doc = cluster.run_json("plan", "--values-out", str(out), **SECRET_ENV)
    assert doc["values_out"] == {"path": str(out), "changed": True, "backup": None}
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    # The shown document with the secrets put back is exactly what was written.
    values = doc["values"]
    values["clientPassword"] = CLIENT_PASSWORD
    values["dockerRegistry"]["password"] = REGISTRY_PASSWORD
    values["env"]["HTTP_PROXY_PASSWORD"] = PROXY_PASSWORD
    assert out.read_bytes() == to_yaml(values)
    assert yaml.safe_load(out.read_bytes())["clientPassword"] == CLIENT_PASSWORD
    # The default values file is still not written: --values-out is the only file.
    assert not (cluster.home / ".tracebloc").exists()


def test_without_credentials_plan_marks_them_missing(cluster: FakeCluster) -> None:
    fresh(cluster)
    doc = cluster.run_json("plan")
    assert doc["missing"] == ["clientId", "clientPassword"]
    assert "clientId" not in doc["values"] and "clientPassword" not in doc["values"]
    text = cluster.run("plan")
    assert text.returncode == 0
    assert "missing:  clientId, clientPassword" in text.stdout


@pytest.mark.parametrize(
    "flags",
    [
        pytest.param(("--json",), id="json"),
        pytest.param((), id="human"),
        pytest.param(("--verbose",), id="human-verbose"),
        pytest.param(("--json", "--verbose"), id="json-verbose"),
        pytest.param(("--verbose", "--values-out", "OUT"), id="values-out-verbose"),
    ],
)
def test_no_secret_in_argv_or_output(cluster: FakeCluster, flags: tuple[str, ...]) -> None:
    fresh(cluster)
    cluster.install("nvidia-smi")
    cluster.on("nvidia-smi", "-L", stdout="GPU 0: NVIDIA A10G (UUID: GPU-x)\n")
    args = [str(cluster.root / "out.yaml") if f == "OUT" else f for f in flags]
    result = cluster.run("plan", *args, **SECRET_ENV)
    assert result.returncode == 0, result.stderr
    calls = cluster.calls()
    assert {entry["tool"] for entry in cluster.call_log()} == {"kubectl", "helm", "nvidia-smi"}
    for secret in SECRETS:
        assert not any(secret in part for argv in calls for part in argv)
        assert secret not in result.stdout
        assert secret not in result.stderr
    assert MASK in result.stdout
    if "--verbose" in flags:
        assert "run: kubectl get nodes" in result.stderr


@pytest.mark.parametrize("flags", [("--json",), ()], ids=["json", "human"])
def test_no_secret_in_output_when_a_tool_echoes_it(
    cluster: FakeCluster, flags: tuple[str, ...]
) -> None:
    echoed = (
        f"Unable to connect to the server: proxyconnect tcp: "
        f"http://ana:{PROXY_PASSWORD}@proxy.corp.example:3128: no such host\n"
    )
    cluster.on("kubectl", "get", "nodes", stderr=echoed, rc=1)
    cluster.on("helm", "get", "values", stderr="Error: " + echoed, rc=1)
    cluster.on("helm", "list", stderr="Error: Kubernetes cluster unreachable: " + echoed, rc=1)
    result = cluster.run("plan", *flags, **SECRET_ENV)
    assert result.returncode == 0, result.stderr
    assert PROXY_PASSWORD not in result.stdout + result.stderr


def test_missing_chart_path_is_bad_input(cluster: FakeCluster) -> None:
    fresh(cluster)
    missing = str(cluster.root / "no-such-chart")
    result = cluster.run("plan", TRACEBLOC_CHART_PATH=missing, **CREDENTIALS)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"error: TRACEBLOC_CHART_PATH={missing!r} is not a chart directory"
    ]
    assert cluster.calls() == []


def test_unknown_client_env_is_bad_input(cluster: FakeCluster) -> None:
    fresh(cluster)
    result = cluster.run("plan", CLIENT_ENV="banana", **CREDENTIALS)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "CLIENT_ENV='banana'" in result.stderr
    assert "Traceback" not in result.stderr


def test_pasted_password_is_cleaned_with_a_notice(cluster: FakeCluster) -> None:
    fresh(cluster)
    out = cluster.root / "values.yaml"
    pasted = "\x1b[200~hunter2 with spaces \x1b[201~"
    env: dict[str, Any] = {
        "TRACEBLOC_CLIENT_ID": "client-7f3a",
        "TRACEBLOC_CLIENT_PASSWORD": pasted,
    }
    doc = cluster.run_json("plan", "--values-out", str(out), **env)
    notice = "TRACEBLOC_CLIENT_PASSWORD had pasted terminal control characters; they were removed"
    assert notice in doc["warnings"]
    assert yaml.safe_load(out.read_bytes())["clientPassword"] == "hunter2 with spaces "
    assert b"\x1b" not in out.read_bytes()
    text = cluster.run("plan", **env)
    assert f"notice:   {notice}" in text.stdout
    assert "hunter2" not in text.stdout


def test_nvidia_gpu_adds_gpu_limits_and_device_plugin(cluster: FakeCluster) -> None:
    # A fresh local k3d cluster: this machine's GPU is the cluster's.
    fresh(cluster).view("k3d-tracebloc", "https://0.0.0.0:6550").daemonsets().runtime_class(False)
    cluster.install("nvidia-smi")
    cluster.on("nvidia-smi", "-L", stdout="GPU 0: NVIDIA A10G (UUID: GPU-x)\n")
    doc = cluster.run_json("plan", **CREDENTIALS)
    assert doc["values"]["env"]["GPU_LIMITS"] == "nvidia.com/gpu=1"
    assert doc["values"]["env"]["GPU_REQUESTS"] == "nvidia.com/gpu=1"
    assert doc["values"]["gpu"] == {"devicePlugin": {"enabled": True, "vendor": "nvidia"}}
    assert cluster.calls("nvidia-smi") == [["-L"]]


@pytest.mark.skipif(os.path.exists("/dev/kfd"), reason="an AMD GPU on this host is detected")
def test_nvidia_smi_listing_no_gpu_means_none(cluster: FakeCluster) -> None:
    fresh(cluster)
    cluster.install("nvidia-smi")
    cluster.on(
        "nvidia-smi",
        "-L",
        stderr="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        rc=9,
    )
    doc = cluster.run_json("plan", **CREDENTIALS)
    assert doc["values"]["env"]["GPU_LIMITS"] == ""
    assert "gpu" not in doc["values"]


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        pytest.param(
            lambda c: c.nodes(node("one")).view("default", "https://127.0.0.1:6443"),
            "true",
            id="loopback-api-server",
        ),
        pytest.param(
            lambda c: c.nodes(node("k3d-tracebloc-server-0"), node("k3d-tracebloc-agent-0")),
            "true",
            id="k3d-server-and-agent-on-this-machine",
        ),
        pytest.param(
            lambda c: c.nodes(node("a"), node("b")).view("prod", "https://10.1.2.3:6443"),
            None,
            id="remote-two-nodes-left-to-the-chart",
        ),
        pytest.param(
            lambda c: c.nodes(node("one")).view("prod", "https://10.1.2.3:6443"),
            None,
            id="remote-one-node-left-to-the-chart",
        ),
        pytest.param(
            lambda c: c.on(
                "kubectl", "get", "nodes", rc=1, stderr="The connection to the server was refused\n"
            ),
            None,
            id="cluster-unreadable",
        ),
    ],
)
def test_single_node(cluster: FakeCluster, setup: Any, expected: str | None) -> None:
    setup(cluster.installed())
    doc = cluster.run_json("plan", **CREDENTIALS)
    assert doc["values"]["env"].get("SINGLE_NODE") == expected


def test_mysql_auto_keeps_84_from_the_existing_values_file(cluster: FakeCluster) -> None:
    fresh(cluster)
    existing = cluster.home / ".tracebloc" / "values.yaml"
    existing.parent.mkdir()
    existing.write_bytes(b'images:\n  mysqlClient:\n    tag: "8.4"\n')
    before = existing.read_bytes()
    doc = cluster.run_json("plan", **CREDENTIALS)
    assert doc["mysql"]["engine"] == "8.4"
    assert doc["values"]["images"] == {"mysqlClient": {"tag": "8.4", "digest": ""}}
    assert existing.read_bytes() == before
    assert sorted(p.name for p in existing.parent.iterdir()) == ["values.yaml"]


def test_mysql_auto_keeps_57_for_an_installed_release(cluster: FakeCluster) -> None:
    cluster.nodes(node("a")).installed(release_row()).status_of("tracebloc", "deployed")
    cluster.values_of(
        "tracebloc",
        "tracebloc",
        {
            "clientId": CREDENTIALS["TRACEBLOC_CLIENT_ID"],
            "env": {"RESOURCE_LIMITS": "cpu=2,memory=8Gi"},
        },
    )
    doc = cluster.run_json("plan", **CREDENTIALS)
    assert doc["release"]["state"] == "present"
    assert doc["mysql"]["engine"] == "5.7"
    assert "images" not in doc["values"]


# --- the helm argv is the same on every OS -------------------------------------------------

HOMES = {
    "linux": ({"HOME": "/home/ana"}, "/home/ana/.tracebloc/values.yaml"),
    "darwin": ({"HOME": "/Users/ana"}, "/Users/ana/.tracebloc/values.yaml"),
    "windows": (
        {"USERPROFILE": "C:\\Users\\ana", "HOME": "/should/not/be/used"},
        "C:\\Users\\ana\\.tracebloc\\values.yaml",
    ),
}


def argv_on(sys_platform: str, mocker: Any, *flags: str) -> tuple[list[str], str]:
    mocker.patch.object(sys, "platform", sys_platform)
    os_ = os_name(sys.platform)
    env, expected_path = HOMES[os_]
    kubeconfig, context = (flags + (None, None))[:2]
    probe = probe_config(env, kubeconfig=kubeconfig, context=context)
    cfg = plan_config(env, probe, os_=os_)
    assert cfg.values_path == expected_path
    argv = upgrade_install_args(
        cfg.probe.release, cfg.chart, cfg.probe.namespace, cfg.values_path, cfg.probe.conn
    )
    return argv, cfg.values_path


@pytest.mark.parametrize("flags", [(), ("/k/config", "ctx")], ids=["plain", "kube-flags"])
def test_helm_argv_identical_on_every_os_but_the_values_path(
    mocker: Any, flags: tuple[str, ...]
) -> None:
    shown = {}
    for sys_platform in ("linux", "darwin", "win32"):
        argv, path = argv_on(sys_platform, mocker, *flags)
        shown[sys_platform] = [part if part != path else "<values>" for part in argv]
        assert argv[argv.index("--values") + 1] == path
    assert shown["linux"] == shown["darwin"] == shown["win32"]
    assert shown["linux"][:10] == [
        "upgrade",
        "--install",
        "tracebloc",
        "tracebloc/client",
        "--namespace",
        "tracebloc",
        "--create-namespace",
        "--cleanup-on-fail",
        "--values",
        "<values>",
    ]


def test_windows_values_path(mocker: Any) -> None:
    _, path = argv_on("win32", mocker)
    assert path == "C:\\Users\\ana\\.tracebloc\\values.yaml"


# --- helm's own answer: a server-side dry run of the planned upgrade -------------------------

DRY_RUN_OK = 'Release "tracebloc" does not exist. Installing it now.\nSTATUS: pending-install\n'
KUBE_VERSION_REFUSAL = (
    "Error: INSTALLATION FAILED: chart requires kubeVersion: >=1.24.0-0 "
    "which is incompatible with Kubernetes v1.20.2\n"
)
LOCAL_CHART = str(REPO / "tests" / "chart")


def dry_runs(cluster: FakeCluster) -> list[list[str]]:
    return [a for a in cluster.calls("helm") if "--dry-run=server" in a]


def test_plan_foresees_that_helm_refuses_the_chart(cluster: FakeCluster) -> None:
    """helm refuses the chart (its kubeVersion excludes the server): plan's verdict is
    helm's refusal and it exits 1, as install would; no remedy names a release to roll
    back or uninstall, because a refused first install leaves none."""
    fresh(cluster).on("helm", "upgrade", "--dry-run=server", stderr=KUBE_VERSION_REFUSAL, rc=1)
    result = cluster.run("plan", "--json", "--chart", LOCAL_CHART, **CREDENTIALS)

    assert result.returncode == 1, result.stderr
    doc = yaml.safe_load(result.stdout)
    verdict = doc["verdict"]
    assert verdict["action"] == "refused"
    assert verdict["exit"] == 1 and doc["exit"] == 1
    assert "chart requires kubeVersion: >=1.24.0-0" in verdict["reason"]
    assert verdict["dry_run"].startswith(
        "refused: exit 1: Error: INSTALLATION FAILED: chart requires"
    )
    assert "rollback" not in verdict["remedy"] and "uninstall" not in verdict["remedy"]
    text = cluster.run("plan", "--chart", LOCAL_CHART, **CREDENTIALS)
    assert text.returncode == 1
    assert (
        "helm dry run:   refused: exit 1: Error: INSTALLATION FAILED" in text.stdout + text.stderr
    )
    # The dry run is the planned command, asked of the server, changing nothing.
    [argv] = dry_runs(cluster)[:1]
    assert argv[:4] == ["upgrade", "--install", "tracebloc", LOCAL_CHART]
    assert argv[-2:] == ["--dry-run=server", "--hide-secret"]


def test_plan_says_when_helm_accepts_the_chart(cluster: FakeCluster) -> None:
    fresh(cluster).on("helm", "upgrade", "--dry-run=server", stdout=DRY_RUN_OK)
    doc = cluster.run_json("plan", "--chart", LOCAL_CHART, **CREDENTIALS)
    assert doc["exit"] == 0
    assert doc["verdict"]["action"] == "install"
    assert doc["verdict"]["dry_run"] == "helm's server-side dry run accepted the chart and values"


def test_plan_does_not_dry_run_a_repository_chart_install_prepares_first(
    cluster: FakeCluster,
) -> None:
    fresh(cluster)
    doc = cluster.run_json("plan", **CREDENTIALS)
    assert dry_runs(cluster) == []
    assert doc["verdict"]["dry_run"].startswith("not run: the chart comes from a repository")


def test_the_dry_run_reads_the_values_from_a_private_file_removed_after(
    cluster: FakeCluster,
) -> None:
    """helm sees the planned values in an owner-only temporary file (never on its command
    line), and the file is gone when plan ends."""
    from tests.fakes.executables import make_executable

    seen = cluster.root / "seen.json"
    make_executable(
        cluster.bin / "helm",
        f"""import json, os, stat, sys
argv = sys.argv[1:]
if "--dry-run=server" in argv:
    path = argv[argv.index("--values") + 1]
    with open({str(seen)!r}, "w") as out:
        json.dump({{"path": path, "mode": stat.S_IMODE(os.stat(path).st_mode),
                   "dir_mode": stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode),
                   "text": open(path).read()}}, out)
"""
        + cluster.program("helm"),
    )
    fresh(cluster).on("helm", "upgrade", "--dry-run=server", stdout=DRY_RUN_OK)
    result = cluster.run("plan", "--chart", LOCAL_CHART, **SECRET_ENV)

    assert result.returncode == 0, result.stderr
    got = yaml.safe_load(seen.read_text())
    assert got["path"] != values_path(cluster)
    assert not os.path.exists(got["path"]) and not os.path.exists(os.path.dirname(got["path"]))
    if sys.platform != "win32":
        assert (got["mode"], got["dir_mode"]) == (0o600, 0o700)
    assert yaml.safe_load(got["text"])["clientPassword"] == CLIENT_PASSWORD
    for argv in cluster.calls():
        assert not any(secret in " ".join(argv) for secret in SECRETS)
    assert not os.path.exists(values_path(cluster))  # plan still writes no values file


def test_no_dry_run_of_a_wedged_release_install_recovers_first(cluster: FakeCluster) -> None:
    """helm would answer "another operation is in progress" for a release left
    pending-upgrade; install rolls it back first, so plan does not take that for a refusal."""
    cluster.nodes(node("laptop", "8", "16Gi")).installed(release_row(status="pending-upgrade"))
    cluster.values_of("tracebloc", "tracebloc", {"clientId": "client-7f3a"})
    cluster.status_of("tracebloc", "pending-upgrade")
    cluster.on(
        "helm",
        "upgrade",
        "--dry-run=server",
        rc=1,
        stderr="Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress\n",
    )
    doc = cluster.run_json("plan", "--chart", LOCAL_CHART, **CREDENTIALS)

    assert doc["exit"] == 0
    assert doc["verdict"]["action"] == "upgrade"
    assert doc["verdict"]["dry_run"].startswith(
        "not run: install first recovers the release (helm rollback)"
    )
    assert dry_runs(cluster) == []
