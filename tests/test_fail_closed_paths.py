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
