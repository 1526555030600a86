"""The twins' flags and variables: old flags work or stop naming their replacement (req 7)."""

from __future__ import annotations

import json

import pytest

from installer.decide.old_settings import notices, translate_argv
from tests.fakes.cluster import FakeCluster, node


@pytest.mark.parametrize(
    ("argv", "kept", "env"),
    [
        pytest.param(["--force"], [], {"TRACEBLOC_FORCE_REINSTALL": "1"}, id="force-re-applies"),
        pytest.param(
            ["--reinstall", "install", "--yes"],
            ["install", "--yes"],
            {"TRACEBLOC_FORCE_REINSTALL": "1"},
            id="reinstall",
        ),
        pytest.param(["--reuse-data"], [], {"TB_LEFTOVER_ACTION": "reuse"}, id="reuse-data"),
        pytest.param(["--wipe-data"], [], {"TB_LEFTOVER_ACTION": "wipe"}, id="wipe-data"),
        pytest.param(["--data-dir=~/tb"], [], {"HOST_DATA_DIR": "~/tb"}, id="data-dir-equals"),
        pytest.param(
            ["--data-dir", "/h/x", "plan"],
            ["plan"],
            {"HOST_DATA_DIR": "/h/x"},
            id="data-dir-separate",
        ),
        pytest.param(["-NoReboot"], [], {"TRACEBLOC_NO_REBOOT": "1"}, id="powershell-no-reboot"),
        pytest.param(
            ["-DailyUser", "CONTOSO\\bob", "-Resume"],
            [],
            {"TRACEBLOC_DAILY_USER": "CONTOSO\\bob", "TRACEBLOC_RESUME": "1"},
            id="powershell-daily-user-and-resume",
        ),
        pytest.param(
            ["install", "--daily-user=bob", "--no-reboot", "--resume"],
            ["install"],
            {"TRACEBLOC_DAILY_USER": "bob", "TRACEBLOC_NO_REBOOT": "1", "TRACEBLOC_RESUME": "1"},
            id="the-engines-own-resume-command",
        ),
        pytest.param(["-help"], ["--help"], {}, id="powershell-help-any-case"),
        pytest.param(
            ["plan", "--", "--force"], ["plan", "--", "--force"], {}, id="after-double-dash"
        ),
        pytest.param(
            ["--force", "--prepare-host"],
            ["prepare-host"],
            {"TRACEBLOC_FORCE_REINSTALL": "1"},
            id="prepare-host-flag-at-any-position",
        ),
        pytest.param(["prepare-host"], ["prepare-host"], {}, id="prepare-host-command"),
    ],
)
def test_old_flags_that_still_mean_something(
    argv: list[str], kept: list[str], env: dict[str, str]
) -> None:
    done = translate_argv(argv)
    assert done.refused is None
    assert done.argv == kept
    assert done.env == env


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        pytest.param(["--diagnose"], "tracebloc-installer diagnose", id="diagnose"),
        pytest.param(["-Diagnose"], "tracebloc-installer diagnose", id="powershell-diagnose"),
        pytest.param(
            ["-DailyUser"], "needs a user name", id="powershell-daily-user-without-a-name"
        ),
        pytest.param(["--data-dir="], "needs a path", id="data-dir-empty"),
    ],
)
def test_old_flags_whose_job_moved_are_refused_naming_the_replacement(
    argv: list[str], named: str
) -> None:
    assert named in (translate_argv(argv).refused or "")


def test_a_variable_no_longer_read_gets_one_line_naming_the_replacement() -> None:
    said = notices(
        {
            "TRACEBLOC_INSTALL_REF": "v1",
            "K3D_VERSION": "latest",
            "TB_NAMESPACE": "x",
            "HELM_VERSION": "",
        }
    )
    assert said == [
        "K3D_VERSION is ignored: the engine brings the k3d it verified; a version variable "
        "would fetch one nobody checked",
        "TRACEBLOC_INSTALL_REF is not read any more: use TRACEBLOC_INSTALLER_VERSION "
        "(bootstrap scripts)",
    ]


def test_cli_refuses_diagnose_with_exit_2_not_argparse(cluster: FakeCluster) -> None:
    result = cluster.run("--diagnose")
    assert result.returncode == 2
    assert "replaced by: tracebloc-installer diagnose" in result.stderr
    assert "unrecognized arguments" not in result.stderr
    assert cluster.calls() == []


def test_cli_data_dir_flag_sets_the_data_directory(cluster: FakeCluster) -> None:
    # plan is install's dry run: it reads what is installed with `helm list -A` (empty here)
    cluster.nodes(node("a")).installed().kube_target()
    chosen = cluster.home / "elsewhere"
    result = cluster.run(
        "--data-dir=" + str(chosen), "plan", "--json", TRACEBLOC_SKIP_REBOOT_PROMPT="1"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["verdict"]["action"] == "install"
    assert str(chosen / "values.yaml") in result.stdout
    assert "note: TRACEBLOC_SKIP_REBOOT_PROMPT is ignored" in result.stderr


@pytest.mark.parametrize("name", ["TRACEBLOC_NO_TELEMETRY", "DO_NOT_TRACK"])
def test_a_telemetry_opt_out_is_answered_with_what_is_true(cluster: FakeCluster, name: str) -> None:
    cluster.nodes(node("a")).installed().kube_target()
    result = cluster.run("plan", "--json", **{name: "1"})
    assert result.returncode == 0, result.stderr
    assert (
        f"note: {name} is ignored: tracebloc-installer sends no telemetry, so there is "
        "nothing to turn off"
    ) in result.stderr
