"""A runtime step guarded "ours": a file under /etc is written or removed only when absent
(for a write) or holding the engine's marker line; anyone else's is left, with a warning.
Writes go to `<file>.tracebloc-new` and are renamed over it; an unchanged file is not
rewritten, so a daemon is not bounced for nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from installer.decide.errors import InstallerError
from installer.decide.runtime import NEW_SUFFIX, Step, discard, guard_probe
from installer.edges import proc
from installer.edges.call import NoAnswer


class Runner(Protocol):  # edges/runtime.Runner, without importing it (no cycle)
    done: list[str]
    changed: bool
    touched: set[str]

    def answer(
        self, step: Step, argv: tuple[str, ...], timeout: float | None = None
    ) -> proc.Result | NoAnswer: ...
    def warn(self, text: str) -> None: ...


R = TypeVar("R", bound=Runner)


def state(run: Runner, step: Step, path: str) -> str:
    """ours | foreign | link | absent | unreadable, read as the step runs (root through
    sudo). A symbolic link is never the engine's, dangling or not: grep follows it, and a
    rename would replace the link, not what it points at."""
    link = Step(("test", "-L", path), "is it a symbolic link", root=step.root)
    seen_link = run.answer(link, link.argv, timeout=30)
    if isinstance(seen_link, NoAnswer):
        return "unreadable"
    if seen_link.rc == 0:
        return "link"
    probe = Step(guard_probe(path), "is it tracebloc's own", root=step.root)
    answer = run.answer(probe, probe.argv, timeout=30)
    if isinstance(answer, NoAnswer):
        return "unreadable"
    rc = answer.rc
    if rc == 0:
        return "ours"
    exists = Step(("test", "-e", path), "does it exist", root=step.root)
    seen = run.answer(exists, exists.argv, timeout=30)
    if isinstance(seen, NoAnswer):
        return "unreadable"
    if rc == 1:
        # grep's "no such line", or `sudo -n` refusing (it exits 1 too): only a file seen to
        # exist through the same sudo makes the 1 grep's.
        return "foreign" if seen.rc == 0 else "unreadable"
    return "absent" if seen.rc == 1 else "unreadable"


def guarded(
    run: R,
    step: Step,
    argv: tuple[str, ...],
    _run: Callable[[R, Step, tuple[str, ...]], bool],
    _same_as: Callable[[R, Step, str, str], bool],
) -> None:
    """Carry out a guarded step (`argv` with the staged file in place); `_run` and
    `_same_as` are edges/runtime.py's (a step run and logged; root's file compared)."""

    dest = argv[-1]
    found = state(run, step, dest)
    if found in ("foreign", "unreadable", "link"):
        run.warn(
            f"{dest} "
            + ("is a symbolic link" if found == "link" else "was not written by tracebloc")
            + (" (it could not be read)" if found == "unreadable" else "")
            + f": left as it is, so it is not {'rewritten' if step.kind == 'stage' else 'removed'}; "
            "check that it says what Docker should use"
        )
        return
    if step.kind != "stage":  # a removal
        if found == "absent":
            return
        if _run(run, step, argv):
            run.changed = True
            run.touched.add(dest)
        return
    if found == "ours" and _same_as(run, step, argv[-2], dest):
        run.done.append(f"{dest} is already as wanted")
        return
    new = dest + NEW_SUFFIX
    move = Step(("mv", "-f", new, dest), "put it in place in one rename", root=step.root)
    try:
        placed = _run(run, step, (*argv[:-1], new)) and _run(run, move, move.argv)
    except InstallerError:
        _discard(run, step, new)
        raise
    if not placed:
        _discard(run, step, new)
        return
    run.changed = True
    run.touched.add(dest)


def _discard(run: Runner, step: Step, new: str) -> None:
    """A failed write or rename leaves no copy of ours beside the file; best effort."""
    remove = discard(new, step.root)
    result = run.answer(remove, remove.argv, timeout=30)
    if not isinstance(result, NoAnswer) and result.rc == 0:
        run.done.append(f"{new} removed: the failed write left no copy")
