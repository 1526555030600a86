"""A password inside a URL (`https://admin:<pw>@host:6443` as the kube API server, a proxy,
a mirror) is masked wherever the URL is printed or logged: `plan`, `plan --json`, `install`'s
output and `install.log`, the CLI as a process against the fake cluster."""

from __future__ import annotations

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import KUBECONFIG_OF_A_CLUSTER, FakeCluster
from tests.test_cli_install import env_for, fresh

URL_PASSWORD = "Adm1nPw-in-the-url"
SERVER = f"https://admin:{URL_PASSWORD}@10.1.2.3:6443"
MIRROR_PASSWORD = "M1rrorPw-in-the-url"


def test_a_password_in_the_kube_api_server_url_is_never_shown_or_logged(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster).kube_target(context="office", server=SERVER)
    cluster.kubeconfig.write_text(
        KUBECONFIG_OF_A_CLUSTER.replace("https://10.1.2.3:6443", SERVER), encoding="utf-8"
    )
    env = env_for(backend)

    plan = cluster.run("plan", **env)
    plan_json = cluster.run("plan", "--json", **env)
    install = cluster.run("install", "--yes", **env)

    assert install.returncode == 0, install.stderr
    log = (cluster.home / ".tracebloc" / "install.log").read_text(encoding="utf-8")
    shown = [
        plan.stdout,
        plan.stderr,
        plan_json.stdout,
        plan_json.stderr,
        install.stdout,
        install.stderr,
        log,
    ]
    assert not [text for text in shown if URL_PASSWORD in text]
    assert "https://admin:********@10.1.2.3:6443" in plan.stdout + plan.stderr
    assert "https://admin:********@10.1.2.3:6443" in plan_json.stdout
    assert "admin:********@10.1.2.3" in log


def test_a_mirror_url_with_a_password_is_refused_without_showing_it(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    mirror = f"https://bot:{MIRROR_PASSWORD}@mirror.example/tools"
    result = cluster.run("install", "--yes", **env_for(backend, TRACEBLOC_TOOLS_MIRROR=mirror))

    assert result.returncode == 2, result.stderr
    assert "https://bot:********@mirror.example/tools" in result.stderr
    log = cluster.home / ".tracebloc" / "install.log"
    for text in (result.stdout, result.stderr, log.read_text() if log.exists() else ""):
        assert MIRROR_PASSWORD not in text
