"""The first run on a laptop with Docker: one plan, one question (`Install? [y/N]`, default
no) before the first change, blockers before credentials, and no terminal without --yes
is no change. The CLI as a process against fake docker/k3d/kubectl/helm; the question
through a real pseudo-terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster
from tests.fakes.gpu_host import advertises
from tests.fakes.localcluster import (
    creatable,
    docker_running,
    docker_stopped,
    machine_without_cluster,
)
from tests.fakes.terminal import unwrapped
from tests.test_cli_install import env_for, fresh, mutations

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")


def changed_machine(cluster: FakeCluster) -> list[list[str]]:
    """docker/k3d calls that change the machine (reads and version queries left out)."""
    reads = (["info"], ["inspect"], ["version"], ["cluster", "list"])
    return [
        [e["tool"], *e["argv"]]
        for e in cluster.call_log()
        if e["tool"] in ("docker", "k3d") and not any(e["argv"][: len(r)] == list(r) for r in reads)
    ]


@POSIX_ONLY
@pytest.mark.parametrize(
    ("answer", "installs"),
    [
        pytest.param("y", True, id="yes-installs"),
        pytest.param("", False, id="enter-is-no"),
        pytest.param("n", False, id="no-changes-nothing"),
    ],
)
def test_a_fresh_laptop_is_asked_once_before_the_cluster_is_created(
    cluster: FakeCluster, backend: BackendServer, answer: str, installs: bool
) -> None:
    from tests.fakes.terminal import Pty

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    env = cluster.env(**env_for(backend))
    with Pty.spawn(["install"], env=env, cwd=cluster.root) as term:
        term.expect("Install? [y/N]")
        brief = term.screen()
        term.send("d")  # the details: every change with its argv, then the question again
        term.expect("Install? [y/N]")
        shown = unwrapped(term.screen()[len(brief) :])
        assert changed_machine(cluster) == [] and mutations(cluster) == []
        term.send(answer)
        code = term.wait(timeout=90)
        screen = term.screen()

    # Every change outside the engine's directory is listed at `d`, in order.
    steps = [
        "k3d cluster create tracebloc",
        "docker update --restart unless-stopped",
        "k3d kubeconfig merge tracebloc",
        "helm repo add tracebloc",
        "helm upgrade --install tracebloc",
        "kubectl config set-context --current",
    ]
    at = [shown.find(step) for step in steps]
    assert -1 not in at and at == sorted(at), shown
    assert "creates namespace tracebloc if absent" in shown
    # One question (asked again after `d`), and the list is not shown again after it.
    assert "Proceed?" not in screen and screen.count("[y/N]") == 2
    assert "k3d cluster create tracebloc" not in screen[screen.rindex("[y/N]") :]
    if installs:
        assert code == 0, screen
        assert ["k3d", "cluster", "create"] == changed_machine(cluster)[0][:3]
    else:
        assert code == 1, screen
        assert changed_machine(cluster) == [] and mutations(cluster) == []
        assert "Nothing was changed." in screen and "error:" not in screen
        assert not (cluster.home / ".tracebloc" / "tracebloc").exists()  # no release dirs


def test_no_terminal_and_no_yes_refuses_naming_yes_and_changes_nothing(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))

    result = cluster.run("install", **env_for(backend))  # stdin /dev/null, no controlling tty

    assert result.returncode == 2, result.stderr
    assert "no terminal to ask on" in result.stderr and "--yes" in result.stderr
    assert changed_machine(cluster) == [] and mutations(cluster) == []
    assert backend.requests == []  # refused before the credentials were sent


@pytest.mark.parametrize("yes", [pytest.param(True, id="yes"), pytest.param(False, id="asked")])
def test_docker_stopped_is_reported_before_credentials_are_asked_or_sent(
    cluster: FakeCluster, backend: BackendServer, yes: bool
) -> None:
    docker_stopped(machine_without_cluster(fresh(cluster)))
    env = env_for(backend)
    if not yes:  # nobody to type them: the old order would have stopped at the credentials
        del env["TRACEBLOC_CLIENT_ID"], env["TRACEBLOC_CLIENT_PASSWORD"]

    result = cluster.run("install", *(["--yes"] if yes else []), **env)

    assert result.returncode == 1, result.stderr
    assert "Docker is not running" in result.stderr
    assert "credentials" not in result.stderr.lower()
    assert backend.requests == []


@pytest.mark.parametrize("state", ["missing", "stopped"])
def test_plan_exits_as_install_would_when_docker_is_missing_or_stopped(
    cluster: FakeCluster, backend: BackendServer, state: str
) -> None:
    machine_without_cluster(fresh(cluster))
    if state == "missing":
        cluster.remove("docker")
    else:
        docker_stopped(cluster)

    plan = cluster.run("plan", **env_for(backend))
    install = cluster.run("install", "--yes", **env_for(backend))

    assert install.returncode == 1
    assert plan.returncode == install.returncode, plan.stdout + plan.stderr
    said = [line for line in install.stderr.splitlines() if line.startswith("error:")][0]
    assert said in plan.stdout + plan.stderr


def test_plan_lists_the_same_steps_install_asks_about_with_exact_argv(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    doc = cluster.run_json("plan", **env_for(backend))

    argvs = [c["argv"] for c in doc["changes"]]
    assert argvs[:3] == [list(a) for a in doc["local_cluster"]["commands"]]
    assert [a[:3] for a in argvs[3:]] == [
        ["helm", "repo", "add"],
        ["helm", "upgrade", "--install"],
        ["kubectl", "config", "set-context"],
    ]
    assert argvs[4] == doc["helm"]["argv"]

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    ran = [[e["tool"], *e["argv"]] for e in cluster.call_log()]
    assert [argv for argv in argvs if argv not in ran] == []  # each step ran, as shown


def test_a_password_starting_with_a_tools_name_does_not_mask_the_tool(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    password = "k3d-Secret-9!"

    result = cluster.run("plan", "--json", **env_for(backend, TRACEBLOC_CLIENT_PASSWORD=password))

    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["local_cluster"]["commands"][0][:3] == ["k3d", "cluster", "create"]
    assert doc["changes"][0]["argv"][:3] == ["k3d", "cluster", "create"]
    assert password not in result.stdout and "k3d-Secret" not in result.stdout
    assert "********" in result.stdout  # the password itself is still masked (the values)


@pytest.mark.parametrize(
    "variable",
    ["TRACEBLOC_NO_AUTOSTART", "TRACEBLOC_SKIP_LEFTOVER_GUARD", "TB_SET_CONTEXT_NAMESPACE"],
)
@pytest.mark.parametrize("command", [("plan",), ("install", "--yes")], ids=["plan", "install"])
def test_a_yes_no_variable_with_a_typo_is_exit_2_naming_it(
    cluster: FakeCluster, backend: BackendServer, variable: str, command: tuple[str, ...]
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster))))

    result = cluster.run(*command, **env_for(backend, **{variable: "ture"}))

    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{variable}='ture' is not understood" in result.stderr
    assert changed_machine(cluster) == [] and mutations(cluster) == []


# Docker without the NVIDIA runtime is set up by the GPU steps: tests/test_cli_gpu_host.py.
@pytest.mark.parametrize("runtimes", [pytest.param(("nvidia", "runc"), id="nvidia-runtime")])
def test_a_gpu_is_requested_only_where_the_local_cluster_can_give_one(
    cluster: FakeCluster, backend: BackendServer, runtimes: tuple[str, ...]
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster)), runtimes=runtimes))
    cluster.install("nvidia-smi")
    cluster.on("nvidia-smi", "-L", stdout="GPU 0: NVIDIA RTX A4000 (UUID: GPU-1)\n")
    cluster.install("nvidia-ctk")
    cluster.on("nvidia-ctk", "--version", stdout="NVIDIA Container Toolkit CLI version 1.17.8\n")
    cluster.on("docker", "run", "--gpus", stdout="NVIDIA-SMI 550.54  Driver Version: 550.54\n")
    advertises(cluster)

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 0, result.stderr
    create = next(c for c in changed_machine(cluster) if c[1:3] == ["cluster", "create"])
    values = (cluster.home / ".tracebloc" / "values.yaml").read_text(encoding="utf-8")
    if "nvidia" in runtimes:
        assert "--gpus=all" in create and "nvidia.com/gpu=1" in values
    else:
        assert "--gpus=all" not in create and "nvidia.com/gpu" not in values
        assert (
            "NVIDIA container toolkit" in result.stdout
            and "run the installer again" in result.stdout
        )


@pytest.mark.parametrize("command", [("plan",), ("install", "--yes"), ("status",)])
def test_kubeconfig_naming_a_missing_file_is_exit_2_naming_the_variable(
    cluster: FakeCluster, backend: BackendServer, command: tuple[str, ...]
) -> None:
    fresh(cluster)
    missing = str(cluster.root / "no-such-kubeconfig")

    result = cluster.run(*command, **env_for(backend, KUBECONFIG=missing))

    assert result.returncode == 2, result.stdout + result.stderr
    assert f"KUBECONFIG={missing!r} names no file that exists" in result.stderr
    assert mutations(cluster) == [] and backend.requests == []


def test_install_help_lists_the_data_directory_flags(cluster: FakeCluster) -> None:
    result = cluster.run("install", "--help")

    assert result.returncode == 0
    for flag in ("--data-dir PATH", "--reuse-data", "--wipe-data"):
        assert flag in result.stdout


def test_download_to_without_internet_says_where_to_run_it_and_leaves_no_empty_tree(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    from tests.fakes.mirror import PLATFORM, artifact, write_manifest

    entries = {
        (t, PLATFORM): {**artifact(t, PLATFORM), "sha256": "0" * 64}
        for t in ("kubectl", "helm", "k3d")
    }
    manifest = write_manifest(tmp_path / "manifest.json", entries)
    carry = tmp_path / "usb" / "tools"

    result = cluster.run(
        "tools",
        "--download-to",
        str(carry),
        TB_TEST_TOOLS_MANIFEST=str(manifest),
        TRACEBLOC_TOOLS_MIRROR="https://127.0.0.1:9/",  # nothing listens
        TRACEBLOC_DOWNLOAD_TIMEOUT_S="20",
    )

    assert result.returncode == 1, result.stderr
    assert "on a machine with internet access, copy DIR to this machine" in result.stderr
    assert not (tmp_path / "usb").exists()


def test_plans_memory_line_labels_dockers_budget_and_the_hosts_memory_apart(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    creatable(docker_running(machine_without_cluster(fresh(cluster)), memory_gib=1.5, cpus=2))

    result = cluster.run("plan", **env_for(backend))

    line = next(x for x in result.stdout.splitlines() if x.startswith("machine:"))
    budget, _, host = line.partition("host memory:")
    assert "2 CPUs and 1.5 GiB memory (Docker's budget" in budget and "free" not in budget
    total, free = (float(part.split("GiB")[0].split()[-1]) for part in host.split(","))
    assert free <= total, line


@POSIX_ONLY
def test_under_curl_pipe_sh_the_question_is_asked_on_the_controlling_terminal(
    cluster: FakeCluster, backend: BackendServer, tmp_path: Path
) -> None:
    from tests.fakes.cluster import installer_command
    from tests.fakes.terminal import Pty

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    stderr = tmp_path / "stderr.txt"
    term = Pty.start(
        [*installer_command(), "install"],
        cwd=cluster.root,
        env=cluster.env(**env_for(backend)),
        stdio_log=stderr,
    )
    try:
        term.expect("Install? [y/N]")  # stdin is /dev/null: only /dev/tty reaches the user
        assert changed_machine(cluster) == []
        term.send("n")
        code = term.wait(timeout=60)
    finally:
        term.close()

    assert code == 1
    assert "k3d cluster create tracebloc" in stderr.read_text(encoding="utf-8")
    assert changed_machine(cluster) == [] and mutations(cluster) == []


def test_a_cluster_whose_state_moved_after_the_answer_gets_no_unlisted_change(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """The question came before the cluster was up; once it is, a wedged release there would
    need a recovery the list did not hold: the run stops and says so, and neither that
    recovery nor the upgrade runs."""
    from tests.fakes.cluster import release_row
    from tests.fakes.localcluster import CREATED
    from tests.test_cli_install import CLIENT_ID

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    cluster.installed(release_row(status="pending-install"), after=CREATED)
    cluster.values_of("tracebloc", "tracebloc", {"clientId": CLIENT_ID}, after=CREATED)
    cluster.status_of("tracebloc", "pending-install")

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 1, result.stderr
    assert "was not in the list you agreed to" in result.stderr, result.stderr
    assert "helm uninstall tracebloc" in result.stderr  # the change it would have needed
    helm_changes = [a for a in cluster.calls("helm") if a[0] in ("uninstall", "rollback")]
    assert helm_changes == [] and not [a for a in cluster.calls("helm") if a[0] == "upgrade"]
    assert ["k3d", "cluster", "create"] == changed_machine(cluster)[0][:3]  # listed, so made


def test_a_stop_after_the_cluster_was_created_names_it_and_never_says_nothing_was_changed(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    """The guard refuses in the cluster the run just created (a release there it cannot
    read): its "nothing was changed" would be untrue, so the stop names what was made."""
    from tests.fakes.cluster import release_row
    from tests.fakes.localcluster import CREATED

    creatable(docker_running(machine_without_cluster(fresh(cluster))))
    cluster.installed(release_row(), after=CREATED)
    cluster.on("helm", "get", "values", rc=1, stderr="Error: forbidden\n", after=CREATED)

    result = cluster.run("install", "--yes", **env_for(backend))

    assert result.returncode == 3, result.stderr
    assert "nothing was changed" not in result.stderr
    assert (
        "nothing else was changed (made as listed: the local cluster tracebloc created)"
        in result.stderr
    ), result.stderr
    assert not [a for a in cluster.calls("helm") if a[0] == "upgrade"]
