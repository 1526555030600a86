"""What the engine prints and logs, and where: stdout answers (text or JSON, redacted, control
characters shown escaped), one-line errors on stderr, the console's log format, the install log.
A closed or full stdout is one line on stderr, never a traceback."""

from __future__ import annotations

import errno
import json
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

from installer.decide import printable
from installer.decide.errors import InstallerError
from installer.decide.redact import RedactingFilter, Redactor

if TYPE_CHECKING:
    from installer.present.ui import Ui


def log_to_file(path: str, redactor: Redactor, ui: Ui) -> logging.Handler | None:
    """The install log; an install still runs when the log cannot be written."""
    from installer.present.ui import open_log

    try:
        handler = open_log(path, redactor)
    except InstallerError as exc:
        ui.warn(f"{exc.message}; continuing without a log file")
        return None
    root = logging.getLogger("installer")
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    return handler


def emit(as_json: bool, document: dict[str, Any], text: str, redactor: Redactor) -> bool:
    """Everything printed passes the redactor: a tool's error may echo a proxy URL.
    False when stdout could not take it (closed, full, gone)."""
    if as_json:
        return write_stdout(json.dumps(redact_all(document, redactor), indent=2) + "\n")
    return write_stdout(printable.shown(redactor(text)) + "\n")  # cluster text: ESC shown, not sent


def write_stdout(text: str) -> bool:
    """One line on stderr, or silence for a reader that went away (`| head`): never a
    traceback, and nothing left buffered for the interpreter to fail on at exit."""
    stream = sys.stdout
    try:
        if stream is None:
            raise OSError(errno.EBADF, "standard output is closed")
        stream.write(text)
        stream.flush()
        return True
    except (OSError, ValueError) as exc:
        silence_stdout()
        if getattr(exc, "errno", None) != errno.EPIPE:
            reason = getattr(exc, "strerror", None) or str(exc) or "closed"
            stderr(f"error: cannot write to standard output: {reason}\n")
        return False


def silence_stdout() -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass
    if sys.stdout is not None:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
        except OSError:
            pass


def stderr(text: str) -> None:
    try:
        if sys.stderr is not None:
            sys.stderr.write(text)
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def redact_all(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {key: redact_all(item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_all(item, redactor) for item in value]
    return value


def fail(message: str, remedy: str) -> None:
    # A message may quote the cluster (a helm error, a clientId): control characters are
    # shown escaped, never sent to the terminal.
    lines = [f"error: {printable.shown(message)}\n"] + [
        f"  {line}\n" for line in printable.shown(remedy).splitlines()
    ]
    stderr("".join(lines))


class ConsoleFormat(logging.Formatter):
    """The console's one format, the same as the progress lines: `[12:03:04] text`, with
    `warning:` before warnings."""

    def __init__(self) -> None:
        super().__init__("[%(asctime)s] %(message)s", datefmt="%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if record.levelno >= logging.WARNING and not record.getMessage().startswith("warning:"):
            stamp, _, rest = text.partition("] ")
            text = f"{stamp}] warning: {rest}"
        # Continuation lines indented, never unstamped; control characters shown escaped.
        return printable.shown(text).replace("\n", "\n  ")


def not_progress(record: logging.LogRecord) -> bool:
    # The progress display prints its own lines; its records are for the log file only.
    return not record.name.startswith("installer.present.ui")


def configure_logging(verbose: bool, redactor: Redactor) -> None:
    logging.raiseExceptions = False  # a log that cannot be written is not worth a traceback
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactingFilter(redactor))
    handler.addFilter(not_progress)
    handler.setFormatter(ConsoleFormat())
    # The console shows warnings (debug with --verbose) even when the log file takes all.
    handler.setLevel(logging.DEBUG if verbose else logging.WARNING)
    root = logging.getLogger("installer")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    root.propagate = False


def tolerant_console() -> None:
    # A Windows console may be cp1252 and a pipe may be ASCII: never die printing a node name.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="replace")
            except (ValueError, OSError):
                pass
