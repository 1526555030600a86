"""Where the person's shell finds the tools the engine fetched: ~/.local/bin. Pure.

A link is made only when no tool of that name is on PATH (a person's own kubectl is never
shadowed) and nothing is at the link's place. Not on Windows.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping

from installer.decide.tooling import ToolChoice

LINKED = ("kubectl", "helm", "k3d")


def bin_dir(env: Mapping[str, str]) -> str:
    home = env.get("HOME", "").strip()
    return posixpath.join(home, ".local", "bin") if home else ""


def links(
    choices: Mapping[str, ToolChoice],
    env: Mapping[str, str],
    os_: str,
    *,
    on_path: Iterable[str],
    taken: Iterable[str],
) -> list[tuple[str, str]]:
    """(target, link) for each engine-kept tool; `on_path` the names PATH already finds,
    `taken` the link paths where something already is."""
    directory = bin_dir(env)
    if os_ == "windows" or not directory:
        return []
    found, occupied = set(on_path), set(taken)
    out = []
    for name in LINKED:
        choice = choices.get(name)
        if choice is None or choice.path is None or choice.source not in ("cache", "download"):
            continue
        link = posixpath.join(directory, name)
        if name not in found and link not in occupied:
            out.append((choice.path, link))
    return out


def link_argv(target: str, link: str) -> tuple[str, ...]:
    return ("ln", "-s", target, link)


def profile(env: Mapping[str, str], os_: str) -> str:
    """The file a new terminal of this person's shell ($SHELL) reads (the scripts' choice)."""
    shell = posixpath.basename(env.get("SHELL", "").strip())
    if shell == "bash":
        return "~/.bash_profile" if os_ == "darwin" else "~/.bashrc"
    return {"zsh": "~/.zshrc", "fish": "~/.config/fish/config.fish"}.get(shell, "~/.profile")


def path_note(env: Mapping[str, str], os_: str, directory: str, names: str) -> str:
    """What the summary says when `directory` is not on PATH ("" when it is): the line for
    this shell (decide/signin.path_line, the one answer to it) and where it is kept."""
    from installer.decide.errors import BadInput
    from installer.decide.paths import home_dir
    from installer.decide.signin import path_line

    try:
        home = home_dir(env, os_)
    except BadInput:  # no home: the line names the directory as it is
        home = ""
    line = path_line(
        directory, os_=os_, shell=env.get("SHELL", ""), path=env.get("PATH", ""), home=home
    )
    if line is None:
        return ""
    # One row at 80 columns where it fits: the profile is named when there is room.
    said = f"run `{line}` for {names}"
    kept = f"{said} (and add it to {profile(env, os_)})"
    return kept if len(kept) <= 72 else said
