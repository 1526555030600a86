"""Drive the CLI through a real pseudo-terminal, as a person at a keyboard would (POSIX).

    with Pty.spawn(["install"], env=env, cwd=root) as term:
        term.expect(r"Client ID")
        term.send("client-7f3a")
        code = term.wait()

The child gets the pty as its controlling terminal (stdin, stdout, stderr and /dev/tty),
so hidden password input and `/dev/tty` prompts behave as they do for a user.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import time
from collections.abc import Iterator, Mapping, Sequence

from tests.fakes.cluster import installer_command


class Pty:
    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.buffer = b""
        self.position = 0
        self.returncode: int | None = None

    @classmethod
    @contextlib.contextmanager
    def spawn(cls, args: Sequence[str], *, env: Mapping[str, str], cwd: object) -> Iterator[Pty]:
        import pty

        argv = [*installer_command(), *args]
        pid, fd = pty.fork()
        if pid == 0:  # the child: never return into pytest
            try:
                os.chdir(str(cwd))
                os.execve(argv[0], argv, dict(env))
            finally:
                os._exit(127)
        term = cls(pid, fd)
        try:
            yield term
        finally:
            if term.returncode is None:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)
            os.close(fd)

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def expect(self, pattern: str, timeout: float = 30) -> str:
        """Wait for `pattern` in what the child printed since the last match."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            text = self.buffer.decode("utf-8", errors="replace")
            match = regex.search(text, self.position)
            if match:
                self.position = match.end()
                return match.group(0)
            if time.monotonic() > deadline or not self._read(0.1):
                raise AssertionError(f"never saw {pattern!r}; the terminal shows:\n{text}")

    def send(self, line: str) -> None:
        os.write(self.fd, line.encode("utf-8") + b"\r")

    def wait(self, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.1)  # keep draining, or a chatty child blocks on a full terminal
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                while self._read(0.05) and select.select([self.fd], [], [], 0)[0]:
                    pass
                self.returncode = os.waitstatus_to_exitcode(status)
                return self.returncode
        raise AssertionError(f"still running after {timeout}s:\n{self.screen()}")

    def screen(self) -> str:
        return self.buffer.decode("utf-8", errors="replace")
