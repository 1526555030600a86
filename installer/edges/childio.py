"""A child's side of `proc.run`: the environment it gets (the user's library path restored in
a frozen binary; the engine's secrets withheld) and what is kept of what it prints (stdout
whole up to a bound, stderr's last part), read in threads so a full pipe never blocks it."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any


def child_env(env: Mapping[str, str], frozen: bool | None = None) -> dict[str, str]:
    """The environment for a child process: the user's LD_LIBRARY_PATH (from a frozen binary's
    LD_LIBRARY_PATH_ORIG), never our bundled one; on macOS only an _ORIG is put back."""
    out = dict(env)
    if frozen if frozen is not None else getattr(sys, "frozen", False):
        original = out.pop("LD_LIBRARY_PATH_ORIG", None)
        if original is not None:
            out["LD_LIBRARY_PATH"] = original
        else:
            out.pop("LD_LIBRARY_PATH", None)
        dyld = out.pop("DYLD_LIBRARY_PATH_ORIG", None)
        if dyld is not None:
            out["DYLD_LIBRARY_PATH"] = dyld
    return out


# The engine's secrets never reach a child's environment; proxy variables stay (tools need them).
SECRET_VARIABLES = ("TRACEBLOC_CLIENT_PASSWORD", "TRACEBLOC_REGISTRY_PASSWORD")


# What is kept of a tool's output: stdout whole up to a bound (a bigger answer is cut, and
# so fails to parse: unreadable, never half-read); stderr's last part, where errors are.
MAX_STDOUT = 64 * 2**20


MAX_STDERR = 2**20


def child_environment(env: Mapping[str, str], secrets: Sequence[str]) -> dict[str, str]:
    out = child_env(env)
    # The secret variables' values are secrets whether or not the caller's redactor knows
    # them: a child run without one (a `<tool> version` query) must not get a copy either.
    withheld = set(secrets) | {value for name in SECRET_VARIABLES if (value := out.pop(name, None))}
    # A secret that arrived another way (the prompt, the values file) but also sits in some
    # variable the user exported is the engine's secret too.
    for name in [n for n, value in out.items() if value in withheld]:
        del out[name]
    return out


class Drain:
    """Reads one pipe to its end in a thread, keeping the first (or last) `cap` bytes."""

    def __init__(self, stream: IO[bytes] | None, cap: int, keep_last: bool) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self._cap, self._keep_last = cap, keep_last
        self._lock = threading.Lock()
        self.thread = threading.Thread(
            target=self._read, args=(stream,), daemon=True, name="proc-drain"
        )
        if stream is not None:
            self.thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            fd = stream.fileno()
            while chunk := os.read(fd, 65536):
                with self._lock:
                    self._add(chunk)
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def _add(self, chunk: bytes) -> None:
        if not self._keep_last:
            room = self._cap - self.size
            if room > 0:
                self.chunks.append(chunk[:room])
                self.size += min(room, len(chunk))
            return
        self.chunks.append(chunk)
        self.size += len(chunk)
        while self.size - len(self.chunks[0]) >= self._cap:
            self.size -= len(self.chunks.popleft())

    def wait(self, seconds: float) -> bool:
        """True when the pipe reached its end within `seconds`."""
        if self.thread.ident is None:
            return True
        self.thread.join(max(seconds, 0.0))
        return not self.thread.is_alive()

    def data(self) -> bytes:
        with self._lock:
            joined = b"".join(self.chunks)
        return joined[-self._cap :] if self._keep_last else joined


def decode(data: bytes | None) -> str:
    """Bytes from a tool as text: UTF-8 (BOM tolerated), undecodable bytes replaced."""
    if not data:
        return ""
    return data.decode("utf-8-sig", errors="replace")


LINE_CAP = 300


def cap(line: str, most: int = LINE_CAP) -> str:
    """At most `most` characters; a cut line ends in `…` (so the redactor sees the cut)."""
    return line if len(line) <= most else line[: most - 1] + "…"


def last_line(text: str, rc: int) -> str:
    """A tool's failure in one line: its exit code and the last thing it said."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return f"exit {rc}: {cap(lines[-1])}" if lines else f"exit {rc} with no message"


def keep_terminal_setup(preexec: Callable[[], None] | None) -> Callable[[], None]:
    """A preexec_fn: a process group of its own in the engine's session, so the child keeps
    the controlling terminal (sudo keys its cached password to it) and can still be killed
    as a group."""

    def setup() -> None:
        if sys.platform != "win32":
            os.setpgid(0, 0)
        if preexec is not None:
            preexec()

    return setup


@contextlib.contextmanager
def on_terminal(fd: int) -> Iterator[None]:
    """Around a child on the person's terminal `fd` (POSIX): our group is the foreground
    meanwhile, and the terminal's modes are restored after, however the child ended."""
    if sys.platform == "win32":
        yield
        return
    import signal
    import termios

    saved: list[Any] | None
    try:
        saved = termios.tcgetattr(fd)
        foreground = os.tcgetpgrp(fd)
    except (OSError, termios.error):
        saved, foreground = None, -1
    ours = os.getpgrp()
    # SIGTTOU would stop the engine when it changes the terminal from the background.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    try:
        if foreground not in (-1, ours):
            with contextlib.suppress(OSError):
                os.tcsetpgrp(fd, ours)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def give_back() -> None:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
        try:
            if saved is not None:
                with contextlib.suppress(OSError, termios.error):
                    termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            if foreground not in (-1, ours):
                with contextlib.suppress(OSError):
                    os.tcsetpgrp(fd, foreground)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    try:
        yield
    finally:
        try:
            give_back()
        except KeyboardInterrupt:  # the Ctrl-C the child died of, arriving here: done again
            give_back()
            raise
