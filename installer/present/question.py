"""The few lines above `Install? [y/N/d]`: what will be installed or started, what needs sudo,
where the data goes, which cluster and namespace, and how to see the exact commands. Pure.

They are drawn from the change list (present/changes.py), never a second account of it:
each change is said in plain words, several that serve one purpose in one line. The full
list, each change with its argv, is `details` (the `d` answer, `plan`, --verbose, the log).
No line is wider than the terminal: a long one is cut with `…` here, wrapped in `details`.
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


def _sudo(change: Change) -> bool:
    return change.argv[:1] == ("sudo",) or change.why.startswith("as administrator")


def _said(change: Change, ctx: Context) -> str:
    """One change in plain words; "" for one folded into another's line."""
    argv = change.argv
    words = argv[:3]
    name = argv[3] if len(argv) > 3 else ""
    if words == ("k3d", "cluster", "create"):
        return f"create the local Kubernetes cluster {name} (k3d, in Docker)"
    if words == ("k3d", "cluster", "start"):
        return f"start the stopped local cluster {name}"
    if words == ("k3d", "kubeconfig", "merge"):
        return "make it your current kube context"
    if argv[:2] in (("docker", "update"), ("docker", "exec")) or argv[:3] == ("helm", "repo", "add"):
        return ""  # part of the cluster's or the release's line; listed in the details
    if argv[:3] == ("helm", "upgrade", "--install"):
        verb = "upgrade" if ctx.upgrade else "install"
        return f"{verb} the tracebloc client with helm in namespace {ctx.namespace}"
    if argv[:3] == ("kubectl", "config", "set-context"):
        return f"make {ctx.namespace} kubectl's default namespace"
    return change.why


def fit(line: str, width: int) -> str:
    """`line` cut to the terminal's width (one column spare: the cursor never wraps)."""
    room = max(width - 1, 20)
    return line if len(line) <= room else line[: room - 1] + ELLIPSIS


def summary(found: Sequence[Change], ctx: Context, width: int) -> list[str]:
    plain = [c for c in found if not _sudo(c)]
    root = [c for c in found if _sudo(c)]
    said: list[str] = []
    for change in plain:
        words = _said(change, ctx)
        if words and words not in said:
            said.append(words)
    lines = ["tracebloc-installer will:", *(f"  - {words}" for words in said)]
    if root:
        first = root[0].why.removeprefix("as administrator: ")
        more = f" and {len(root) - 1} more" if len(root) > 1 else ""
        lines.append(f"  sudo:      {len(root)} step{'s' if len(root) > 1 else ''} as "
                     f"administrator: {first}{more}")  # fmt: skip
    else:
        lines.append("  sudo:      not needed")
    lines += [f"  cluster:   {ctx.cluster}",
              f"  namespace: {ctx.namespace} (release {ctx.release})",
              f"  data:      {ctx.data_dir}",
              *(f"  {fact}" for fact in ctx.more),
              f"  commands:  answer d to see each one, or run `{PROG} plan`"]  # fmt: skip
    return [fit(line, width) for line in lines]


def details(found: Sequence[Change], fetched: Sequence[str], heading: Sequence[str],
            width: int) -> list[str]:  # fmt: skip
    """Everything: the heading facts and each change with its exact argv, wrapped to the
    terminal's width (a command is never cut: it is what the person checks)."""
    room = max(width - 1, 20)
    lines: list[str] = []
    for line in ["about to change:", *heading, "changes, in order:", *text(found, fetched)]:
        lines += textwrap.wrap(line, room, subsequent_indent="       ", break_long_words=True,
                               break_on_hyphens=False, drop_whitespace=True) or [""]  # fmt: skip
    return lines
