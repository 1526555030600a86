"""Drive a process through a real pseudo-terminal, as a person at a keyboard would (POSIX).

    with Pty.spawn(["install"], env=env, cwd=root) as term:   # the CLI, stdio on the pty
        term.expect("Client ID")
        term.send("client-7f3a")
        code = term.wait()

The child gets the pty as its controlling terminal, so hidden password input and `/dev/tty`
prompts behave as they do for a user. With `stdio_log`, the child's stdin and stdout are
/dev/null and its stderr goes to that file, while the pty stays its controlling terminal:
the shape of `curl … | sh`, where only /dev/tty reaches the user.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.fakes.cluster import installer_command


class Pty:
    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.seen = b""  # everything the child wrote to the terminal
        self.cursor = 0  # where the next expect starts looking
        self.returncode: int | None = None

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: object,
        env: Mapping[str, str] | None = None,
        stdio_log: Path | None = None,
        columns: int | None = None,
    ) -> Pty:
        """Start `argv` on a new pty; `close()` it when done. `columns`: the terminal's
        width from the start (rows: 40), as a window of that size has."""
        import pty

        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once, nothing else (the parent has threads)
            try:
                if columns is not None:
                    import fcntl
                    import struct
                    import termios

                    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
                if stdio_log is not None:
                    os.dup2(0, 10)  # keeps the terminal open, as the user's shell does
                    null = os.open(os.devnull, os.O_RDWR)
                    err = os.open(str(stdio_log), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    os.dup2(null, 0)
                    os.dup2(null, 1)
                    os.dup2(err, 2)
                os.chdir(str(cwd))
                os.execve(argv[0], list(argv), dict(os.environ if env is None else env))
            finally:
                os._exit(127)
        return cls(pid, fd)

    @classmethod
    @contextlib.contextmanager
    def spawn(
        cls, args: Sequence[str], *, env: Mapping[str, str], cwd: object, columns: int | None = None
    ) -> Iterator[Pty]:
        """The CLI (source or frozen binary) with `args`, all its stdio on the terminal."""
        term = cls.start([*installer_command(), *args], cwd=cwd, env=env, columns=columns)
        try:
            yield term
        finally:
            term.close()

    def close(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def _read(self, timeout: float) -> bool:
        """Read what is there within `timeout`; False once the child has closed the pty."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        self.seen += chunk
        return True

    def expect(self, text: str, timeout: float = 30) -> None:
        """Wait for `text` to show after what the previous expect matched."""
        deadline = time.monotonic() + timeout
        while (found := self.seen.find(text.encode(), self.cursor)) < 0:
            if time.monotonic() > deadline or not self._read(0.1):
                raise AssertionError(f"never saw {text!r}; the terminal shows:\n{self.screen()}")
        self.cursor = found + len(text.encode())

    def resize(self, rows: int, cols: int) -> None:
        """Change the terminal's size, as dragging its window does (the child gets SIGWINCH)."""
        import fcntl
        import struct
        import termios

        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def type(self, text: str) -> None:
        """Keystrokes as they are (`\\x03` is Ctrl-C, `\\x04` Ctrl-D)."""
        os.write(self.fd, text.encode("utf-8"))

    def send(self, line: str) -> None:
        """A line, ended by Enter."""
        self.type(line + "\r")

    def wait(self, timeout: float = 60) -> int:
        """The child's exit code, reading the terminal meanwhile: a chatty child must not
        block on a full terminal."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.1)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                while self._read(0.05) and select.select([self.fd], [], [], 0)[0]:
                    pass
                self.returncode = os.waitstatus_to_exitcode(status)
                return self.returncode
        raise AssertionError(f"still running after {timeout}s:\n{self.screen()}")

    def screen(self) -> str:
        return self.seen.decode("utf-8", errors="replace")


def unwrapped(text: str) -> str:
    """`text` with every run of whitespace one space: lines wrapped to the terminal's width
    read as they were before wrapping."""
    return " ".join(text.split())


_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class Rows:
    """What a terminal `columns` wide keeps of the output: its rows, and how many times a
    line reached the right edge and wrapped."""

    rows: list[str]
    wrapped: int


def rows(screen: str, columns: int = 80) -> Rows:
    """Replay `screen` as a terminal does: colours dropped, `\\r` back to the row's start
    (a spinner redraws in place), a line longer than the width wrapped onto the next row."""
    out: list[str] = []
    line: list[str] = []
    col = wrapped = 0
    for ch in _ESCAPE.sub("", screen):
        if ch == "\n":
            out.append("".join(line).rstrip())
            line, col = [], 0
        elif ch == "\r":
            col = 0
        elif ch == "\b":
            col = max(col - 1, 0)
        else:
            if col >= columns:
                out.append("".join(line).rstrip())
                line, col = [], 0
                wrapped += 1
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
    if "".join(line).strip():
        out.append("".join(line).rstrip())
    return Rows(out, wrapped)
