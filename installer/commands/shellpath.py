"""The tools the engine fetched, where the person's shell looks (decide/shellpath.py): the
links are listed with the install's changes and made after the go-ahead; the summary gives
the PATH line when ~/.local/bin is not on PATH."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from installer.decide import shellpath
from installer.decide.tooling import ToolChoice
from installer.edges import toolpath
from installer.present.changes import Change
from installer.present.ui import Ui


def links(
    choices: Mapping[str, ToolChoice], env: Mapping[str, str], os_: str
) -> list[tuple[str, str]]:
    directory = shellpath.bin_dir(env)
    if not directory or os_ == "windows":
        return []
    found = [n for n in shellpath.LINKED if toolpath.find_on_path(n, env, os_) is not None]
    taken = [
        p for p in (os.path.join(directory, n) for n in shellpath.LINKED) if os.path.lexists(p)
    ]
    return shellpath.links(choices, env, os_, on_path=found, taken=taken)


def changes(made: Sequence[tuple[str, str]], env: Mapping[str, str]) -> list[Change]:
    if not made:
        return []
    directory = shellpath.bin_dir(env)
    out = (
        []
        if os.path.isdir(directory)
        else [Change(("mkdir", "-p", directory), "a directory your shell can find tools in")]
    )
    return out + [
        Change(
            shellpath.link_argv(target, link),
            f"`{os.path.basename(link)}` works in your shell too (made by the engine)",
        )
        for target, link in made
    ]


def make(made: Sequence[tuple[str, str]], env: Mapping[str, str], ui: Ui) -> list[str]:
    """The links, as listed (made by the engine itself, as `mkdir -p` and `ln -s` would: no
    PATH needed); a failure is a warning, the engine needs none of them. Returns the notes
    for the summary: the PATH line when the directory is not on PATH."""
    if not made:
        return []
    from installer.edges.links import make_links

    failed = make_links(made)
    if failed:
        ui.warn(f"could not link the tools where your shell looks: {failed}")
        return []
    names = ", ".join(os.path.basename(link) for _, link in made)
    note = shellpath.path_note(
        env, sys.platform if sys.platform == "darwin" else "linux", shellpath.bin_dir(env), names
    )
    return [note] if note else []
