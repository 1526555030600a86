"""Where the person's shell finds the tools the engine fetched (decide/shellpath.py), and how
a printed command names them (commands/tools.typed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from installer.commands.tools import typed, typed_conn
from installer.decide import remedy
from installer.decide.model import Connection
from installer.decide.shellpath import links, path_note
from installer.decide.tooling import ToolChoice

HOME = "/home/ana"


def choice(name: str, source: str) -> ToolChoice:
    return ToolChoice(name, f"{HOME}/.tracebloc/bin/{name}", "1.0", source)


def test_only_engine_kept_tools_nobody_else_has_get_a_link() -> None:
    choices = {
        "kubectl": choice("kubectl", "download"),
        "helm": choice("helm", "cache"),
        "k3d": choice("k3d", "path"),
    }
    env = {"HOME": HOME}
    assert links(choices, env, "linux", on_path=[], taken=[]) == [
        (f"{HOME}/.tracebloc/bin/kubectl", f"{HOME}/.local/bin/kubectl"),
        (f"{HOME}/.tracebloc/bin/helm", f"{HOME}/.local/bin/helm"),
    ]
    # A kubectl of the person's own on PATH is never shadowed; a file at the link is left.
    assert (
        links(choices, env, "linux", on_path=["kubectl"], taken=[f"{HOME}/.local/bin/helm"]) == []
    )
    assert links(choices, env, "windows", on_path=[], taken=[]) == []


@pytest.mark.parametrize(
    ("shell", "os_", "kept"),
    [
        pytest.param("/bin/bash", "linux", "~/.bashrc", id="bash-linux"),
        pytest.param("/bin/bash", "darwin", "~/.bash_profile", id="bash-macos"),
        pytest.param("/bin/zsh", "darwin", "~/.zshrc", id="zsh"),
        pytest.param("", "linux", "~/.profile", id="sh"),
    ],
)
def test_the_path_note_is_for_the_persons_shell(shell: str, os_: str, kept: str) -> None:
    env = {"HOME": HOME, "SHELL": shell, "PATH": "/usr/bin:/bin"}
    # The home as the shell names it, so the line reads as typed; the profile where it fits.
    said = path_note(env, os_, f"{HOME}/.local/bin", "k3d")
    assert said in (
        f'run `export PATH="$HOME/.local/bin:$PATH"` for k3d (and add it to {kept})',
        'run `export PATH="$HOME/.local/bin:$PATH"` for k3d',
    )
    assert len(said) <= 72
    assert (
        path_note({**env, "PATH": f"/usr/bin:{HOME}/.local/bin/"}, os_, f"{HOME}/.local/bin", "k3d")
        == ""
    )


def test_fish_gets_its_own_line() -> None:
    env = {"HOME": HOME, "SHELL": "/usr/bin/fish", "PATH": "/usr/bin"}
    assert "run `fish_add_path ~/.local/bin` for helm" in path_note(
        env, "linux", f"{HOME}/.local/bin", "helm"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need a privilege there")
def test_a_printed_command_names_the_tool_as_the_persons_path_finds_it(tmp_path: Path) -> None:
    """The bare name only when PATH leads to the very copy the run used (a link counts);
    otherwise that copy's full path, which works from any shell."""
    kept = tmp_path / "tracebloc" / "bin" / "helm"
    kept.parent.mkdir(parents=True)
    kept.write_text("#!/bin/sh\n")
    kept.chmod(0o755)
    linked, other = tmp_path / "local-bin", tmp_path / "usr-bin"
    linked.mkdir()
    other.mkdir()
    (linked / "helm").symlink_to(kept)
    (other / "helm").write_text("#!/bin/sh\n")
    (other / "helm").chmod(0o755)

    assert typed("helm", str(kept), {"PATH": str(linked)}) == "helm"
    assert typed("helm", str(kept), {"PATH": f"{other}:{linked}"}) == str(kept)  # another helm
    assert typed("helm", str(kept), {"PATH": ""}) == str(kept)
    assert typed("helm", None, {"PATH": ""}) == "helm"  # nothing resolved: the name says what
    conn = typed_conn(Connection(context="lab"), {"PATH": str(linked)}, str(kept), None)
    assert remedy.helm(["status", "tracebloc"], conn, "tb") == (
        "helm status tracebloc -n tb --kube-context lab"
    )
    conn = typed_conn(Connection(), {"PATH": ""}, str(kept), str(other / "kubectl"))
    assert remedy.kubectl(["get", "nodes"], conn) == f"{other / 'kubectl'} get nodes"
