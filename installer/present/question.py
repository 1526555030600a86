"""The few lines above `Install? [y/N/d]`: what will be installed, what needs sudo, where the
data goes, which cluster and namespace. Pure. Drawn from the change list (present/changes.py),
never a second account of it; a line wider than the terminal is cut with `…`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from installer.present.changes import Change, text

PROG = "tracebloc-installer"
ELLIPSIS = "…"


@dataclass(frozen=True)
class Context:
    cluster: str  # which cluster, in words: "new local cluster tracebloc (k3d in Docker)"
    namespace: str
    release: str
    data_dir: str  # the values file, the log and (on a local cluster) the client's data
    upgrade: bool = False  # a release is installed: it is upgraded
    more: Sequence[str] = ()  # a few more "label: text" facts (training size, earlier data)


def shown_path(path: str, home: str) -> str:
    """A path under the home directory as `~/…`, as a person reads and types it."""
    home = home.rstrip("/\\")
    inside = len(home) > 1 and path.startswith(home) and path[len(home) :][:1] in ("/", "\\")
    return "~" + path[len(home) :] if inside else path


def _sudo(change: Change) -> bool:
    return change.argv[:1] == ("sudo",) or change.why.startswith("as administrator")


def _said(change: Change, ctx: Context, switches: bool) -> str:
    """One change in plain words; "" for one folded into another's line."""
    argv = change.argv
    words = argv[:3]
    name = argv[3] if len(argv) > 3 else ""
    then = "; kubectl switches to it" if switches else ""
    if words == ("k3d", "cluster", "create"):
        return f"create local cluster {name} in Docker (k3d){then}"
    if words == ("k3d", "cluster", "start"):
        return f"start the stopped local cluster {name}{then}"
    if words == ("k3d", "kubeconfig", "merge"):
        return "" if switches else "make it kubectl's current context"
    if argv[:2] in (("docker", "update"), ("docker", "exec")) or argv[:3] == (
        "helm",
        "repo",
        "add",
    ):
        return ""  # part of the cluster's or the release's line; listed in the details
    if argv[:3] == ("helm", "upgrade", "--install"):
        verb = "upgrade" if ctx.upgrade else "install"
        return f"{verb} the tracebloc client with helm into namespace {ctx.namespace}"
    if argv[:3] == ("kubectl", "config", "set-context"):
        return ""  # said on the namespace's line
    if argv[:2] == ("mkdir", "-p"):
        return ""  # the links' directory: part of their line
    if argv[:2] == ("ln", "-s"):
        return "link the tools it fetched where your shell finds them (d shows where)"
    return change.why


def fit(line: str, width: int) -> str:
    """`line` cut to the terminal's width (one column spare: the cursor never wraps)."""
    room = max(width - 1, 20)
    return line if len(line) <= room else line[: room - 1] + ELLIPSIS


def summary(found: Sequence[Change], ctx: Context, width: int) -> list[str]:
    plain = [c for c in found if not _sudo(c)]
    root = [c for c in found if _sudo(c)]
    made = {c.argv[:3] for c in plain}
    switches = ("k3d", "kubeconfig", "merge") in made and bool(
        made & {("k3d", "cluster", "create"), ("k3d", "cluster", "start")}
    )
    said: list[str] = []
    for change in plain:
        words = _said(change, ctx, switches)
        if words and words not in said:
            said.append(words)
    lines = ["tracebloc-installer will:", *(f"  - {words}" for words in said)]
    release = "" if ctx.release == ctx.namespace else f", release {ctx.release}"
    default = " (kubectl's default)" if ("kubectl", "config", "set-context") in made else ""
    lines.append(f"  cluster: {ctx.cluster}    namespace: {ctx.namespace}{release}{default}")
    if root:
        # sudo on Linux and macOS; one elevation prompt on Windows (said in its `why`).
        label = "sudo" if any(c.argv[:1] == ("sudo",) for c in root) else "administrator"
        first = root[0].why.removeprefix("as administrator: ").removeprefix("as administrator ")
        more = f" and {len(root) - 1} more" if len(root) > 1 else ""
        lines += [
            f"  {label}: {len(root)} step{'s' if len(root) > 1 else ''} as administrator: "
            f"{first}{more}",
            f"  data: {ctx.data_dir}",
        ]
    else:
        lines.append(f"  sudo: not needed    data: {ctx.data_dir}")
    lines += [f"  {fact}" for fact in ctx.more]
    lines.append(f"  every command: answer d, or `{PROG} plan`, or --verbose")
    return [row for line in lines for row in rows(line, width)]


def rows(line: str, width: int, *, limit: int = 2) -> list[str]:
    """`limit` rows at most for a line that does not fit (a long path), cut after that."""
    room = max(width - 1, 20)
    if len(line) <= room:
        return [line]
    # A path or URL longer than a row is never broken inside: it is there to be copied.
    wrapped = textwrap.wrap(
        line, room, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False
    )
    if len(wrapped) <= limit:
        return wrapped
    return wrapped[: limit - 1] + [fit(" ".join(wrapped[limit - 1 :]), width)]


def details(
    found: Sequence[Change], fetched: Sequence[str], heading: Sequence[str], width: int
) -> list[str]:
    """Everything: the heading facts and each change with its exact argv, wrapped to the
    terminal's width (a command is never cut: it is what the person checks)."""
    room = max(width - 1, 20)
    lines: list[str] = []
    for line in ["about to change:", *heading, "changes, in order:", *text(found, fetched)]:
        lines += textwrap.wrap(
            line,
            room,
            subsequent_indent="       ",
            break_long_words=True,
            break_on_hyphens=False,
            drop_whitespace=True,
        ) or [""]
    return lines
