"""One settings object and one paths object (issue 25): `commands/settings.build` reads the
environment once for a run and refuses bad input there (exit 2, one line naming the variable
or flag); `decide/paths.py` computes every location; no other module reads a registered
variable except the readers listed below, which are still to move."""

from __future__ import annotations

import argparse
from collections import defaultdict

import pytest

from installer.commands import settings
from installer.decide import paths
from installer.decide import settings as dsettings
from installer.decide.errors import BadInput
from installer.decide.redact import Redactor
from installer.decide.variables import VARIABLES
from tests.fakes.cluster import FakeCluster, node
from tests.test_packaging import engine_reads

# Where a registered variable (decide/variables.py) may be read by name: the settings builder
# and the parsers it runs (config.py, decide/settings.py's number and yes/no readers,
# decide/yesno.py, decide/paths.py), and the old settings' notices (decide/old_settings.py).
# Passing the whole environment through to a child (edges/proc.py, edges/childio.py) reads no name.
BUILDER = {
    "installer/config.py",
    "installer/commands/settings.py",
    "installer/decide/localcluster_given.py",
    "installer/decide/paths.py",
    "installer/decide/settings.py",
    "installer/decide/yesno.py",
}

# Readers not yet moved into the builder: each is named so that none is added unnoticed and
# the list only shrinks (an entry that no longer reads its variable fails too).
NOT_YET_MOVED = {
    # no-color.org's convention, "set to anything": not a setting the builder could refuse.
    "installer/present/ui.py": {"NO_COLOR", "TB_PLAIN"},
}


def registered_reads() -> dict[str, set[str]]:
    names, unresolved = engine_reads()
    assert not unresolved
    registered = {item.name for item in VARIABLES}
    found: dict[str, set[str]] = defaultdict(set)
    for name, sites in names.items():
        for site in sites:
            if name in registered:
                found[site.split(":")[0]].add(name)
    return found


def test_no_module_outside_the_settings_builder_reads_a_registered_variable() -> None:
    outside = {
        module: names for module, names in registered_reads().items() if module not in BUILDER
    }
    added = {
        m: sorted(n - NOT_YET_MOVED.get(m, set()))
        for m, n in outside.items()
        if n - NOT_YET_MOVED.get(m, set())
    }
    assert added == {}, "read it in commands/settings.build (or config.py) and pass the value"
    moved = {
        m: sorted(n - outside.get(m, set()))
        for m, n in NOT_YET_MOVED.items()
        if n - outside.get(m, set())
    }
    assert moved == {}, "no longer read there: strike it from NOT_YET_MOVED"


def test_the_data_directory_and_the_paths_under_it_are_named_once() -> None:
    where = paths.paths({"HOME": "/home/ana"}, "linux")
    assert where == paths.Paths(
        home="/home/ana",
        data_dir="/home/ana/.tracebloc",
        data_dir_source="HOME",
        log_file="/home/ana/.tracebloc/install.log",
        data_lock="/home/ana/.tracebloc/install.lock",
        locks_dir="/home/ana/.tracebloc/locks",
        tools_cache="/home/ana/.tracebloc/bin",
    )


def test_windows_paths_use_the_profile_and_backslashes() -> None:
    where = paths.paths({"USERPROFILE": "C:\\Users\\ana", "HOST_DATA_DIR": "D:\\tb"}, "windows")
    assert (where.data_dir, where.log_file, where.locks_dir) == (
        "D:\\tb",
        "D:\\tb\\install.log",
        "C:\\Users\\ana\\.tracebloc\\locks",
    )
    assert where.data_dir_source == "HOST_DATA_DIR"
    assert where.tools_cache == "C:\\Users\\ana\\AppData\\Local\\tracebloc\\bin"


def test_a_data_directory_without_a_home_has_no_default_tools_cache() -> None:
    where = paths.paths({"HOST_DATA_DIR": "/srv/tb"}, "linux")
    assert (where.data_dir, where.locks_dir, where.tools_cache) == ("/srv/tb", "/srv/tb", None)


def test_no_home_and_no_data_directory_is_bad_input_naming_both() -> None:
    with pytest.raises(BadInput) as caught:
        paths.paths({}, "linux")
    assert caught.value.message == "HOME is not set, so there is no default data directory"
    assert "HOST_DATA_DIR" in caught.value.remedy


def args_for(command: str, **given: object) -> argparse.Namespace:
    defaults: dict[str, object] = {
        "command": command,
        "kubeconfig": None,
        "namespace": None,
        "context": None,
        "chart": None,
        "keep_context_namespace": False,
    }
    return argparse.Namespace(**{**defaults, **given})


def test_probe_and_status_settings_need_no_data_directory() -> None:
    # No HOME: a read-only command keeps nothing, so it is not refused for want of one.
    built = settings.build(args_for("status"), {}, Redactor())
    assert built.paths is None and built.plan is None and built.probe.namespace == "tracebloc"


def test_plan_settings_hold_every_validated_setting(cluster: FakeCluster) -> None:
    env = {
        "HOME": str(cluster.home),
        "TRACEBLOC_SKIP_PREFLIGHT": "yes",
        "PF_MIN_CPU": "1",
        "TB_METRICS_WAIT_S": "5",
    }
    built = settings.build(args_for("plan"), env, Redactor())
    assert built.plan is not None and built.install is not None and built.paths is not None
    assert built.plan.host_data_dir == built.paths.data_dir == str(cluster.home / ".tracebloc")
    assert built.preflight_skipped is True and built.flags == {"TRACEBLOC_SKIP_PREFLIGHT": True}
    assert built.thresholds is not None and built.thresholds.min_cpu == 1
    assert built.install.metrics_wait_s == 5
    assert built.backend_url is not None and built.backend_url.startswith("https://")


@pytest.mark.parametrize(
    "variable",
    [
        "TRACEBLOC_ALLOW_NETWORK_FS",
        "TRACEBLOC_SKIP_DAILY_USER",
        "TRACEBLOC_SKIP_PREFLIGHT",
        "TRACEBLOC_FORCE_REINSTALL",
        "TRACEBLOC_NO_REBOOT",
    ],
)
def test_plan_refuses_a_typo_in_any_yes_no_variable_before_reading_the_cluster(
    cluster: FakeCluster, variable: str
) -> None:
    # TRACEBLOC_SKIP_DAILY_USER is read only on Windows, TRACEBLOC_ALLOW_NETWORK_FS only on
    # network storage: a typo in either was silently not read at all on a Linux laptop.
    cluster.nodes(node("a")).installed().kube_target()
    result = cluster.run("plan", **{variable: "ture"})

    assert result.returncode == 2, result.stderr
    assert f"{variable}='ture' is not understood" in result.stderr
    assert cluster.calls() == []


def test_plan_settings_carry_the_ca_bundle_and_its_variable_for_every_command(
    cluster: FakeCluster,
) -> None:
    # The commands (the network preflight, the chart repository, the credential check) read
    # the bundle from the plan configuration the builder made, never from the environment.
    import trustme

    pem = cluster.home / "corp-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(pem))
    env = {"HOME": str(cluster.home), "CURL_CA_BUNDLE": str(pem), "PF_MIN_MEM_GB": "3"}
    built = settings.build(args_for("plan"), env, Redactor())
    assert built.plan is not None
    assert (built.plan.ca_bundle, built.plan.ca_variable) == (str(pem), "CURL_CA_BUNDLE")
    assert built.plan.thresholds.min_mem_gib == 3 and built.plan.preflight_skipped is False
    assert built.ca_bundle == built.plan.ca_bundle


def test_the_proxy_variables_are_read_once_as_given() -> None:
    env = {
        "HTTPS_PROXY": "http://ana:p@ss@proxy:3128",
        "NO_PROXY": "",
        "no_proxy": "corp",
        "PATH": "/bin",
    }
    assert dsettings.proxy_environment(env) == {
        "HTTPS_PROXY": "http://ana:p@ss@proxy:3128",
        "NO_PROXY": "",
        "no_proxy": "corp",
    }
    # Kept as given, blank ones too (the readers' `or` decides, as it did on the environment);
    # the runtime's daemon is handed the non-blank ones, as before.
    assert dsettings.runtime_given(env).proxy == {
        "HTTPS_PROXY": "http://ana:p@ss@proxy:3128",
        "no_proxy": "corp",
    }
