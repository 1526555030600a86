"""Symbolic links the engine makes for the person's shell (commands/shellpath.py)."""

from __future__ import annotations

import os
from collections.abc import Sequence


def make_links(made: Sequence[tuple[str, str]]) -> str:
    """Each (target, link): the link's directory created (0755) when missing, then the link,
    never over anything already there. "" when all were made, else what failed."""
    for target, link in made:
        try:
            os.makedirs(os.path.dirname(link), mode=0o755, exist_ok=True)
            os.symlink(target, link)
        except FileExistsError:
            continue  # something is there now: it is left as it is
        except OSError as exc:
            return f"{link}: {exc.strerror or exc}"
    return ""
