"""The engine's entry point run inside the test process, as `python -m installer` would run it.

What a process gives the engine and a test could see is set up and put back around the call:
the environment, the working directory, `sys.argv`, descriptors 0-2 (pipes, so a child the
engine lets write to its own stdout is captured too, and a descendant that keeps them open
holds the run as it holds `subprocess.run`), the signal handlers, the `installer` logger and
the engine's module-level registries. A run that leaves a thread of its own running fails:
in a process that thread would have died with it. POSIX only; elsewhere, and where the
interpreter itself is configured (PYTHON* variables, a non-UTF-8 locale), `run` says no.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
MAIN = REPO / "installer" / "__main__.py"
SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE")
    if hasattr(signal, name)
)
# Threads the engine stops itself get this long after the run returns (the spinner's join).
THREAD_GRACE_S = 5.0


def possible(env: Mapping[str, str]) -> bool:
    """Whether a run with `env` behaves in process exactly as in a child interpreter."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        return False
    if any(key.startswith("PYTHON") and key != "PYTHONPATH" for key in env):
        return False
    if env.get("PYTHONPATH", str(REPO)) != str(REPO):  # another tree (a copy, a stamp)
        return False
    locale = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or ""
    if locale.replace("-", "").lower().partition(".")[2] != "utf8":
        return False
    try:
        import installer
    except ImportError:
        return False
    # The child imports the tree PYTHONPATH names: this process must have imported the same.
    return Path(installer.__file__).resolve().parent == REPO / "installer"


def run(
    args: Sequence[str], *, env: Mapping[str, str], cwd: Path, input: str | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """`installer.cli.main` with `args`, like `subprocess.run([... -m installer, *args],
    env=env, cwd=cwd, input=input, capture_output=True, text=True, timeout=timeout)`."""
    from installer import cli

    argv = [sys.executable, "-m", "installer", *args]
    before = set(threading.enumerate())
    with ExitStack() as stack:
        stack.enter_context(_environment(env))
        stack.enter_context(_directory(cwd))
        stack.enter_context(_engine_state())
        out, err = stack.enter_context(_standard_streams(input))
        sys.argv = [str(MAIN), *args]
        watchdog = _Watchdog(timeout)
        try:
            code = _exit_code(cli.main)
            expired = watchdog.cancel()
        except KeyboardInterrupt:  # the deadline's interrupt, landing after the engine returned
            code, expired = 130, watchdog.cancel()
    left = [t for t in threading.enumerate() if t not in before and t.is_alive() and _engines(t)]
    for thread in left:
        thread.join(THREAD_GRACE_S)
    stdout, stderr = out.result(watchdog.remaining()), err.result(watchdog.remaining())
    if expired or stdout is None or stderr is None:
        raise subprocess.TimeoutExpired(argv, timeout, stdout, stderr)
    running = [t.name for t in left if t.is_alive()]
    if running:
        raise AssertionError(
            f"the in-process run left threads running: {running}; a "
            "process would have ended them (mark the test "
            "@pytest.mark.subprocess)"
        )
    return subprocess.CompletedProcess(argv, code, stdout, stderr)


def _engines(thread: threading.Thread) -> bool:
    """A thread the engine started (its own, or a pool's worker), not a test fake's server."""
    module = getattr(getattr(thread, "_target", None), "__module__", None) or ""
    return module.startswith(("installer.", "concurrent.futures"))


def _exit_code(main: object) -> int:
    """What the process would exit with: `raise SystemExit(cli.main())` in __main__.py."""
    try:
        code = main()  # type: ignore[operator]
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:  # a deadline's interrupt landing after the engine returned
        code = 130
    except Exception:  # what the interpreter does with an uncaught one: a traceback, exit 1
        import traceback

        traceback.print_exc()
        return 1
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


class _Watchdog:
    """Past the deadline, Ctrl-C in the main thread (the engine stops as it would), and the
    run reports TimeoutExpired as subprocess.run does. (A SIGINT this process ignores stays
    ignored, as in a child: then the run goes on.)"""

    def __init__(self, timeout: float) -> None:
        import time

        self._clock = time.monotonic
        self._deadline = self._clock() + timeout
        self._lock = threading.Lock()
        self._done = False
        self.fired = False
        self._timer = threading.Timer(timeout, self._fire)
        self._timer.name = "inprocess-watchdog"
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if not self._done:
                self.fired = True
                # A real SIGINT, not interrupt_main(): it also ends a wait blocked in C.
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def cancel(self) -> bool:
        with self._lock:
            self._done = True
        self._timer.cancel()
        self._timer.join()
        return self.fired

    def remaining(self) -> float:
        return max(0.5, self._deadline - self._clock())


@contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    saved_tempdir = tempfile.tempdir
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # read again from this environment's TMPDIR, as a child would
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        tempfile.tempdir = saved_tempdir


@contextmanager
def _directory(cwd: Path) -> Iterator[None]:
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


@contextmanager
def _engine_state() -> Iterator[None]:
    """Signal handlers, sys.argv, the `installer` logger and the engine's registries: what
    a process starts with fresh, put back as it was."""
    from installer.edges import lifetime, proc

    handlers = {number: signal.getsignal(number) for number in SIGNALS}
    argv = list(sys.argv)
    logger = logging.getLogger("installer")
    kept = (
        list(logger.handlers),
        logger.level,
        logger.propagate,
        logger.disabled,
        logging.raiseExceptions,
    )
    in_group, watchers, stopped = (
        dict(proc._in_group),
        list(proc._watchers),
        list(lifetime._stopped_by),
    )
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        sys.argv = argv
        logger.handlers[:], logger.level, logger.propagate, logger.disabled = kept[:4]
        logging.raiseExceptions = kept[4]
        proc._in_group.clear()
        proc._in_group.update(in_group)
        proc._watchers[:] = watchers
        lifetime._stopped_by[:] = stopped


class _Reader:
    """Reads one pipe to its end in a thread, then decodes it as text=True does."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._chunks: list[bytes] = []
        self._thread = threading.Thread(target=self._read, name="inprocess-reader", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self._fd, 1 << 16):
                self._chunks.append(chunk)
        finally:
            os.close(self._fd)

    def result(self, timeout: float) -> str | None:
        self._thread.join(timeout)
        if self._thread.is_alive():  # a descendant still holds the pipe
            return None
        text = b"".join(self._chunks).decode("utf-8", "strict")
        return text.replace("\r\n", "\n").replace("\r", "\n")


def _feed(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:  # the engine closed stdin without reading it all (BrokenPipe)
        pass
    finally:
        os.close(fd)


@contextmanager
def _standard_streams(input: str | None) -> Iterator[tuple[_Reader, _Reader]]:
    """Descriptors 0-2 and sys.stdin/stdout/stderr as a child with capture_output has them."""
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    _flush()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    readers = (_Reader(out_r), _Reader(err_r))
    if input is None:
        stdin_fd = os.open(os.devnull, os.O_RDONLY)
    else:
        stdin_fd, in_w = os.pipe()
        text = input.replace("\n", os.linesep).encode("utf-8")
        threading.Thread(
            target=_feed, args=(in_w, text), name="inprocess-feeder", daemon=True
        ).start()
    for fd, target in ((0, stdin_fd), (1, out_w), (2, err_w)):
        os.dup2(target, fd)
        os.close(target)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = io.TextIOWrapper(
        open(2, "wb", buffering=0, closefd=False),  # noqa: SIM115
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    try:
        yield readers
    finally:
        _flush()
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for fd, saved in zip((0, 1, 2), saved_fds, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
