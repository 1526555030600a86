"""installer.edges.proc against real tiny executables written into tmp_path.

The children are Python programs made by tests/fakes/executables.py (a `#!{sys.executable}`
script on POSIX, a pip-style .exe launcher on Windows), so what runs is a real process with
real pipes, exit codes, process groups and grandchildren.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from installer.decide.errors import InstallerError, ToolNotFound, ToolTimeout
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import childio, proc, process_tree
from tests.fakes.executables import CHILD_WITHOUT_SYSTEMROOT, make_executable
from tests.fakes.processes import gone_soon, kill_if_running

# A deadline test may take the deadline, then REAP_GRACE_S per reaping step, plus slack.
SLACK_S = 3.0


def script(path: Path, body: str) -> Path:
    """A program this OS can start: `path`, or `path.exe` on Windows."""
    return make_executable(path, body)


def tool(path: Path, name: str = "fake") -> Tool:
    return Tool(name, str(path))


def read_pids(path: Path, count: int, within: float = 10.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists():
            pids = path.read_text(encoding="utf-8").split()
            if len(pids) >= count:
                return [int(p) for p in pids]
        time.sleep(0.05)
    raise AssertionError(f"{path} never listed {count} pids")


@pytest.fixture
def pidfile(tmp_path: Path) -> Iterator[Path]:
    """Where a child records its descendants; whatever is still alive afterwards is killed."""
    path = tmp_path / "pids"
    yield path
    if path.exists():
        for pid in (int(p) for p in path.read_text(encoding="utf-8").split()):
            kill_if_running(pid)


# --- running --------------------------------------------------------------------------------


def test_exit_code_and_both_streams_are_captured_as_bytes(tmp_path: Path) -> None:
    child = script(
        tmp_path / "talker",
        "import sys\n"
        "sys.stdout.buffer.write(b'out \\xff\\n')\n"
        "sys.stderr.buffer.write(b'err: nope\\n')\n"
        "sys.exit(3)\n",
    )

    result = proc.run(tool(child, "talker"), ["a"], timeout=30)

    assert result.rc == 3
    assert result.out == b"out \xff\n"
    assert result.err == b"err: nope\n"
    assert result.argv == ("talker", "a")
    assert result.stdout == "out \ufffd\n"
    assert result.stderr == "err: nope\n"


def test_argv_reaches_the_child_verbatim_without_a_shell(tmp_path: Path) -> None:
    child = script(tmp_path / "echo-argv", "import json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    args = ["two words", "$HOME", "; rm -rf /", "`id`", "it's", "*", ""]

    result = proc.run(tool(child), args, timeout=30)

    assert result.rc == 0
    assert json.loads(result.out) == args


@CHILD_WITHOUT_SYSTEMROOT
def test_environment_is_the_one_given(tmp_path: Path) -> None:
    child = script(
        tmp_path / "env",
        "import json, os\nprint(json.dumps({k: os.environ.get(k) for k in ('TB_X', 'TB_Y')}))\n",
    )

    result = proc.run(tool(child), [], timeout=30, env={"TB_X": "1", "PATH": os.defpath})

    assert json.loads(result.out) == {"TB_X": "1", "TB_Y": None}


def test_stdin_is_not_inherited(tmp_path: Path) -> None:
    # A tool that prompts must see end-of-file, not hang waiting for a terminal.
    child = script(tmp_path / "reader", "import sys\nprint(repr(sys.stdin.read()))\n")

    result = proc.run(tool(child), [], timeout=30)

    assert result.stdout.strip() == "''"


def test_executable_that_cannot_start_is_tool_not_found(tmp_path: Path) -> None:
    with pytest.raises(ToolNotFound) as caught:
        proc.run(Tool("helm", str(tmp_path / "gone")), ["version"], timeout=30)
    assert "helm" in caught.value.message


def test_deadline_kills_child_and_grandchildren(tmp_path: Path, pidfile: Path) -> None:
    child = script(
        tmp_path / "wedged",
        "import os, subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pidfile)!r}, 'a').write(f'{{os.getpid()}} {{g.pid}}\\n')\n"
        "time.sleep(600)\n",
    )

    started = time.monotonic()
    with pytest.raises(ToolTimeout) as caught:
        proc.run(tool(child, "kubectl"), ["get", "nodes"], timeout=1)
    elapsed = time.monotonic() - started

    assert elapsed < 1 + process_tree.REAP_GRACE_S + SLACK_S, f"took {elapsed:.1f}s"
    assert caught.value.argv == ["kubectl", "get", "nodes"]
    assert caught.value.seconds == 1
    child_pid, grandchild_pid = read_pids(pidfile, 2)
    assert gone_soon(child_pid), "the child survived its deadline"
    assert gone_soon(grandchild_pid), "the grandchild survived its parent's deadline"


def test_deadline_holds_when_a_descendant_escapes_the_group(tmp_path: Path, pidfile: Path) -> None:
    # A descendant in its own session survives the group kill and keeps our pipes open;
    # run must still return, having stopped reading them.
    child = script(
        tmp_path / "daemonising",
        "import os, subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\n"
        "                     start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'a').write(f'{{g.pid}}\\n')\n"
        "time.sleep(600)\n",
    )

    started = time.monotonic()
    with pytest.raises(ToolTimeout):
        proc.run(tool(child), [], timeout=1)
    elapsed = time.monotonic() - started

    assert elapsed < 1 + 2 * process_tree.REAP_GRACE_S + SLACK_S, f"took {elapsed:.1f}s"
    assert read_pids(pidfile, 1)  # it did start, and the fixture stops it


def test_a_fast_child_is_not_disturbed_by_the_deadline(tmp_path: Path) -> None:
    child = script(tmp_path / "quick", "print('done')\n")

    result = proc.run(tool(child), [], timeout=30)

    assert (result.rc, result.stdout) == (0, "done\n")
    assert 0 <= result.seconds < 30


def test_secret_in_argv_is_refused_before_starting(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    child = script(tmp_path / "helm", f"open({str(marker)!r}, 'w').write('ran')\n")
    redactor = Redactor(["hunter2-s3cret"])

    with pytest.raises(InstallerError) as caught:
        proc.run(
            tool(child, "helm"), ["--set", "password=hunter2-s3cret"], timeout=30, redactor=redactor
        )

    assert not marker.exists(), "the child was started with a secret on its command line"
    assert "hunter2-s3cret" not in caught.value.message + caught.value.remedy
    assert "refusing" in caught.value.message
    # The same redactor lets an argv without the secret through.
    proc.run(tool(child, "helm"), ["--set", "user=alice"], timeout=30, redactor=redactor)
    assert marker.read_text() == "ran"


# --- the environment of a frozen binary -----------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param(
            {"LD_LIBRARY_PATH": "/tmp/_MEI1", "LD_LIBRARY_PATH_ORIG": "/opt/cuda/lib64", "A": "1"},
            {"LD_LIBRARY_PATH": "/opt/cuda/lib64", "A": "1"},
            id="restored-from-orig",
        ),
        pytest.param(
            {"LD_LIBRARY_PATH": "/tmp/_MEI1", "A": "1"},
            {"A": "1"},
            id="removed-when-user-had-none",
        ),
        pytest.param(
            {"DYLD_LIBRARY_PATH": "/tmp/_MEI1", "DYLD_LIBRARY_PATH_ORIG": "/usr/local/lib"},
            {"DYLD_LIBRARY_PATH": "/usr/local/lib"},
            id="macos-dyld-restored",
        ),
        pytest.param(
            {"DYLD_LIBRARY_PATH": "/opt/homebrew/lib", "A": "1"},
            {"DYLD_LIBRARY_PATH": "/opt/homebrew/lib", "A": "1"},
            id="macos-dyld-without-orig-is-the-users-own",
        ),
        pytest.param(
            {"DYLD_LIBRARY_PATH": "", "LD_LIBRARY_PATH": "/tmp/_MEI1"},
            {"DYLD_LIBRARY_PATH": ""},
            id="macos-empty-dyld-kept-exactly",
        ),
        pytest.param(
            {"LD_LIBRARY_PATH_ORIG": ""},
            {"LD_LIBRARY_PATH": ""},
            id="empty-orig-is-still-the-users",
        ),
    ],
)
def test_child_env_of_a_frozen_binary(env: dict[str, str], expected: dict[str, str]) -> None:
    assert childio.child_env(env, frozen=True) == expected


def test_child_env_not_frozen_is_a_copy_unchanged() -> None:
    env = {"LD_LIBRARY_PATH": "/x", "LD_LIBRARY_PATH_ORIG": "/y"}

    out = childio.child_env(env, frozen=False)

    assert out == env
    out["NEW"] = "1"
    assert "NEW" not in env


@CHILD_WITHOUT_SYSTEMROOT
def test_frozen_run_gives_the_child_the_users_library_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    child = script(
        tmp_path / "ldpath",
        "import json, os\n"
        "print(json.dumps([os.environ.get('LD_LIBRARY_PATH'), "
        "os.environ.get('LD_LIBRARY_PATH_ORIG')]))\n",
    )
    env = {
        "PATH": os.defpath,
        "LD_LIBRARY_PATH": str(tmp_path / "_MEI"),
        "LD_LIBRARY_PATH_ORIG": str(tmp_path / "user-lib"),
    }

    result = proc.run(tool(child), [], timeout=30, env=env)

    assert json.loads(result.out) == [str(tmp_path / "user-lib"), None]


# --- decoding -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "text"),
    [
        pytest.param(None, "", id="none"),
        pytest.param(b"", "", id="empty"),
        pytest.param(b"\xef\xbb\xbf{}", "{}", id="utf8-bom-dropped"),
        pytest.param(b"ok \xff\xfe end", "ok \ufffd\ufffd end", id="invalid-utf8-replaced"),
        pytest.param(b"caf\xc3", "caf\ufffd", id="truncated-multibyte"),
        pytest.param("nœud".encode(), "nœud", id="utf8"),
    ],
)
def test_decode_never_raises(data: bytes | None, text: str) -> None:
    assert childio.decode(data) == text


@pytest.mark.parametrize(
    ("text", "rc", "line"),
    [
        pytest.param("", 1, "exit 1 with no message", id="silent"),
        pytest.param("W0101 noise\nError: boom\n\n", 1, "exit 1: Error: boom", id="last-line"),
        pytest.param("x" * 1000, 2, "exit 2: " + "x" * 299 + "…", id="long-line-cut"),
    ],
)
def test_last_line(text: str, rc: int, line: str) -> None:
    assert childio.last_line(text, rc) == line


# --- Windows process-tree kill (the OS boundary is mocked) ----------------------------------


def test_kill_tree_windows_runs_taskkill_on_the_tree(mocker: MockerFixture) -> None:
    run = mocker.patch("installer.edges.proc.subprocess.run")

    proc._kill_tree_windows(4242)

    run.assert_called_once()
    assert run.call_args.args[0] == [
        proc.taskkill_path(os.environ),
        "/F",
        "/T",
        "/PID",
        "4242",
    ]
    assert run.call_args.kwargs.get("shell") in (None, False)
    assert run.call_args.kwargs["timeout"] > 0


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(FileNotFoundError("taskkill"), id="taskkill-missing"),
        pytest.param(subprocess.TimeoutExpired(["taskkill"], 4), id="taskkill-hangs"),
    ],
)
def test_kill_tree_windows_never_raises(mocker: MockerFixture, failure: Exception) -> None:
    mocker.patch("installer.edges.proc.subprocess.run", side_effect=failure)

    proc._kill_tree_windows(4242)


def test_kill_tree_on_windows_uses_taskkill_and_reaps(mocker: MockerFixture) -> None:
    # Platform mocked to Windows; a real child stands in for the tree, so the reaping after
    # taskkill (Popen.kill + communicate) is exercised for real.
    mocker.patch.object(sys, "platform", "win32")
    mocker.patch.object(process_tree, "WINDOWS", True)
    taskkill = mocker.patch("installer.edges.proc.subprocess.run")
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        process_tree.kill_tree(child, None, (), proc._kill_tree_windows)
        assert taskkill.call_args.args[0] == [
            proc.taskkill_path(os.environ),
            "/F",
            "/T",
            "/PID",
            str(child.pid),
        ]
        assert child.returncode is not None
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


# --- asking before killing (grace) ----------------------------------------------------------

POSIX_SIGNALS = pytest.mark.skipif(
    sys.platform == "win32",
    reason="the children trap SIGTERM; Windows asks with CTRL_BREAK (the CLI install test)",
)


def stoppable(path: Path, pidfile: Path, marker: Path, *, exits: bool) -> Path:
    """A child that says something, then sleeps; on SIGTERM (CTRL_BREAK on Windows) it notes
    the signal in `marker`, says so on both streams and exits 1 if `exits`, else carries on."""
    return script(
        path,
        "import os, signal, sys, time\n"
        "def stop(signum, frame):\n"
        f"    open({str(marker)!r}, 'w').write(signal.Signals(signum).name)\n"
        "    print('marking the release failed', flush=True)\n"
        "    sys.stderr.write('stopped cleanly\\n'); sys.stderr.flush()\n"
        f"    if {exits!r}:\n"
        "        os._exit(1)\n"
        "signal.signal(getattr(signal, 'SIGBREAK', signal.SIGTERM), stop)\n"
        "print('installing', flush=True)\n"
        f"open({str(pidfile)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
        "for _ in range(600):\n"
        "    time.sleep(1)\n",
    )


@POSIX_SIGNALS
def test_grace_asks_the_child_to_stop_and_it_exits_before_the_kill(
    tmp_path: Path, pidfile: Path
) -> None:
    marker = tmp_path / "asked"
    child = stoppable(tmp_path / "helm", pidfile, marker, exits=True)
    grace = 30.0

    started = time.monotonic()
    with pytest.raises(ToolTimeout) as caught:
        proc.run(tool(child, "helm"), ["upgrade"], timeout=2, grace=grace)
    elapsed = time.monotonic() - started

    assert marker.read_text() == "SIGTERM", "the child was not asked with SIGTERM"
    assert elapsed < 2 + grace / 2, f"took {elapsed:.1f}s: the grace period was waited out"
    assert caught.value.argv == ["helm", "upgrade"]
    (child_pid,) = read_pids(pidfile, 1)
    assert gone_soon(child_pid)


@POSIX_SIGNALS
def test_grace_output_holds_what_the_child_said_while_stopping(
    tmp_path: Path, pidfile: Path
) -> None:
    child = stoppable(tmp_path / "helm", pidfile, tmp_path / "asked", exits=True)

    with pytest.raises(ToolTimeout) as caught:
        proc.run(tool(child, "helm"), [], timeout=2, grace=30)

    output = caught.value.output
    assert "installing" in output  # said before the deadline
    assert "marking the release failed" in output  # stdout while stopping
    assert "stopped cleanly" in output  # stderr while stopping


@POSIX_SIGNALS
def test_grace_kills_a_child_that_does_not_stop_when_asked(tmp_path: Path, pidfile: Path) -> None:
    marker = tmp_path / "asked"
    child = stoppable(tmp_path / "helm", pidfile, marker, exits=False)
    grace = 1.0

    started = time.monotonic()
    with pytest.raises(ToolTimeout):
        proc.run(tool(child, "helm"), [], timeout=2, grace=grace)
    elapsed = time.monotonic() - started

    assert marker.read_text() == "SIGTERM", "it was killed without being asked first"
    assert elapsed < 2 + grace + 2 * process_tree.REAP_GRACE_S + SLACK_S, f"took {elapsed:.1f}s"
    (child_pid,) = read_pids(pidfile, 1)
    assert gone_soon(child_pid), "the child survived the kill after its grace period"


@POSIX_SIGNALS
def test_grace_kills_a_child_that_ignores_sigterm(tmp_path: Path, pidfile: Path) -> None:
    child = script(
        tmp_path / "deaf",
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"open({str(pidfile)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
        "time.sleep(600)\n",
    )

    started = time.monotonic()
    with pytest.raises(ToolTimeout):
        proc.run(tool(child), [], timeout=2, grace=1)
    elapsed = time.monotonic() - started

    assert elapsed < 2 + 1 + 2 * process_tree.REAP_GRACE_S + SLACK_S, f"took {elapsed:.1f}s"
    (child_pid,) = read_pids(pidfile, 1)
    assert gone_soon(child_pid)


@POSIX_SIGNALS
def test_grace_still_kills_what_the_stopped_child_left_running(
    tmp_path: Path, pidfile: Path
) -> None:
    child = script(
        tmp_path / "parent",
        "import os, signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda s, f: os._exit(1))\n"
        "g = subprocess.Popen([sys.executable, '-c',\n"
        "    'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'],\n"
        "    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # not holding our pipes\n"
        f"open({str(pidfile)!r}, 'a').write(f'{{os.getpid()}} {{g.pid}}\\n')\n"
        "time.sleep(600)\n",
    )

    with pytest.raises(ToolTimeout):
        proc.run(tool(child), [], timeout=2, grace=10)

    child_pid, grandchild_pid = read_pids(pidfile, 2)
    assert gone_soon(child_pid)
    assert gone_soon(grandchild_pid), "the grandchild outlived a parent that stopped when asked"


@POSIX_SIGNALS
def test_grace_output_keeps_what_a_child_killed_after_grace_had_said(
    tmp_path: Path, pidfile: Path
) -> None:
    marker = tmp_path / "asked"
    child = stoppable(tmp_path / "helm", pidfile, marker, exits=False)

    with pytest.raises(ToolTimeout) as caught:
        proc.run(tool(child, "helm"), [], timeout=2, grace=1)

    assert "installing" in caught.value.output


def test_no_grace_kills_at_once_without_asking(tmp_path: Path, pidfile: Path) -> None:
    marker = tmp_path / "asked"
    child = stoppable(tmp_path / "helm", pidfile, marker, exits=True)

    started = time.monotonic()
    with pytest.raises(ToolTimeout):
        proc.run(tool(child, "helm"), [], timeout=2, grace=0)
    elapsed = time.monotonic() - started

    assert elapsed < 2 + process_tree.REAP_GRACE_S + SLACK_S, f"took {elapsed:.1f}s"
    (child_pid,) = read_pids(pidfile, 1)
    assert gone_soon(child_pid)
    assert not marker.exists(), "with no grace the child must not be asked, only killed"


def test_grace_does_not_disturb_a_child_that_finishes(tmp_path: Path) -> None:
    child = script(tmp_path / "quick", "print('done')\n")

    result = proc.run(tool(child), [], timeout=30, grace=10)

    assert (result.rc, result.stdout) == (0, "done\n")
