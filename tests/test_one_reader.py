"""Running a tool and reading its answer has one home, edges/call.py: the result, or the reason
there is none. Read from the source: no other module wraps a run in `try … except
InstallerError` (or ToolNotFound) to turn the failure into a reason, the private `_run` reader
each module used to grow; and only proc.py starts a child, through `proc.run` alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from installer.decide.errors import ToolFailed, ToolTimeout
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import call
from tests.fakes.executables import make_executable

PACKAGE = Path(__file__).resolve().parent.parent / "installer"
HOME = {"edges/call.py", "edges/proc.py"}
# The failures a reader turns into "no answer" (ToolTimeout alone is a deadline, which a
# poll loop may wait out; that is not reading an answer).
REASONS = {"InstallerError", "ToolNotFound", "Exception", "BaseException"}


def _runs_a_tool(node: ast.AST) -> bool:
    """`proc.run(…)`, or `.run(…)` on a binding of it (a Caller, a Tools, a Runner)."""
    for node_ in ast.walk(node):
        if isinstance(node_, ast.Call) and isinstance(node_.func, ast.Attribute):
            owner = node_.func.value
            if node_.func.attr == "run" and isinstance(owner, ast.Name) and owner.id == "proc":
                return True
            if node_.func.attr == "run" and (
                (isinstance(owner, ast.Call) and ast.unparse(owner.func).endswith("Caller"))
                or (isinstance(owner, ast.Attribute) and owner.attr == "caller")
                or (isinstance(owner, ast.Name) and owner.id in ("tools", "run", "runner"))
            ):
                return True
    return False


def _names(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {ast.unparse(kind).rsplit(".", 1)[-1] for kind in kinds}


def readers_outside_home(files: dict[str, str]) -> list[str]:
    found = []
    for where, source in sorted(files.items()):
        if where in HOME:
            continue
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Try):
                continue
            caught = set().union(*(_names(h) for h in node.handlers)) if node.handlers else set()
            if caught & REASONS and any(_runs_a_tool(statement) for statement in node.body):
                found.append(f"{where}:{node.lineno}")
    return found


def package_files() -> dict[str, str]:
    return {
        str(path.relative_to(PACKAGE)).replace("\\", "/"): path.read_text(encoding="utf-8")
        for path in PACKAGE.rglob("*.py")
    }


def test_no_module_but_call_turns_a_failed_run_into_a_reason() -> None:
    assert readers_outside_home(package_files()) == [], (
        "use installer.edges.call.answer (or Caller.answer / checked) instead of catching "
        "the run's failure here"
    )


READER = """
from installer.decide.errors import InstallerError
from installer.edges import proc

def _run(tool, args):
    try:
        return proc.run(tool, args, timeout=5)
    except InstallerError as exc:
        return exc.message
"""


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(READER, id="a-private-run-reader"),
        pytest.param(
            READER.replace("proc.run(tool", "Caller(env).run(tool"), id="through-a-binding"
        ),
        pytest.param(
            READER.replace("except InstallerError", "except (ToolTimeout, ToolNotFound)"),
            id="catching-the-subclasses",
        ),
    ],
)
def test_a_new_private_reader_is_caught(source: str) -> None:
    assert readers_outside_home({"edges/newthing.py": source}) == ["edges/newthing.py:6"]


def test_a_poll_that_waits_out_a_deadline_is_not_a_reader() -> None:
    source = READER.replace(
        "except InstallerError as exc:\n        return exc.message",
        "except ToolTimeout:\n        pass",
    )
    assert readers_outside_home({"commands/poll.py": source}) == []


def test_only_proc_starts_a_child_and_only_through_run() -> None:
    starting = {
        "Popen",
        "run",
        "call",
        "check_call",
        "check_output",
        "getoutput",
        "getstatusoutput",
        "system",
        "spawnv",
        "spawnl",
        "execv",
        "execvp",
        "startfile",
    }
    outside = []
    for where, source in sorted(package_files().items()):
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("subprocess", "os")
                and node.func.attr in starting
                and where != "edges/proc.py"
            ):
                outside.append(f"{where}:{node.lineno}")
    assert outside == []
    tree = ast.parse((PACKAGE / "edges" / "proc.py").read_text(encoding="utf-8"))
    public = {
        f.name
        for f in tree.body
        if isinstance(f, ast.FunctionDef)
        and not f.name.startswith("_")
        and any(isinstance(n, ast.Attribute) and n.attr == "Popen" for n in ast.walk(f))
    }
    assert public == {"run"}  # one entry point, attached to the terminal or not


# --- the helper itself -----------------------------------------------------------------


def test_an_answer_is_the_result_whatever_the_exit_code(tmp_path: Path) -> None:
    tool = make_executable(
        tmp_path / "says",
        "import sys\nprint('out')\nsys.stderr.write('first\\nlast words\\n')\nsys.exit(4)\n",
    )
    got = call.answer(Tool("says", str(tool)), [], timeout=30)
    assert not isinstance(got, call.NoAnswer)
    assert (got.rc, got.stdout.strip()) == (4, "out")
    assert call.reason(got) == "exit 4: last words"
    with pytest.raises(ToolFailed) as failed:
        call.checked(Tool("says", str(tool)), ["x"], timeout=30)
    assert (failed.value.reason, failed.value.rc) == ("exit 4: last words", 4)
    assert failed.value.message == "`says x` failed: exit 4: last words"


@pytest.mark.parametrize(
    ("source", "timed_out"),
    [
        pytest.param(None, False, id="no-tool"),
        pytest.param("import time\ntime.sleep(60)\n", True, id="stopped-at-its-deadline"),
    ],
)
def test_no_answer_says_why(tmp_path: Path, source: str | None, timed_out: bool) -> None:
    tool = Tool("slow", str(make_executable(tmp_path / "slow", source))) if source else None
    got = call.Caller(timeout=0.5).answer(tool, [], missing="slow was not found")
    assert isinstance(got, call.NoAnswer) and got.timed_out is timed_out
    assert got.reason == (
        "`slow` did not finish within 0.5s and was stopped" if timed_out else "slow was not found"
    )
    assert isinstance(got.error, ToolTimeout) if timed_out else got.error is None
    with pytest.raises(ToolFailed) as failed:
        call.Caller(timeout=0.5).checked(tool, [], missing="slow was not found")
    assert failed.value.reason == got.reason and failed.value.rc is None


def test_a_secret_on_the_command_line_is_no_answer_and_nothing_runs(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    tool = make_executable(tmp_path / "t", f"open({str(ran)!r}, 'w').close()\n")
    got = call.answer(
        Tool("t", str(tool)),
        ["--password", "hunter2-secret"],
        timeout=30,
        redactor=Redactor(("hunter2-secret",)),
    )
    assert isinstance(got, call.NoAnswer) and "a secret would appear" in got.reason
    assert not ran.exists()
