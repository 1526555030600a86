"""A download's progress: a redrawn bar (bytes, percent, rate) on a terminal; elsewhere a
few plain timestamped lines (start, each quarter, end), which read well in a CI log."""

from __future__ import annotations

import threading
import time
from typing import TextIO

from installer.present.ui import ASCII, UNICODE, can_encode, clock, terminal_width

REDRAW_S = 0.1
BAR = 24
MIB = 1024 * 1024


def size_text(count: float) -> str:
    return f"{count / MIB:.1f} MiB"


class Progress:
    """Called as `progress(done, total)` from the downloading thread; `finish()` once."""

    def __init__(
        self, stream: TextIO, label: str, *, fancy: bool, settled: list[str] | None = None
    ) -> None:
        self.stream = stream
        self.label = label
        self.fancy = fancy
        # On a terminal with `settled`, a finished bar leaves no line: its label goes there,
        # and the caller says them all in one line.
        self.settled = settled
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._drawn_at = 0.0
        self._quarter = 0
        self._done = 0
        self._width = 0
        unicode = can_encode(stream, UNICODE)
        self._fill, self._empty = ("█", "░") if unicode else ("#", ".")
        self._glyph_ok = (UNICODE if unicode else ASCII).ok

    def __call__(self, done: int, total: int | None) -> None:
        with self._lock:
            self._done = done
            now = time.monotonic()
            if self.fancy:
                if now - self._drawn_at >= REDRAW_S or (total is not None and done >= total):
                    self._drawn_at = now
                    self._draw(done, total, now)
            elif done == 0:
                length = f" ({size_text(total)})" if total else ""
                self._line(f"{clock()} downloading {self.label}{length}")
            elif total:
                quarter = min(4, done * 4 // total)
                if 0 < quarter < 4 and quarter > self._quarter:
                    self._quarter = quarter
                    self._line(
                        f"{clock()}   {self.label}: {quarter * 25}% "
                        f"({size_text(done)} of {size_text(total)})"
                    )

    def finish(self, ok: bool) -> None:
        with self._lock:
            seconds = max(time.monotonic() - self._started, 1e-3)
            rate = f"{size_text(self._done / seconds)}/s"
            if self.fancy:
                self._write(
                    "\r" + " " * min(self._width, max(terminal_width(self.stream) - 1, 1)) + "\r"
                )
            if ok and self.fancy and self.settled is not None:
                self.settled.append(self.label)
            elif ok:
                mark = f"{self._glyph_ok} " if self.fancy else f"{clock()} "
                self._line(
                    f"{mark}downloaded {self.label}: {size_text(self._done)} in "
                    f"{seconds:.1f}s ({rate})"
                )
            elif not self.fancy:
                self._line(
                    f"{clock()} download of {self.label} stopped after {size_text(self._done)}"
                )

    def said(self, text: str) -> None:
        """One settled line (a check mark on a terminal)."""
        self._line(f"{self._glyph_ok} {text}" if self.fancy else f"{clock()} {text}")

    def _draw(self, done: int, total: int | None, now: float) -> None:
        seconds = max(now - self._started, 1e-3)
        rate = f"{size_text(done / seconds)}/s"
        if total:
            filled = min(BAR, done * BAR // total)
            bar = self._fill * filled + self._empty * (BAR - filled)
            text = (
                f"{self.label} {bar} {size_text(done)}/{size_text(total)} "
                f"{done * 100 // total:3d}% {rate}"
            )
        else:
            text = f"{self.label} {size_text(done)} {rate}"
        # Measured at each redraw, one column spare: a line that wraps cannot be redrawn.
        room = max(terminal_width(self.stream) - 1, 1)
        text = text[:room]
        self._write("\r" + text + " " * max(min(self._width, room) - len(text), 0))
        self._width = len(text)

    def _line(self, text: str) -> None:
        self._write(text + "\n")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed stream must not fail the download
