"""Where the person's shell finds the tools the engine fetched (decide/shellpath.py)."""

from __future__ import annotations

import pytest

from installer.decide.shellpath import links, path_line
from installer.decide.tooling import ToolChoice

HOME = "/home/ana"


def choice(name: str, source: str) -> ToolChoice:
    return ToolChoice(name, f"{HOME}/.tracebloc/bin/{name}", "1.0", source)


def test_only_engine_kept_tools_nobody_else_has_get_a_link() -> None:
    choices = {"kubectl": choice("kubectl", "download"), "helm": choice("helm", "cache"),
               "k3d": choice("k3d", "path")}  # fmt: skip
    env = {"HOME": HOME}
    assert links(choices, env, "linux", on_path=[], taken=[]) == [
        (f"{HOME}/.tracebloc/bin/kubectl", f"{HOME}/.local/bin/kubectl"),
        (f"{HOME}/.tracebloc/bin/helm", f"{HOME}/.local/bin/helm")]
    # A kubectl of the person's own on PATH is never shadowed; a file at the link is left.
    assert links(choices, env, "linux", on_path=["kubectl"], taken=[f"{HOME}/.local/bin/helm"]) == []
    assert links(choices, env, "windows", on_path=[], taken=[]) == []


@pytest.mark.parametrize(("shell", "line"), [
    pytest.param("/bin/bash", "echo 'export PATH=\"$HOME/.local/bin:$PATH\"' >> ~/.bashrc", id="bash"),
    pytest.param("/bin/zsh", "echo 'export PATH=\"$HOME/.local/bin:$PATH\"' >> ~/.zshrc", id="zsh"),
    pytest.param("/usr/bin/fish", "fish_add_path $HOME/.local/bin", id="fish"),
    pytest.param("", "echo 'export PATH=\"$HOME/.local/bin:$PATH\"' >> ~/.profile", id="sh"),
])  # fmt: skip
def test_the_path_line_is_for_the_persons_shell(shell: str, line: str) -> None:
    env = {"HOME": HOME, "SHELL": shell, "PATH": "/usr/bin:/bin"}
    assert path_line(env, f"{HOME}/.local/bin") == line
    assert path_line({**env, "PATH": f"/usr/bin:{HOME}/.local/bin/"}, f"{HOME}/.local/bin") == ""
