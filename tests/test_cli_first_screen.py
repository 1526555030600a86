"""What a person sees on an 80-column terminal: the question in at most 12 rows (what is
installed or started, sudo, where the data goes, which cluster and namespace, how to see
the exact commands), no line wider than the terminal, the change list not repeated after
`y`, a whole bare-laptop install in at most 25 rows, and next commands that work as printed.

The CLI runs as a process on a real pseudo-terminal 80 columns wide, against fake
docker/k3d/kubectl/helm. Two lines only the tests cause are left out of the count: the
warning that the tools' checksums come from a test manifest, and the one that the
preflight is skipped (TRACEBLOC_SKIP_PREFLIGHT: the network checks need the internet).
"""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest
import yaml

from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import FakeCluster, release_row
from tests.fakes.terminal import Pty, rows, unwrapped
from tests.test_cli_bare_laptop import laptop  # noqa: F401 - the fixture
from tests.test_cli_install import env_for, fresh, mutations
from tests.test_cli_tools import World

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")

COLUMNS = 80
TEST_ONLY = ("checksums come from the test manifest", "TRACEBLOC_SKIP_PREFLIGHT")
QUESTION = "Install? [y/N]"


def on_a_terminal(env: dict[str, str]) -> dict[str, str]:
    """As a person's terminal: colour and spinners allowed, no COLUMNS (the pty's width)."""
    env = dict(env)
    for name in ("TB_PLAIN", "NO_COLOR", "CI", "COLUMNS"):
        env.pop(name, None)
    env["TERM"] = "xterm-256color"
    return env


def seen(screen: str) -> list[str]:
    """The rows a person reads, without the lines only the test environment causes."""
    lines = screen.split("\n")
    # A test-only line and the row it wrapped onto (the Ui wraps a message to the width).
    noise = {i for i, line in enumerate(lines) if any(t in line for t in TEST_ONLY)}
    noise |= {
        i + 1
        for i in noise
        if i + 1 < len(lines) and lines[i + 1].startswith("  ") and "warning" in lines[i]
    }
    shown = rows("\n".join(line for i, line in enumerate(lines) if i not in noise), COLUMNS)
    assert shown.wrapped == 0, "a line wider than the terminal:\n" + "\n".join(shown.rows)
    return [row for row in shown.rows if row.strip()]


def up_to_question(screen: str) -> list[str]:
    return seen(screen[: screen.index(QUESTION) + len(QUESTION)])


def run(term: Pty, answer: str) -> tuple[int, str]:
    term.expect(QUESTION)
    term.send(answer)
    return term.wait(timeout=90), term.screen()


def test_a_bare_laptop_is_asked_in_a_few_rows_and_installs_in_25(
    laptop: World,  # noqa: F811 - the fixture
    backend: BackendServer,
) -> None:
    cluster = laptop.cluster
    env = on_a_terminal(cluster.env(**laptop.env(**env_for(backend))))
    with Pty.spawn(["install"], env=env, cwd=cluster.root, columns=COLUMNS) as term:
        code, screen = run(term, "y")

    assert code == 0, screen
    before = up_to_question(screen)
    assert len(before) <= 12, "\n".join(before)
    question = "\n".join(before)
    for said in (
        "create local cluster tracebloc in Docker (k3d); kubectl switches to it",
        "install the tracebloc client with helm into namespace tracebloc",
        "sudo: not needed",
        "namespace: tracebloc (kubectl's default)",
        "data: ~/.tracebloc",
        "cluster: tracebloc (new, local)",
        "answer d",
        "tracebloc-installer plan",
    ):
        assert said in question, question
    everything = seen(screen)
    assert len(everything) <= 25, "\n".join(everything)
    after = screen[screen.index(QUESTION) :]
    assert "will:" not in after and "helm upgrade --install" not in after  # not shown again
    assert "✓ Creating the local cluster tracebloc" in "\n".join(everything)  # settled steps
    assert "tracebloc data ingest" not in after  # no tracebloc CLI here: where to get it
    assert "https://github.com/tracebloc/cli/releases/latest" in after

    # The next command works as printed, on the machine just set up (the fakes replay a
    # scripted state: now the one helm shows after the install).
    values = yaml.safe_load((cluster.home / ".tracebloc" / "values.yaml").read_bytes())
    cluster.installed(release_row("tracebloc", chart="client-1.4.2"))
    cluster.values_of("tracebloc", "tracebloc", values)
    cluster.status_of("tracebloc", "deployed")
    status = next(row for row in everything if " status " in row + " ").split("    ")[0]
    status = status.strip().removeprefix("next:")
    result = subprocess.run(
        shlex.split(status.strip()),
        env=cluster.env(**laptop.env()),
        cwd=cluster.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_existing_cluster_is_asked_in_a_few_rows_naming_its_context(
    cluster: FakeCluster, backend: BackendServer
) -> None:
    fresh(cluster)
    env = on_a_terminal(cluster.env(**env_for(backend)))
    with Pty.spawn(["install"], env=env, cwd=cluster.root, columns=COLUMNS) as term:
        code, screen = run(term, "y")

    assert code == 0, screen
    before = up_to_question(screen)
    assert len(before) <= 12, "\n".join(before)
    question = "\n".join(before)
    for said in (
        "install the tracebloc client with helm into namespace tracebloc",
        "sudo: not needed",
        "cluster: k3d-tracebloc (https://",
        "namespace: tracebloc",
        "data: ~/.tracebloc",
        "answer d",
    ):
        assert said in question, question
    assert len(seen(screen)) <= 25


def test_d_at_the_question_shows_every_command_within_the_width_and_asks_again(
    laptop: World,  # noqa: F811 - the fixture
    backend: BackendServer,
) -> None:
    cluster = laptop.cluster
    env = on_a_terminal(cluster.env(**laptop.env(**env_for(backend))))
    with Pty.spawn(["install"], env=env, cwd=cluster.root, columns=COLUMNS) as term:
        term.expect(QUESTION)
        brief = term.screen()
        term.send("d")
        term.expect(QUESTION)
        details = term.screen()[len(brief) :]
        term.send("n")
        code = term.wait(timeout=60)
        screen = term.screen()

    assert code == 1, screen  # the documented exit code of a no
    seen(details)  # wrapped to the width: no row wider than the terminal
    flat = unwrapped(details)
    for argv in (
        "k3d cluster create tracebloc --servers 1 --agents 1",
        "helm upgrade --install tracebloc tracebloc/client --namespace tracebloc",
        "kubectl config set-context --current --namespace tracebloc",
    ):
        assert argv in flat, flat
    said = screen[screen.index(QUESTION, len(brief) + len(details) - 20) :]
    assert "Nothing was changed." in said and "error:" not in said
    assert mutations(cluster) == []


def test_declining_is_an_answer_not_an_error(cluster: FakeCluster, backend: BackendServer) -> None:
    fresh(cluster)
    env = on_a_terminal(cluster.env(**env_for(backend)))
    with Pty.spawn(["install"], env=env, cwd=cluster.root, columns=COLUMNS) as term:
        code, screen = run(term, "n")

    assert code == 1, screen
    after = screen[screen.index(QUESTION) :]
    assert "Nothing was changed." in after and "error" not in after
    assert mutations(cluster) == []
