"""Nothing that is not the client's is deleted, and every path obeys one set of rules,
wherever it comes from (issue 19): the CLI as a process against fake tools and a private HOME.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.fakes.cluster import FakeCluster, node

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths, links and signals")
CREDENTIALS = {"TRACEBLOC_CLIENT_ID": "client-7f3a", "TRACEBLOC_CLIENT_PASSWORD": "Cl1ent-P4ss:#w0rd",
               "TRACEBLOC_SKIP_PREFLIGHT": "1", "TRACEBLOC_BACKEND_URL": "http://127.0.0.1:9"}  # fmt: skip


def plannable(cluster: FakeCluster) -> FakeCluster:
    return cluster.nodes(node("laptop", "8", "16Gi")).installed().installable()


# --- paths are absolute ----------------------------------------------------------------------


@pytest.mark.parametrize("flag", [
    pytest.param(["HOST_DATA_DIR=tbdata"], id="variable"),
    pytest.param(["--data-dir=tbdata"], id="twin-flag"),
])  # fmt: skip
def test_a_relative_data_dir_is_bad_input_named(cluster: FakeCluster, flag: list[str]) -> None:
    plannable(cluster)
    env = dict(CREDENTIALS)
    args = ["plan"]
    if flag[0].startswith("HOST_DATA_DIR="):
        env["HOST_DATA_DIR"] = flag[0].split("=", 1)[1]
    else:
        args.append(flag[0])
    result = cluster.run(*args, **env)

    assert result.returncode == 2, result.stderr
    assert "HOST_DATA_DIR='tbdata' is not an absolute path" in result.stderr
    assert not (cluster.root / "tbdata").exists()


def test_a_tilde_data_dir_is_the_home_not_a_folder_named_tilde(cluster: FakeCluster) -> None:
    plannable(cluster)
    doc = cluster.run_json("plan", "--data-dir=~/tbdata2", **CREDENTIALS)

    assert doc["values_path"] == str(cluster.home / "tbdata2" / "values.yaml")


@POSIX
def test_a_linked_data_dir_is_refused_naming_where_it_points(cluster: FakeCluster) -> None:
    """The leftover guard would look behind the link for nothing, and the cluster be
    created on top of an old client's MySQL: refused, in plan as in install."""
    plannable(cluster)
    elsewhere = cluster.root / "elsewhere"
    (elsewhere / "tracebloc" / "mysql").mkdir(parents=True)
    (elsewhere / "tracebloc" / "mysql" / "ibdata1").write_bytes(b"rows")
    (cluster.home / ".tracebloc").symlink_to(elsewhere)
    for command in (["plan"], ["install", "--yes"]):
        result = cluster.run(*command, **CREDENTIALS)

        assert result.returncode == 2, result.stderr
        assert f"is a symbolic link to {elsewhere}" in result.stderr
    assert (elsewhere / "tracebloc" / "mysql" / "ibdata1").exists()
    assert [c for c in cluster.calls("helm") if c[:1] in (["upgrade"], ["install"])] == []


@POSIX
@pytest.mark.parametrize(("typed", "said"), [
    pytest.param("~", "is your home directory itself", id="tilde-is-the-home"),
    pytest.param("tbdata", "'tbdata' is not an absolute path", id="relative"),
    pytest.param("/etc/tracebloc", "inside the system directory /etc", id="system-path"),
])  # fmt: skip
def test_a_path_typed_at_the_leftover_prompt_obeys_the_data_dir_rules(
    cluster: FakeCluster, typed: str, said: str
) -> None:
    from tests.fakes.localcluster import creatable, docker_running, machine_without_cluster
    from tests.fakes.terminal import Pty

    creatable(docker_running(machine_without_cluster(plannable(cluster))))
    old = cluster.home / ".tracebloc" / "tracebloc" / "mysql"
    old.mkdir(parents=True)
    (old / "ibdata1").write_bytes(b"rows")
    home_mode = os.stat(cluster.home).st_mode
    env = cluster.env(**CREDENTIALS, PF_MIN_DISK_GB="0")
    with Pty.spawn(["install"], env=env, cwd=cluster.root) as term:
        term.expect("Proceed? [Y/n]")
        term.send("y")
        term.expect("Choice [r/w/n/a]")
        term.send("n")
        term.expect("New data directory")
        term.send(typed)
        code = term.wait()
        screen = term.screen()

    assert code == 2, screen
    assert said in screen
    assert os.stat(cluster.home).st_mode == home_mode
    assert not (cluster.home / "mysql").exists() and not (cluster.root / "tbdata").exists()
    assert not [c for c in cluster.calls("k3d") if c[:2] == ["cluster", "create"]]
