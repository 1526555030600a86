"""What the user watches while `install` runs, and the install log file.

On a terminal a spinner, then `✓ title (3.2s)` or `✗`; elsewhere (a pipe, CI, `NO_COLOR`,
`TB_PLAIN`, `TERM=dumb`) timestamped start and end lines. Every text passes the redactor;
while a spinner is on screen, all output to its stream goes through the `Ui`.
"""

from __future__ import annotations

import codecs
import contextlib
import datetime
import logging
import os
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TextIO

from installer.decide.errors import InstallerError
from installer.decide.printable import shown
from installer.decide.redact import RedactingFilter, Redactor
from installer.edges import files
from installer.present.console import is_terminal

log = logging.getLogger("installer.present.ui")

TICK_S = 0.1  # spinner frame interval: ~10 Hz
SPINNER_THREAD = "tracebloc-spinner"
_FALSE = ("", "0", "false", "no", "off")


@dataclass(frozen=True)
class Glyphs:
    frames: str
    ok: str
    fail: str
    warn: str


class Step:
    """What the body of `Ui.step` says about its own result: a step that ran to its end
    without an exception can still have failed (a rejected password) or fallen short (a
    wait that ran out), and is then never shown with a ✓."""

    def __init__(self) -> None:
        self.outcome = "done"

    def fail(self) -> None:
        self.outcome = "failed"

    def warn(self) -> None:
        if self.outcome == "done":
            self.outcome = "warning"


UNICODE = Glyphs(frames="⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏", ok="✓", fail="✗", warn="!")
ASCII = Glyphs(frames="|/-\\", ok="[ok]", fail="[failed]", warn="[!]")

_GREEN, _YELLOW, _RED, _RESET = "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[0m"


def wants_fancy(env: Mapping[str, str]) -> bool:
    """Spinner and colour allowed by the environment (the stream must also be a tty): not with
    `NO_COLOR`/`TB_PLAIN` set, a true-like `CI`, or `TERM=dumb`."""
    if env.get("NO_COLOR") or env.get("TB_PLAIN"):
        return False
    if env.get("CI", "").strip().lower() not in _FALSE:
        return False
    return env.get("TERM", "") != "dumb"


class Ui:
    def __init__(
        self,
        stream: TextIO,
        *,
        env: Mapping[str, str],
        redactor: Redactor,
        is_tty: bool | None = None,
    ) -> None:
        self.stream = stream
        self.redactor = redactor
        tty = is_terminal(stream) if is_tty is None else is_tty
        self.fancy = tty and wants_fancy(env)
        self.colour = self.fancy and _enable_colour(stream)
        self.glyphs = UNICODE if can_encode(stream, UNICODE) else ASCII
        self._lock = threading.Lock()
        # The step whose spinner is on screen: (title, started); `_drawn` is how many
        # characters of it are on the current line.
        self._spinning: tuple[str, float] | None = None
        self._drawn = 0
        self._columns = env.get("COLUMNS", "")
        self._width = terminal_width(stream)
        self._last_progress = ""
        self._step_title = ""

    def columns(self) -> int:
        """The terminal's width now: COLUMNS when set (as shutil reads it), else the
        stream's terminal, else 80."""
        given = self._columns.strip()
        return int(given) if given.isdigit() and int(given) > 0 else terminal_width(self.stream)

    # --- steps -------------------------------------------------------------------------

    @contextlib.contextmanager
    def step(self, title: str) -> Iterator[Step]:
        """Show `title` while the body runs, then done/failed/interrupted; exceptions propagate
        after the line is finished and the spinner stopped."""
        title = " ".join(self._clean(title).split())
        started = time.monotonic()
        log.info("step: %s", title)
        stop: threading.Event | None = None
        thread: threading.Thread | None = None
        if self.fancy and self._spinning is None:
            stop = threading.Event()
            self._spinning = (title, started)
            self._step_title = title
            thread = threading.Thread(
                target=self._spin, args=(stop,), name=SPINNER_THREAD, daemon=True
            )
            thread.start()
        elif not self.fancy:
            self._write(f"{clock()} {title} ...\n")
        outcome = "failed"
        result = Step()
        try:
            yield result
            outcome = result.outcome
        except KeyboardInterrupt:
            outcome = "interrupted"
            raise
        finally:
            elapsed = time.monotonic() - started
            if stop is not None and thread is not None:
                stop.set()
                thread.join(timeout=5 * TICK_S + 1)
                with self._lock:
                    self._clear_spinner()
                    self._spinning = None
            self._finish(title, outcome, elapsed)
            log.info("step %s: %s (%.1fs)", outcome, title, elapsed)

    def _finish(self, title: str, outcome: str, elapsed: float) -> None:
        took = f"({elapsed:.1f}s)"
        if not self.fancy:
            self._line(f"{clock()} {title}: {outcome} {took}")
        elif outcome == "done":
            self._line(f"{self._paint(self.glyphs.ok, _GREEN)} {title} {took}")
        elif outcome == "warning":
            self._line(f"{self._paint(self.glyphs.warn, _YELLOW)} {title} {took}")
        else:
            suffix = ": interrupted" if outcome == "interrupted" else ""
            self._line(f"{self._paint(self.glyphs.fail, _RED)} {title}{suffix} {took}")

    def _spin(self, stop: threading.Event) -> None:
        frame = 0
        while True:
            with self._lock:
                # Checked under the lock: once `step` has cleared the line, never redraw.
                if stop.is_set() or self._spinning is None:
                    return
                title, started = self._spinning
                glyph = self.glyphs.frames[frame % len(self.glyphs.frames)]
                text = f"{glyph} {title} ({int(time.monotonic() - started)}s)"
                # Measured every frame: after the terminal shrinks, a line longer than the
                # new width would wrap, and a wrapped line cannot be redrawn in place.
                self._width = terminal_width(self.stream)
                text = text[: max(self._width - 1, 1)]
                try:
                    pad = max(min(self._drawn, self._width - 1) - len(text), 0)
                    self._raw(f"\r{text}{' ' * pad}")
                    self.stream.flush()
                except (OSError, ValueError):  # the stream went away: stop drawing
                    return
                self._drawn = len(text)
            frame += 1
            if stop.wait(TICK_S):
                return

    def _clear_spinner(self) -> None:
        """Blank the spinner line and return to its start. Caller holds the lock."""
        if self._drawn:
            # Never wider than the terminal is now: blanks that wrap would leave the cursor
            # a line below the one being cleared.
            self._width = terminal_width(self.stream)
            self._raw(f"\r{' ' * min(self._drawn, max(self._width - 1, 1))}\r")
            self._drawn = 0

    def progress(self, text: str) -> None:
        """What a running step is waiting for right now. On a terminal it becomes the
        spinner's line; elsewhere a plain line, written only when it changes."""
        text = " ".join(self._clean(text).split())
        if self.fancy and self._spinning is not None:
            with self._lock:
                if self._spinning is not None:
                    self._spinning = (f"{self._step_title}: {text}", self._spinning[1])
            return
        if text != self._last_progress:
            self._last_progress = text
            log.info("progress: %s", text)
            self._line(f"{clock()} {text}" if not self.fancy else text)

    # --- messages ------------------------------------------------------------------------

    def info(self, text: str) -> None:
        self._message("info", "", text)

    def detail(self, text: str) -> None:
        """A line for the record: shown where nobody watches a terminal (a pipe, CI), else
        only in the log (and on --verbose's console), so the run's screen stays short."""
        if self.fancy:
            log.info("detail: %s", self._clean(text))
        else:
            self.info(text)

    def ok(self, text: str) -> None:
        self._message("ok", self._paint(self.glyphs.ok, _GREEN) + " " if self.fancy else "", text)

    def warn(self, text: str) -> None:
        self._message("warning", self._paint("warning:", _YELLOW) + " ", text)

    def error(self, text: str) -> None:
        self._message("error", self._paint("error:", _RED) + " ", text)

    def _message(self, kind: str, prefix: str, text: str) -> None:
        text = self._clean(text)
        log.info("%s: %s", kind, text)
        lines = text.split("\n")
        if self.fancy:
            # Wrapped to the terminal's width, one column spare: no row wider than it.
            room = max(self.columns() - 1, 20)
            first = (prefix + lines[0]) if lines else prefix
            fitted = [
                row
                for line in [first, *lines[1:]]
                for row in (
                    textwrap.wrap(line, room, subsequent_indent="  ", break_on_hyphens=False)
                    or [""]
                )
            ]
            self._line("\n".join(fitted))
        else:
            stamp = clock()
            self._line("\n".join(f"{stamp} {prefix}{line}" for line in lines))

    # --- output ----------------------------------------------------------------------------

    def _clean(self, text: str) -> str:
        # Text may quote the cluster (a pod's message): ESC and the rest are shown escaped.
        return shown(self.redactor(str(text)))

    def _paint(self, text: str, colour: str) -> str:
        return f"{colour}{text}{_RESET}" if self.colour else text

    def _line(self, text: str) -> None:
        self._write(text + "\n")

    def _write(self, text: str) -> None:
        """Write whole lines; a spinner on screen is cleared first and redraws next tick."""
        with self._lock:
            try:
                self._clear_spinner()
                self._raw(text)
                self.stream.flush()
            except (OSError, ValueError):
                pass  # a closed or broken stream must not turn progress into a failure

    def _raw(self, text: str) -> None:
        encoding = getattr(self.stream, "encoding", None)
        if encoding:
            text = text.encode(encoding, "replace").decode(encoding, "replace")
        self.stream.write(text)


def clock() -> str:
    return time.strftime("[%H:%M:%S]")


def terminal_width(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


def can_encode(stream: TextIO, glyphs: Glyphs) -> bool:
    encoding = getattr(stream, "encoding", None)
    if not encoding:  # an in-memory text stream holds any str
        return True
    try:
        codecs.encode(glyphs.frames + glyphs.ok + glyphs.fail + glyphs.warn, encoding)
    except (UnicodeError, LookupError):
        return False
    return True


def _enable_colour(stream: TextIO) -> bool:
    """ANSI colour works on POSIX terminals; a Windows console must be switched to VT mode
    (Windows 10+), and without it colour stays off rather than printing escape codes."""
    if sys.platform == "win32":
        try:
            import ctypes
            import msvcrt

            handle = msvcrt.get_osfhandle(stream.fileno())
            kernel32 = getattr(ctypes, "windll").kernel32  # noqa: B009 - absent off Windows
            mode = ctypes.c_uint32()
            if not kernel32.GetConsoleMode(handle, ctypes.byref(mode)):
                return False
            return bool(kernel32.SetConsoleMode(handle, mode.value | 0x0004))
        except (AttributeError, OSError, ValueError):
            return False
    return True


# --- the log file --------------------------------------------------------------------------

LOG_FILE = "install.log"


class _RedactingFormatter(logging.Formatter):
    """Timestamped with the local UTC offset; redacts the whole formatted record, so a
    traceback (`exc_info`) cannot carry a secret past the filter either."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
        self.redactor = redactor

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        moment = datetime.datetime.fromtimestamp(record.created).astimezone()
        return moment.isoformat(timespec="milliseconds")

    def format(self, record: logging.LogRecord) -> str:
        return self.redactor(super().format(record))


class _LogFile(logging.StreamHandler):
    """A StreamHandler that owns its file and goes quiet when it fails (a full disk): the
    install goes on and the log ends where it could not be written."""

    broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.broken:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        self.broken = True

    def close(self) -> None:
        self.acquire()
        try:
            with contextlib.suppress(OSError, ValueError):
                self.flush()
                self.stream.close()
        finally:
            self.release()
        super().close()


def open_log(path: str, redactor: Redactor) -> logging.Handler:
    """A DEBUG handler appending redacted lines to `path`; the directory made 0700 and the file
    0600 on POSIX (a readable one narrowed). The caller attaches and closes it."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise InstallerError(
            f"cannot open the log file {path}: {exc.strerror or exc}",
            "set HOST_DATA_DIR to a directory you can write to",
        ) from None
    fd = files.open_append(path)  # never through a link, never onto a FIFO or a device
    stream = open(fd, "a", encoding="utf-8", errors="replace")  # the handler owns and closes it
    handler = _LogFile(stream)
    handler.setLevel(logging.DEBUG)
    handler.addFilter(RedactingFilter(redactor))
    handler.setFormatter(_RedactingFormatter(redactor))
    return handler
