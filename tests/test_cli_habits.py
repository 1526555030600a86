"""kubectl's habits, as a process: global options before or after the command, `-o json`,
`completion` (run in the real bash, zsh and fish), "did you mean", no abbreviated options,
one-line usage errors, `help COMMAND`, help that fits at 80 columns."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fakes.cluster import FakeCluster, installer_command
from tests.test_cli_install import fresh, mutations

COMMANDS = [
    "install",
    "plan",
    "probe",
    "version",
    "tools",
    "status",
    "diagnose",
    "uninstall",
    "prepare-host",
    "completion",
    "help",
]


def namespaces_read(cluster: FakeCluster) -> set[str]:
    out = set()
    for entry in cluster.call_log():
        argv = entry["argv"]
        out |= {argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-n", "--namespace")}
    return out


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["-n", "team-a", "status"], id="before"),
        pytest.param(["status", "-n", "team-a"], id="after"),
        pytest.param(["--namespace=team-a", "status"], id="before-with-equals"),
        pytest.param(["-nteam-a", "status"], id="before-attached"),
    ],
)
def test_the_namespace_may_come_before_or_after_the_command(
    cluster: FakeCluster, args: list[str]
) -> None:
    fresh(cluster)
    result = cluster.run(*args)
    assert "unrecognized" not in result.stderr and "unknown" not in result.stderr, result.stderr
    assert result.returncode in (0, 1)  # status answered (healthy or not)
    assert "team-a" in namespaces_read(cluster)


def test_context_and_kubeconfig_before_probe(cluster: FakeCluster, tmp_path: Path) -> None:
    fresh(cluster)
    result = cluster.run("--context", "prod-eu", "--verbose", "probe", "--json")
    assert result.returncode == 0, result.stderr
    contexts = [e["argv"] for e in cluster.call_log() if "--context" in e["argv"]]
    assert contexts and all(argv[argv.index("--context") + 1] == "prod-eu" for argv in contexts)


@pytest.mark.parametrize("command", [["version"], ["probe"], ["tools"], ["status"]])
def test_o_json_is_json(cluster: FakeCluster, command: list[str]) -> None:
    fresh(cluster)
    plain = cluster.run(*command, "--json")
    for form in (["-o", "json"], ["-ojson"], ["--output=json"]):
        other = cluster.run(*command, *form)
        assert other.returncode == plain.returncode
        assert _shape(other.stdout) == _shape(plain.stdout)
    before = cluster.run("-o", "json", *command)
    assert before.returncode == plain.returncode, before.stderr


def _shape(text: str) -> object:
    """The document with its numbers left out: the machine's free memory moves between runs."""
    import json

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    return strip(json.loads(text))


def test_a_bad_option_under_o_json_answers_in_json(cluster: FakeCluster) -> None:
    result = cluster.run("status", "-o", "json", "--bogus")
    assert result.returncode == 2
    assert '"exit": 2' in result.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(["instal"], "unknown command 'instal'; did you mean install?", id="command"),
        pytest.param(["help", "uninstal"], "did you mean uninstall?", id="help-topic"),
        pytest.param(["uninstall", "--delete-dta"], "did you mean --delete-data?", id="option"),
        pytest.param(["uninstall", "--delete-c"], "did you mean --delete-cluster?", id="prefix"),
        pytest.param(["-n", "x", "staus"], "did you mean status?", id="after-a-global"),
    ],
)
def test_a_mistyped_word_is_one_line_with_the_closest_one(
    cluster: FakeCluster, args: list[str], said: str
) -> None:
    result = cluster.run(*args)
    assert result.returncode == 2
    assert said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert cluster.calls() == []


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["uninstall", "--delete-c", "--ye"], id="delete-cluster-and-yes"),
        pytest.param(["uninstall", "--ye"], id="yes"),
        pytest.param(["uninstall", "--delete-d", "--yes"], id="delete-data"),
        pytest.param(["install", "--ye"], id="install-yes"),
        pytest.param(["plan", "--values-o", "x.yaml"], id="values-out"),
    ],
)
def test_no_option_is_taken_from_an_abbreviation(cluster: FakeCluster, args: list[str]) -> None:
    fresh(cluster)
    result = cluster.run(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "unknown option" in result.stderr
    assert cluster.calls() == [] and mutations(cluster) == []


def test_every_parser_refuses_abbreviations() -> None:
    from installer import cli

    parser = cli.build_parser()
    assert parser.allow_abbrev is False
    assert all(sub.allow_abbrev is False for sub in parser.commands.values())
    assert set(parser.commands) == set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_command_is_command_help(cluster: FakeCluster, command: str) -> None:
    env = {"COLUMNS": "80"}
    assert (
        cluster.run("help", command, **env).stdout == cluster.run(command, "--help", **env).stdout
    )


def _rows(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


def test_help_fits_80_columns_and_its_limits(cluster: FakeCluster) -> None:
    env = {"COLUMNS": "80"}
    top = _rows(cluster.run("--help", **env).stdout)
    assert len(top) <= 45 and max(map(len, top)) <= 80, "\n".join(top)
    assert _rows(cluster.run("help", **env).stdout) == top
    for command in COMMANDS:
        rows = _rows(cluster.run(command, "--help", **env).stdout)
        assert len(rows) <= 40 and max(map(len, rows)) <= 80, (command, "\n".join(rows))
        assert "exit codes:" not in "\n".join(rows)  # said once, at the top level
        assert "130 interrupted" not in "\n".join(rows)
    assert len(_rows(cluster.run("version", "--help", **env).stdout)) <= 15


def test_install_help_lists_every_option_install_accepts(cluster: FakeCluster) -> None:
    from installer import cli

    shown = cluster.run("install", "--help", COLUMNS="80").stdout
    accepted = cli.build_parser().commands["install"].option_words()
    # Read before argparse (decide/old_settings.translate_argv): listed all the same.
    accepted += ["--force", "--reinstall", "--data-dir", "--reuse-data", "--wipe-data"]
    missing = [word for word in accepted if word not in shown]
    assert missing == []


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_completion_prints_a_script_for_each_shell(cluster: FakeCluster, shell: str) -> None:
    result = cluster.run("completion", shell)
    assert result.returncode == 0, result.stderr
    assert "tracebloc-installer" in result.stdout and "uninstall" in result.stdout
    assert "delete-cluster" in result.stdout


def _script(cluster: FakeCluster, shell: str, tmp_path: Path) -> Path:
    path = tmp_path / f"completion.{shell}"
    path.write_text(cluster.run("completion", shell).stdout)
    return path


BASH_ASK = """source {script}
ask() {{ COMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=();
        _tracebloc_installer; echo "${{COMPREPLY[*]}}"; }}
ask tracebloc-installer ins
ask tracebloc-installer uninstall --delete-
ask tracebloc-installer -n team-a status --ver
ask tracebloc-installer completion z
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_and_options(cluster: FakeCluster, tmp_path: Path) -> None:
    script = _script(cluster, "bash", tmp_path)
    out = subprocess.run(
        ["bash", "-c", BASH_ASK.format(script=script)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.splitlines()
    assert out == ["install", "--delete-data --delete-cluster", "--verbose", "zsh"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (.ci/run adds it)")
def test_fish_completes_commands_and_options(cluster: FakeCluster, tmp_path: Path) -> None:
    script = _script(cluster, "fish", tmp_path)

    def ask(line: str) -> list[str]:
        done = subprocess.run(
            ["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert "install" in ask("tracebloc-installer ins")
    assert "--delete-cluster" in ask("tracebloc-installer uninstall --delete-")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (.ci/run adds it)")
def test_zsh_loads_the_script_and_registers_the_completion(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    script = _script(cluster, "zsh", tmp_path)
    check = subprocess.run(
        ["zsh", "-n", str(script)], capture_output=True, text=True, timeout=30, check=False
    )
    assert check.returncode == 0, check.stderr
    loaded = subprocess.run(
        [
            "zsh",
            "-f",
            "-c",
            f"autoload -Uz compinit && compinit -u; "
            f"source {script}; print -r -- $_comps[tracebloc-installer]",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert loaded.stdout.strip() == "_tracebloc_installer", loaded.stderr


def test_completion_refuses_an_unknown_shell_in_one_line() -> None:
    result = subprocess.run(
        [*installer_command(), "completion", "tcsh"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
