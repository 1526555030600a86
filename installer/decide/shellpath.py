"""Where the person's shell finds the tools the engine fetched (the scripts put them in
~/.local/bin and printed the PATH line for the shell). Pure.

A tool the engine downloaded (or keeps in its cache) gets a link in ~/.local/bin, only when
no tool of that name is on PATH at all (a person's own kubectl is never shadowed) and
nothing is at the link's place yet. Not on Windows, which has no such directory.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping

from installer.decide.tooling import ToolChoice

LINKED = ("kubectl", "helm", "k3d")


def bin_dir(env: Mapping[str, str]) -> str:
    home = env.get("HOME", "").strip()
    return posixpath.join(home, ".local", "bin") if home else ""


def links(choices: Mapping[str, ToolChoice], env: Mapping[str, str], os_: str, *,
          on_path: Iterable[str], taken: Iterable[str]) -> list[tuple[str, str]]:  # fmt: skip
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


def on_path(env: Mapping[str, str], directory: str) -> bool:
    return bool(directory) and any(posixpath.normpath(p) == posixpath.normpath(directory)
                                   for p in env.get("PATH", "").split(":") if p)  # fmt: skip


def path_line(env: Mapping[str, str], directory: str) -> str:
    """The line that puts `directory` on PATH in this person's shell ($SHELL), for new
    terminals; "" when it is on PATH already."""
    if not directory or on_path(env, directory):
        return ""
    shell = posixpath.basename(env.get("SHELL", "").strip())
    home = env.get("HOME", "").strip()
    shown = "$HOME" + directory[len(home):] if home and directory.startswith(home + "/") else directory
    if shell == "fish":
        return f"fish_add_path {shown}"
    rc = {"zsh": "~/.zshrc", "bash": "~/.bashrc"}.get(shell, "~/.profile")
    return f"echo 'export PATH=\"{shown}:$PATH\"' >> {rc}"
