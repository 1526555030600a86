"""Progress output (plain lines / spinner on a tty) and the install log file."""

from __future__ import annotations

import io
import logging
import os
import re
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from installer.decide.errors import InstallerError
from installer.decide.redact import MASK, Redactor
from installer.present.ui import ASCII, SPINNER_THREAD, TICK_S, UNICODE, Ui, open_log

SECRET = "hunter2-s3cret"
STAMP = r"\[\d\d:\d\d:\d\d\]"
TOOK = r"\(\d+\.\ds\)"
ANSI = re.compile("\x1b\\[[0-9;]*m")
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes / pty")


class FakeTty(io.StringIO):
    """A terminal that can show any character."""

    def isatty(self) -> bool:
        return True


class AsciiTty(io.TextIOWrapper):
    """A terminal whose encoding cannot show the spinner or ✓ (a legacy console)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="ascii", errors="strict")

    def isatty(self) -> bool:
        return True

    def getvalue(self) -> str:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue().decode("ascii")


def screen(raw: str) -> list[str]:
    """What a terminal shows after `raw`: colour dropped, `\\r` returns to column 0 and
    overwrites, trailing blanks trimmed."""
    lines: list[list[str]] = [[]]
    col = 0
    for char in ANSI.sub("", raw):
        if char == "\n":
            lines.append([])
            col = 0
        elif char == "\r":
            col = 0
        else:
            line = lines[-1]
            line.extend(" " * (col + 1 - len(line)))
            line[col] = char
            col += 1
    shown = ["".join(line).rstrip() for line in lines]
    return shown[:-1] if shown and not shown[-1] else shown


def spinner_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == SPINNER_THREAD]


def eventually(condition: Callable[[], bool], bound: float = 10.0) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, "condition not reached within the bound"
        time.sleep(TICK_S / 4)


def fancy_ui(stream: io.TextIOBase | None = None, secrets: tuple[str, ...] = ()) -> Ui:
    ui = Ui(stream or FakeTty(), env={}, redactor=Redactor(secrets))  # type: ignore[arg-type]
    assert ui.fancy
    return ui


def plain_ui(env: dict[str, str] | None = None, secrets: tuple[str, ...] = ()) -> Ui:
    return Ui(io.StringIO(), env=env or {}, redactor=Redactor(secrets))


def text(ui: Ui) -> str:
    return ui.stream.getvalue()  # type: ignore[attr-defined]


# --- plain mode ------------------------------------------------------------------------------


def test_plain_step_is_two_timestamped_lines() -> None:
    ui = plain_ui()
    assert not ui.fancy
    with ui.step("Checking the machine"):
        pass
    lines = text(ui).splitlines()
    assert len(lines) == 2
    assert re.fullmatch(rf"{STAMP} Checking the machine \.\.\.", lines[0])
    assert re.fullmatch(rf"{STAMP} Checking the machine: done {TOOK}", lines[1])
    assert "\r" not in text(ui) and "\x1b" not in text(ui)
    assert not spinner_threads()


@pytest.mark.parametrize(
    ("raised", "outcome"),
    [
        pytest.param(RuntimeError("boom"), "failed", id="step-fails"),
        pytest.param(KeyboardInterrupt(), "interrupted", id="ctrl-c-during-step"),
    ],
)
def test_plain_step_that_raises(raised: BaseException, outcome: str) -> None:
    ui = plain_ui()
    with pytest.raises(type(raised)), ui.step("Installing the client"):
        raise raised
    last = text(ui).splitlines()[-1]
    assert re.fullmatch(rf"{STAMP} Installing the client: {outcome} {TOOK}", last)


def test_plain_messages_each_line_stamped() -> None:
    ui = plain_ui()
    ui.info("namespace tracebloc")
    ui.ok("installed")
    ui.warn("low memory")
    ui.error("helm failed:\nline one\nline two")
    lines = text(ui).splitlines()
    assert [re.sub(STAMP + " ", "", line) for line in lines] == [
        "namespace tracebloc",
        "installed",
        "warning: low memory",
        "error: helm failed:",
        "error: line one",
        "error: line two",
    ]
    assert all(re.match(STAMP, line) for line in lines)
    assert "\x1b" not in text(ui)


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"NO_COLOR": "1"}, id="no-color"),
        pytest.param({"TB_PLAIN": "1"}, id="tb-plain"),
        pytest.param({"TB_PLAIN": "yes"}, id="tb-plain-any-value"),
        pytest.param({"CI": "true"}, id="ci-true"),
        pytest.param({"CI": "1"}, id="ci-one"),
        pytest.param({"TERM": "dumb"}, id="dumb-terminal"),
    ],
)
def test_environment_forces_plain_on_a_tty(env: dict[str, str]) -> None:
    ui = Ui(FakeTty(), env=env, redactor=Redactor())
    assert not ui.fancy and not ui.colour
    with ui.step("Checking the machine"):
        ui.ok("fine")
    out = text(ui)
    assert "\r" not in out and "\x1b" not in out
    assert re.fullmatch(rf"{STAMP} Checking the machine: done {TOOK}", out.splitlines()[-1])
    assert not spinner_threads()


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"NO_COLOR": "", "TB_PLAIN": ""}, id="empty-no-color-and-tb-plain"),
        pytest.param({"CI": "false"}, id="ci-false"),
        pytest.param({"CI": ""}, id="ci-empty"),
        pytest.param({"TERM": "xterm-256color"}, id="xterm"),
    ],
)
def test_fancy_on_a_tty(env: dict[str, str]) -> None:
    ui = Ui(FakeTty(), env=env, redactor=Redactor())
    assert ui.fancy and ui.colour


def test_explicit_is_tty_overrides_the_stream() -> None:
    assert not Ui(FakeTty(), env={}, redactor=Redactor(), is_tty=False).fancy
    assert Ui(io.StringIO(), env={}, redactor=Redactor(), is_tty=True).fancy


def test_closed_stream_is_not_a_tty() -> None:
    stream = io.StringIO()
    stream.close()
    assert not Ui(stream, env={}, redactor=Redactor()).fancy


# --- fancy mode ------------------------------------------------------------------------------


def test_spinner_runs_during_step_and_stops_after() -> None:
    ui = fancy_ui()
    with ui.step("Installing the client"):
        eventually(lambda: any(frame in text(ui) for frame in UNICODE.frames))
        [thread] = spinner_threads()
        assert thread.daemon and thread.is_alive()
        assert re.search(r"Installing the client \(\d+s\)", text(ui))
    assert not spinner_threads()
    assert re.fullmatch(rf"✓ Installing the client {TOOK}", screen(text(ui))[-1])
    assert len(screen(text(ui))) == 1
    assert "\x1b[32m✓\x1b[0m" in text(ui)


@pytest.mark.parametrize(
    ("raised", "shown"),
    [
        pytest.param(RuntimeError("boom"), "✗ Installing the client", id="step-fails"),
        pytest.param(
            KeyboardInterrupt(), "✗ Installing the client: interrupted", id="ctrl-c-during-step"
        ),
    ],
)
def test_fancy_step_that_raises_finishes_its_line(raised: BaseException, shown: str) -> None:
    ui = fancy_ui()
    with pytest.raises(type(raised)), ui.step("Installing the client"):
        eventually(lambda: "Installing the client (" in text(ui))
        raise raised
    assert not spinner_threads()
    assert screen(text(ui)) == [screen(text(ui))[0]]
    assert re.fullmatch(rf"{re.escape(shown)} {TOOK}", screen(text(ui))[0])
    assert "\x1b[31m✗\x1b[0m" in text(ui)
    # The spinner's last frame was blanked before the mark was written: nothing left over.
    before_mark = text(ui).rsplit("\r", 1)
    assert before_mark[1].startswith("\x1b[31m✗") and before_mark[0].endswith(" ")
    settled = text(ui)
    time.sleep(3 * TICK_S)
    assert text(ui) == settled  # nothing draws after the step ended


def test_message_during_spinner_gets_its_own_line() -> None:
    ui = fancy_ui()
    with ui.step("Checking the machine"):
        eventually(lambda: "Checking the machine (" in text(ui))
        ui.warn("memory: 7.0 GiB total")
        eventually(lambda: text(ui).endswith(")") and "warning" in text(ui).rsplit("\n", 1)[0])
    shown = screen(text(ui))
    assert shown[0] == "warning: memory: 7.0 GiB total"
    assert re.fullmatch(rf"✓ Checking the machine {TOOK}", shown[1])
    assert len(shown) == 2
    assert "\x1b[33mwarning:\x1b[0m" in text(ui)


def test_nested_step_uses_the_outer_spinner() -> None:
    ui = fancy_ui()
    with ui.step("Installing"):
        eventually(lambda: "Installing (" in text(ui))
        with ui.step("Waiting for metrics"):
            assert len(spinner_threads()) == 1
    assert not spinner_threads()
    shown = screen(text(ui))
    assert [line.rsplit(" ", 1)[0] for line in shown] == ["✓ Waiting for metrics", "✓ Installing"]


def test_long_title_is_cut_to_the_terminal_width() -> None:
    ui = fancy_ui()
    with ui.step("x" * 300):
        eventually(lambda: text(ui).count("\r") >= 2)
        frames = text(ui).split("\r")[1:]
    assert frames and all(len(frame) < 80 for frame in frames[:-1])


def test_ascii_console_falls_back_to_ascii_frames() -> None:
    stream = AsciiTty()
    ui = fancy_ui(stream)
    assert ui.glyphs == ASCII
    with ui.step("Größe prüfen"):
        eventually(lambda: any(f"{frame} Gr" in stream.getvalue() for frame in ASCII.frames))
    ui.ok("done")
    with pytest.raises(RuntimeError), ui.step("Installing"):
        raise RuntimeError
    shown = screen(stream.getvalue())
    assert re.fullmatch(rf"\[ok\] Gr\?\?e pr\?fen {TOOK}", shown[0])
    assert shown[1] == "[ok] done"
    assert re.fullmatch(rf"\[failed\] Installing {TOOK}", shown[2])


def test_ascii_pipe_in_plain_mode_does_not_crash() -> None:
    stream = AsciiTty()
    ui = Ui(stream, env={}, redactor=Redactor(), is_tty=False)
    with ui.step("Größe ✓"):
        ui.warn("naïve ✗")
    assert "warning: na?ve ?" in stream.getvalue()


def test_unicode_tty_keeps_unicode_glyphs() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert Ui(stream, env={}, redactor=Redactor(), is_tty=True).glyphs == UNICODE


# --- what is written: redacted, no terminal control from tools ------------------------------


@pytest.mark.parametrize("fancy", [pytest.param(True, id="tty"), pytest.param(False, id="plain")])
def test_secrets_never_reach_the_screen(fancy: bool) -> None:
    ui = fancy_ui(secrets=(SECRET,)) if fancy else plain_ui(secrets=(SECRET,))
    with pytest.raises(RuntimeError), ui.step(f"Logging in with {SECRET}"):
        ui.info(f"password {SECRET}")
        ui.ok(f"ok {SECRET}")
        ui.warn(f"proxy http://u:{SECRET}@proxy:3128")
        ui.error(f"rejected {SECRET}")
        raise RuntimeError
    out = text(ui)
    assert SECRET not in out
    assert out.count(MASK) >= 6


def test_tool_output_cannot_drive_the_terminal() -> None:
    ui = plain_ui()
    ui.error("helm: \x1b[2J\x1b]0;title\x07boom\rover\x00")
    out = text(ui)
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out and "\x00" not in out
    # Shown escaped, not dropped: what the tool sent stays readable.
    assert "helm: \\x1b[2J\\x1b]0;title\\x07boom\\rover\\x00" in out


def test_broken_stream_does_not_fail_the_step() -> None:
    stream = FakeTty()
    ui = fancy_ui(stream)
    stream.close()
    with ui.step("Installing"):
        ui.info("still fine")
    assert not spinner_threads()


# --- the log file ----------------------------------------------------------------------------


@pytest.fixture
def installer_log() -> Iterator[logging.Logger]:
    logger = logging.getLogger("installer")
    saved = (logger.level, logger.handlers[:], logger.propagate)
    logger.handlers[:] = []
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger
    for handler in logger.handlers:
        handler.close()
    logger.setLevel(saved[0])
    logger.handlers[:] = saved[1]
    logger.propagate = saved[2]


def attach(logger: logging.Logger, path: Path, secrets: tuple[str, ...] = ()) -> logging.Handler:
    handler = open_log(str(path), Redactor(secrets))
    logger.addHandler(handler)
    return handler


def detach(logger: logging.Logger, handler: logging.Handler) -> None:
    logger.removeHandler(handler)
    handler.close()


TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d"


def test_log_records_commands_timestamped_and_redacted(
    tmp_path: Path, installer_log: logging.Logger
) -> None:
    path = tmp_path / "data" / "install.log"
    handler = attach(installer_log, path, (SECRET,))
    assert handler.level == logging.DEBUG
    proc_log = logging.getLogger("installer.edges.proc")
    proc_log.debug("run: %s", ["helm", "upgrade", "--set", f"password={SECRET}"])
    proc_log.debug("exit %d: %s", 1, f"Error: bad password {SECRET}")
    detach(installer_log, handler)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert re.fullmatch(rf"{TIMESTAMP} DEBUG +installer\.edges\.proc: run: .*helm.*", lines[0])
    assert re.fullmatch(rf"{TIMESTAMP} DEBUG +installer\.edges\.proc: exit 1: Error: .*", lines[1])
    assert SECRET not in path.read_text(encoding="utf-8")
    assert MASK in lines[0] and MASK in lines[1]


def test_log_traceback_is_redacted(tmp_path: Path, installer_log: logging.Logger) -> None:
    path = tmp_path / "install.log"
    handler = attach(installer_log, path, (SECRET,))
    try:
        raise ValueError(f"token {SECRET}")
    except ValueError:
        installer_log.debug("internal error", exc_info=True)
    detach(installer_log, handler)
    content = path.read_text(encoding="utf-8")
    assert "ValueError: token " + MASK in content
    assert SECRET not in content


def test_ui_steps_and_messages_reach_the_log(tmp_path: Path, installer_log: logging.Logger) -> None:
    path = tmp_path / "install.log"
    handler = attach(installer_log, path, (SECRET,))
    ui = plain_ui(secrets=(SECRET,))
    with pytest.raises(RuntimeError), ui.step("Installing"):
        ui.warn(f"slow {SECRET}")
        raise RuntimeError
    detach(installer_log, handler)
    content = path.read_text(encoding="utf-8")
    assert "installer.present.ui: step: Installing" in content
    assert f"installer.present.ui: warning: slow {MASK}" in content
    assert re.search(r"installer\.present\.ui: step failed: Installing \(\d+\.\ds\)", content)
    assert SECRET not in content


def test_log_is_appended_across_runs(tmp_path: Path, installer_log: logging.Logger) -> None:
    path = tmp_path / "install.log"
    for run in ("first", "second"):
        handler = attach(installer_log, path)
        installer_log.info("%s run", run)
        detach(installer_log, handler)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [line.split(": ", 1)[1] for line in lines] == ["first run", "second run"]


@posix_only
def test_log_file_and_new_directory_are_owner_only(
    tmp_path: Path, installer_log: logging.Logger
) -> None:
    old_umask = os.umask(0o022)
    try:
        path = tmp_path / "fresh" / "install.log"
        detach(installer_log, attach(installer_log, path))
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@posix_only
def test_existing_readable_log_is_narrowed(tmp_path: Path, installer_log: logging.Logger) -> None:
    path = tmp_path / "install.log"
    path.write_text("old line\n", encoding="utf-8")
    path.chmod(0o644)
    detach(installer_log, attach(installer_log, path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text(encoding="utf-8") == "old line\n"


@posix_only
def test_existing_data_directory_mode_is_left_alone(
    tmp_path: Path, installer_log: logging.Logger
) -> None:
    tmp_path.chmod(0o755)
    detach(installer_log, attach(installer_log, tmp_path / "install.log"))
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755


def test_unwritable_log_location_is_an_installer_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(InstallerError) as caught:
        open_log(str(blocker / "install.log"), Redactor())
    assert str(blocker / "install.log") in caught.value.message
    assert "HOST_DATA_DIR" in caught.value.remedy


# --- a real terminal and a real pipe -----------------------------------------------------------

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from installer.decide.redact import Redactor
    from installer.present.ui import Ui
    ui = Ui(sys.stdout, env={}, redactor=Redactor())
    print("fancy" if ui.fancy else "plain", flush=True)
    with ui.step("Installing the client"):
        time.sleep(0.5)
    """
)


def test_pipe_is_plain() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "plain"
    assert re.fullmatch(rf"{STAMP} Installing the client: done {TOOK}", lines[-1])


@posix_only
def test_real_terminal_shows_the_spinner() -> None:
    from tests.fakes.terminal import Pty

    child = Pty.start([sys.executable, "-c", SCRIPT], cwd=os.getcwd())  # stdout: the pty
    try:
        assert child.wait() == 0, child.screen()
    finally:
        child.close()
    out = child.screen().replace("\r\n", "\n")
    assert out.startswith("fancy\n")
    assert any(f"{frame} Installing the client (0s)" in out for frame in UNICODE.frames)
    assert re.fullmatch(rf"✓ Installing the client {TOOK}", screen(out)[-1])
