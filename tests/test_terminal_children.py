"""A child that talks to the person's terminal (`tracebloc login` on the terminal's
descriptors, `sudo -v` attached) gets the terminal's Ctrl-C as it would without the engine;
the engine waits for it (a bound for one that ignores it), puts back the terminal modes it
saved before the start and stops with 130. An engine on a real pseudo-terminal drives
`proc.run` with a child that switches echo off and then waits."""

from __future__ import annotations

import sys
import termios
import time
from pathlib import Path

import pytest

from installer.edges import proc
from tests.fakes.executables import make_executable

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
ROOT = Path(__file__).resolve().parents[1]

CHILD = """\
import signal, sys, termios, time
signal.signal(signal.SIGINT, signal.SIG_IGN if sys.argv[1] == "ignore" else signal.SIG_DFL)
mode = termios.tcgetattr(0)
mode[3] &= ~(termios.ECHO | termios.ICANON)
termios.tcsetattr(0, termios.TCSANOW, mode)
print("waiting, echo off", flush=True)
time.sleep(60)
"""

ENGINE = """\
import os, sys
sys.path.insert(0, {root!r})
from installer.decide.tooling import Tool
from installer.edges import proc
how, where, child = sys.argv[1:4]
tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
terminal = "attached" if where == "attached" else (tty, tty)
try:
    proc.run(Tool("child", child), [how], timeout=120, terminal=terminal)
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(0)
"""


@pytest.mark.parametrize("where", ["attached", "descriptors"])
@pytest.mark.parametrize("how", ["default", "ignore"])
def test_ctrl_c_reaches_the_child_and_the_terminal_gets_its_modes_back(
    tmp_path: Path, where: str, how: str
) -> None:
    from tests.fakes.terminal import Pty

    child = make_executable(tmp_path / "child", CHILD)
    engine = tmp_path / "engine.py"
    engine.write_text(ENGINE.format(root=str(ROOT)), encoding="utf-8")
    term = Pty.start([sys.executable, str(engine), how, where, str(child)], cwd=tmp_path)
    try:
        before = termios.tcgetattr(term.fd)
        term.expect("waiting, echo off")
        assert not termios.tcgetattr(term.fd)[3] & termios.ECHO
        pressed = time.monotonic()
        term.type("\x03")
        code = term.wait(timeout=60)
        took = time.monotonic() - pressed
        after = termios.tcgetattr(term.fd)
    finally:
        term.close()
    assert code == 130, term.screen()
    assert after[3] == before[3] and after[3] & termios.ECHO
    if how == "ignore":  # ended after the bound, not left running, not waited for forever
        assert proc.ON_TERMINAL_GRACE_S <= took < proc.ON_TERMINAL_GRACE_S + 10, took
    else:
        assert took < proc.ON_TERMINAL_GRACE_S, took
