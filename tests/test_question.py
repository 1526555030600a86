"""The few lines above `Install? [y/N]` (present/question.py), drawn from the change list:
each change in plain words, what needs sudo, and every row within the terminal's width."""

from __future__ import annotations

import pytest

from installer.present.changes import Change
from installer.present.question import Context, details, rows, shown_path, summary

LOCAL = [
    Change(
        ("sudo", "-n", "apt-get", "install", "-y", "docker-ce"), "as administrator: installs Docker"
    ),
    Change(
        ("sudo", "-n", "systemctl", "enable", "--now", "docker"),
        "as administrator: starts Docker now and at boot",
    ),
    Change(
        (
            "k3d",
            "cluster",
            "create",
            "tracebloc",
            "--servers",
            "1",
            "-v",
            "/home/me/.tracebloc:/tracebloc@all",
            "--wait",
            "--timeout",
            "15m",
        ),
        "creates the local cluster",
    ),
    Change(
        ("docker", "update", "--restart", "unless-stopped", "k3d-tracebloc-server-0"), "restarts"
    ),
    Change(("k3d", "kubeconfig", "merge", "tracebloc", "--kubeconfig-switch-context"), "merges"),
    Change(("helm", "repo", "add", "tracebloc", "https://tracebloc.github.io/client"), "adds"),
    Change(
        (
            "helm",
            "upgrade",
            "--install",
            "tracebloc",
            "tracebloc/client",
            "--namespace",
            "tracebloc",
        ),
        "installs",
    ),
    Change(("kubectl", "config", "set-context", "--current", "--namespace", "tracebloc"), "ns"),
]
CONTEXT = Context("tracebloc (new, local)", "tracebloc", "tracebloc", "~/.tracebloc")


def test_a_machine_without_docker_says_what_needs_sudo() -> None:
    lines = summary(LOCAL, CONTEXT, 80)
    text = "\n".join(lines)
    assert "sudo: 2 steps as administrator: installs Docker and 1 more" in text
    assert "create local cluster tracebloc in Docker (k3d); kubectl switches to it" in text
    assert "install the tracebloc client with helm into namespace tracebloc" in text
    assert "namespace: tracebloc (kubectl's default)" in text
    assert "data: ~/.tracebloc" in text and "answer d" in text
    assert "docker update" not in text and "helm repo add" not in text  # in the details
    assert len(lines) <= 11


def test_an_upgrade_says_so_and_a_change_it_does_not_know_keeps_its_words() -> None:
    found = [
        Change(("helm", "rollback", "tracebloc", "0"), "recovers the wedged release"),
        Change(("helm", "upgrade", "--install", "tracebloc", "c"), "installs"),
    ]
    text = "\n".join(
        summary(
            found,
            Context("prod (https://k8s:6443)", "team-a", "team-a", "~/.tracebloc", upgrade=True),
            80,
        )
    )
    assert "recovers the wedged release" in text
    assert "upgrade the tracebloc client with helm into namespace team-a" in text
    assert "sudo: not needed" in text and "(kubectl's default)" not in text


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_no_row_is_wider_than_the_terminal(width: int) -> None:
    assert all(len(row) < width for row in summary(LOCAL, CONTEXT, width))
    shown = details(
        LOCAL,
        ["kubectl v1 from https://example.test/kubectl (sha256 " + "a" * 64 + ")"],
        ["  namespace:      tracebloc"],
        width,
    )
    assert all(len(row) < width for row in shown), shown
    if width >= 60:  # narrower, a word longer than a row is broken to keep the width
        assert "-v /home/me/.tracebloc:/tracebloc@all" in " ".join(" ".join(shown).split())


def test_a_long_path_is_not_broken_inside() -> None:
    path = "/very/long/" + "x" * 90 + "/values.yaml"
    assert path in "".join(r.strip() for r in rows(f"  note: see {path}", 80, limit=10))


@pytest.mark.parametrize(
    ("path", "home", "shown"),
    [
        pytest.param("/home/me/.tracebloc", "/home/me", "~/.tracebloc", id="under-home"),
        pytest.param(
            "/home/meow/.tracebloc", "/home/me", "/home/meow/.tracebloc", id="a-prefix-only"
        ),
        pytest.param("/srv/data", "/home/me", "/srv/data", id="elsewhere"),
        pytest.param("/x", "/", "/x", id="home-is-root"),
        pytest.param("C:\\Users\\me\\.tracebloc", "C:\\Users\\me", "~\\.tracebloc", id="windows"),
    ],
)
def test_paths_under_home_are_shown_with_a_tilde(path: str, home: str, shown: str) -> None:
    assert shown_path(path, home) == shown
