"""Credentials: the environment, the previous values file, or the terminal; the backend's
verdict decides whether to go on, ask again or stop. Prompts are driven by a scripted
terminal here and through a real pseudo-terminal in a child process below."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from installer.commands import credentials
from installer.commands.credentials import (
    MAX_TRIES,
    Credentials,
    obtain,
    previous_credentials,
)
from installer.decide.errors import BadInput, InstallerError
from installer.decide.settings import credentials_given
from installer.edges.backend import Check, Verdict
from tests.fakes.backend_server import BackendServer
from tests.fakes.cluster import REPO
from tests.fakes.terminal import Pty

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
BOTH = "set TRACEBLOC_CLIENT_ID and TRACEBLOC_CLIENT_PASSWORD"
ENV = {"TRACEBLOC_CLIENT_ID": "client-env", "TRACEBLOC_CLIENT_PASSWORD": "pw-from-env"}


class ScriptedTerminal:
    """Answers prompts from a script: a string is typed, an exception is raised; the end
    of the script is end of input."""

    def __init__(self, *answers: str | BaseException) -> None:
        self.answers = list(answers)
        self.prompts: list[tuple[str, str]] = []  # (ask|secret, prompt)
        self.said: list[str] = []

    def ask(self, prompt: str) -> str:
        return self._next("ask", prompt)

    def secret(self, prompt: str) -> str:
        return self._next("secret", prompt)

    def say(self, text: str) -> None:
        self.said.append(text)

    def _next(self, kind: str, prompt: str) -> str:
        self.prompts.append((kind, prompt))
        if not self.answers:
            raise EOFError
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


class UnusableTerminal(ScriptedTerminal):
    def _next(self, kind: str, prompt: str) -> str:
        raise AssertionError(f"prompted although it must not: {prompt!r}")


class Backend:
    """A scripted credential check: verdicts in order, then VALID; records each call."""

    def __init__(self, *verdicts: Verdict | Check) -> None:
        self.script = [v if isinstance(v, Check) else Check(v) for v in verdicts]
        self.calls: list[tuple[str, str]] = []

    def __call__(self, client_id: str, password: str) -> Check:
        self.calls.append((client_id, password))
        return self.script.pop(0) if self.script else Check(Verdict.VALID)


def run(
    env: dict[str, str] | None = None,
    *,
    terminal: ScriptedTerminal | None = None,
    backend: Backend | None = None,
    previous: tuple[str | None, str | None] = (None, None),
    interactive: bool = True,
    said: list[str] | None = None,
) -> Credentials:
    return obtain(
        credentials_given(env or {}),
        previous=previous,
        interactive=interactive,
        terminal=terminal,
        check=backend or Backend(),
        say=(said if said is not None else []).append,
    )


# --- from the environment ------------------------------------------------------------------


def test_environment_credentials_are_checked_once_and_used() -> None:
    backend = Backend()
    creds = run(ENV, terminal=UnusableTerminal(), backend=backend)
    assert creds == Credentials("client-env", "pw-from-env", "environment")
    assert backend.calls == [("client-env", "pw-from-env")]


def test_environment_credentials_are_cleaned_of_pasted_markers() -> None:
    env = {
        "TRACEBLOC_CLIENT_ID": f"{PASTE_START}client-env{PASTE_END}",
        "TRACEBLOC_CLIENT_PASSWORD": f"{PASTE_START} pw with spaces \x07{PASTE_END}",
    }
    backend = Backend()
    creds = run(env, backend=backend)
    assert (creds.client_id, creds.password) == ("client-env", " pw with spaces ")
    assert backend.calls == [("client-env", " pw with spaces ")]


def test_environment_unverified_warns_and_continues() -> None:
    said: list[str] = []
    backend = Backend(
        Check(Verdict.UNVERIFIED, "could not reach https://api.tracebloc.io/: connection refused")
    )
    creds = run(ENV, backend=backend, said=said)
    assert creds.origin == "environment"
    (warning,) = said
    assert "could not verify" in warning and "continuing" in warning
    assert "connection refused" in warning
    assert "pw-from-env" not in warning


def test_environment_rejected_is_bad_input_naming_both_variables() -> None:
    backend = Backend(Verdict.REJECTED)
    with pytest.raises(BadInput) as caught:
        run(ENV, terminal=UnusableTerminal(), backend=backend)
    assert caught.value.exit_code == 2
    assert "TRACEBLOC_CLIENT_ID" in caught.value.message
    assert "TRACEBLOC_CLIENT_PASSWORD" in caught.value.message
    assert "pw-from-env" not in f"{caught.value.message} {caught.value.remedy}"
    assert len(backend.calls) == 1


def test_environment_inactive_account_stops_with_a_remedy() -> None:
    with pytest.raises(InstallerError) as caught:
        run(ENV, backend=Backend(Verdict.INACTIVE))
    assert type(caught.value) is InstallerError and caught.value.exit_code == 1
    assert "not active" in caught.value.message
    assert "support" in caught.value.remedy


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        pytest.param(
            {"TRACEBLOC_CLIENT_ID": "client-env"}, "TRACEBLOC_CLIENT_PASSWORD", id="only-the-id"
        ),
        pytest.param(
            {"TRACEBLOC_CLIENT_PASSWORD": "pw-from-env"},
            "TRACEBLOC_CLIENT_ID",
            id="only-the-password",
        ),
        pytest.param(
            {"TRACEBLOC_CLIENT_ID": "client-env", "TRACEBLOC_CLIENT_PASSWORD": ""},
            "TRACEBLOC_CLIENT_PASSWORD",
            id="password-set-but-empty",
        ),
    ],
)
def test_one_variable_alone_is_bad_input_naming_the_other(
    env: dict[str, str], missing: str
) -> None:
    backend = Backend()
    with pytest.raises(BadInput) as caught:
        run(
            env,
            terminal=ScriptedTerminal("typed", "typed"),
            backend=backend,
            previous=("saved", "saved-pw"),
        )
    assert f"{missing} is not" in caught.value.message
    assert backend.calls == []


def test_a_variable_of_control_characters_only_is_bad_input() -> None:
    env = {**ENV, "TRACEBLOC_CLIENT_PASSWORD": f"{PASTE_START}{PASTE_END}"}
    with pytest.raises(BadInput, match="TRACEBLOC_CLIENT_PASSWORD"):
        run(env)


def test_empty_variables_count_as_unset() -> None:
    env = {"TRACEBLOC_CLIENT_ID": "", "TRACEBLOC_CLIENT_PASSWORD": ""}
    creds = run(env, terminal=ScriptedTerminal("typed-id", "typed-pw"))
    assert creds == Credentials("typed-id", "typed-pw", "prompt")


# --- asked on the terminal -----------------------------------------------------------------


def test_prompt_without_a_previous_install() -> None:
    terminal = ScriptedTerminal("client-1", "pw-1")
    backend = Backend()
    assert run(terminal=terminal, backend=backend) == Credentials("client-1", "pw-1", "prompt")
    # The first question says in one line where the pair is found.
    assert terminal.prompts == [
        ("ask", f"{credentials.WHERE}\nClient ID: "),
        ("secret", "Client password: "),
    ]
    assert len(credentials.WHERE) < 80 and "https://ai.tracebloc.io" in credentials.WHERE
    assert backend.calls == [("client-1", "pw-1")]


def test_prompt_offers_the_previous_values_and_enter_keeps_them() -> None:
    terminal = ScriptedTerminal("", "")
    creds = run(terminal=terminal, previous=("client-old", "pw-old"))
    assert creds == Credentials("client-old", "pw-old", "prompt")
    assert terminal.prompts == [
        ("ask", "Client ID [client-old]: "),
        ("secret", "Client password (press Enter to keep the saved one): "),
    ]


def test_the_saved_password_is_not_offered_for_another_id() -> None:
    terminal = ScriptedTerminal("client-new", "", "pw-new")
    creds = run(terminal=terminal, previous=("client-old", "pw-old"))
    assert creds == Credentials("client-new", "pw-new", "prompt")
    assert terminal.prompts[1:] == [("secret", "Client password: ")] * 2


def test_empty_answers_without_a_default_ask_again() -> None:
    terminal = ScriptedTerminal("", "   ", "client-1", "", "pw-1")
    assert run(terminal=terminal) == Credentials("client-1", "pw-1", "prompt")
    assert [kind for kind, _ in terminal.prompts] == ["ask"] * 3 + ["secret"] * 2


def test_pasted_answers_are_cleaned_and_the_password_kept_as_typed() -> None:
    terminal = ScriptedTerminal(
        f"{PASTE_START}client-1{PASTE_END} ", f"{PASTE_START} pw 1 {PASTE_END}"
    )
    backend = Backend()
    assert run(terminal=terminal, backend=backend) == Credentials("client-1", " pw 1 ", "prompt")
    assert backend.calls == [("client-1", " pw 1 ")]


def test_rejected_asks_again_with_the_typed_id_as_default() -> None:
    terminal = ScriptedTerminal("client-1", "pw-wrong", "", "pw-right")
    backend = Backend(Verdict.REJECTED, Verdict.VALID)
    assert run(terminal=terminal, backend=backend) == Credentials("client-1", "pw-right", "prompt")
    assert backend.calls == [("client-1", "pw-wrong"), ("client-1", "pw-right")]
    assert terminal.prompts[2] == ("ask", "Client ID [client-1]: ")
    (message,) = terminal.said
    assert f"1 of {MAX_TRIES}" in message and "pw-wrong" not in message


def test_a_rejected_saved_password_is_no_longer_offered() -> None:
    terminal = ScriptedTerminal("", "", "", "", "pw-new")
    backend = Backend(Verdict.REJECTED)
    creds = run(terminal=terminal, backend=backend, previous=("client-old", "pw-old"))
    assert creds == Credentials("client-old", "pw-new", "prompt")
    assert backend.calls == [("client-old", "pw-old"), ("client-old", "pw-new")]
    assert terminal.prompts[3] == ("secret", "Client password: ")


def test_five_rejections_stop_with_bad_input() -> None:
    answers = [a for i in range(MAX_TRIES + 1) for a in (f"client-{i}", f"pw-{i}")]
    terminal = ScriptedTerminal(*answers)
    backend = Backend(*[Verdict.REJECTED] * (MAX_TRIES + 1))
    with pytest.raises(BadInput) as caught:
        run(terminal=terminal, backend=backend)
    assert len(backend.calls) == MAX_TRIES == 5
    assert len(terminal.said) == MAX_TRIES - 1
    assert "TRACEBLOC_CLIENT_ID" in caught.value.remedy
    assert not any("pw-" in text for text in (caught.value.message, caught.value.remedy))


def test_inactive_at_the_prompt_stops_at_once() -> None:
    backend = Backend(Verdict.INACTIVE)
    with pytest.raises(InstallerError) as caught:
        run(terminal=ScriptedTerminal("client-1", "pw-1", "client-1", "pw-1"), backend=backend)
    assert type(caught.value) is InstallerError and "not active" in caught.value.message
    assert len(backend.calls) == 1


def test_unverified_at_the_prompt_warns_and_continues() -> None:
    said: list[str] = []
    backend = Backend(Check(Verdict.UNVERIFIED, "HTTP 503"))
    creds = run(terminal=ScriptedTerminal("client-1", "pw-1"), backend=backend, said=said)
    assert creds == Credentials("client-1", "pw-1", "prompt")
    assert len(said) == 1 and "could not verify" in said[0] and "HTTP 503" in said[0]


@pytest.mark.parametrize(
    "answers",
    [
        pytest.param((), id="eof-at-the-id"),
        pytest.param(("client-1",), id="eof-at-the-password"),
        pytest.param(("", ""), id="eof-after-empty-answers"),
        pytest.param((OSError(5, "Input/output error"),), id="terminal-gone"),
    ],
)
def test_end_of_input_at_a_prompt_is_bad_input(answers: tuple[str | BaseException, ...]) -> None:
    backend = Backend()
    with pytest.raises(BadInput) as caught:
        run(terminal=ScriptedTerminal(*answers), backend=backend)
    assert "TRACEBLOC_CLIENT_ID" in caught.value.remedy
    assert backend.calls == []


def test_ctrl_c_at_a_prompt_propagates() -> None:
    with pytest.raises(KeyboardInterrupt):
        run(terminal=ScriptedTerminal("client-1", KeyboardInterrupt()))


# --- no prompt: `--yes`, or no terminal ----------------------------------------------------


@pytest.mark.parametrize(
    ("interactive", "terminal"),
    [
        pytest.param(False, UnusableTerminal(), id="yes-with-a-terminal"),
        pytest.param(True, None, id="interactive-without-a-terminal"),
        pytest.param(False, None, id="yes-without-a-terminal"),
    ],
)
def test_without_prompts_the_previous_values_file_is_used(
    interactive: bool, terminal: ScriptedTerminal | None
) -> None:
    backend = Backend()
    creds = run(
        terminal=terminal,
        interactive=interactive,
        backend=backend,
        previous=("client-old", "pw-old"),
    )
    assert creds == Credentials("client-old", "pw-old", "values file")
    assert backend.calls == [("client-old", "pw-old")]


@pytest.mark.parametrize(
    "previous",
    [
        pytest.param((None, None), id="no-previous-install"),
        pytest.param(("client-old", None), id="previous-id-only"),
        pytest.param((None, "pw-old"), id="previous-password-only"),
    ],
)
@pytest.mark.parametrize(
    ("interactive", "terminal"),
    [pytest.param(False, UnusableTerminal(), id="yes"), pytest.param(True, None, id="no-terminal")],
)
def test_without_prompts_and_credentials_it_is_bad_input(
    previous: tuple[str | None, str | None], interactive: bool, terminal: ScriptedTerminal | None
) -> None:
    backend = Backend()
    with pytest.raises(BadInput) as caught:
        run(terminal=terminal, interactive=interactive, backend=backend, previous=previous)
    assert caught.value.message == f"no credentials: {BOTH}"
    assert backend.calls == []


@pytest.mark.parametrize(
    ("verdict", "error", "words"),
    [
        pytest.param(Verdict.REJECTED, BadInput, "previous values file", id="rejected"),
        pytest.param(Verdict.INACTIVE, InstallerError, "not active", id="inactive"),
    ],
)
def test_previous_values_file_credentials_follow_the_environment_rules(
    verdict: Verdict, error: type[InstallerError], words: str
) -> None:
    backend = Backend(verdict)
    with pytest.raises(error) as caught:
        run(interactive=False, backend=backend, previous=("client-old", "pw-old"))
    assert type(caught.value) is error
    assert words in caught.value.message
    assert len(backend.calls) == 1


def test_previous_values_file_unverified_warns_and_continues() -> None:
    said: list[str] = []
    creds = run(
        interactive=False,
        backend=Backend(Verdict.UNVERIFIED),
        said=said,
        previous=("client-old", "pw-old"),
    )
    assert creds.origin == "values file" and len(said) == 1


def test_the_environment_wins_over_the_previous_values_file() -> None:
    creds = run(ENV, interactive=False, previous=("client-old", "pw-old"))
    assert creds == Credentials("client-env", "pw-from-env", "environment")


def test_credentials_never_show_the_password() -> None:
    assert "pw-secret" not in repr(Credentials("client-1", "pw-secret", "prompt"))


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(None, (None, None), id="no-previous-install"),
        pytest.param({}, (None, None), id="empty-values"),
        pytest.param(
            {"clientId": "client-1", "clientPassword": "pw-1"}, ("client-1", "pw-1"), id="both"
        ),
        pytest.param({"clientId": "client-1"}, ("client-1", None), id="id-only"),
        pytest.param({"clientId": 12345, "clientPassword": True}, (None, None), id="not-strings"),
        pytest.param({"clientId": "", "clientPassword": ""}, (None, None), id="empty-strings"),
        pytest.param({"env": {"clientId": "x"}}, (None, None), id="nested-is-not-top-level"),
    ],
)
def test_previous_credentials(
    values: dict[str, object] | None, expected: tuple[str | None, str | None]
) -> None:
    assert previous_credentials(values) == expected


# --- a real terminal, in a child process ---------------------------------------------------

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

CHILD_PROMPTS = """
import json, sys
from installer.commands.credentials import open_terminal
terminal = open_terminal("linux" if sys.platform != "darwin" else "darwin")
client_id = terminal.ask("Client ID: ")
password = terminal.secret("Client password: ")
terminal.say("done.")
json.dump({"id": client_id, "password": password}, open(sys.argv[1], "w"))
"""

CHILD_OBTAIN = """
import json, sys
from installer.edges.backend import verify
from installer.commands.credentials import obtain, open_terminal
from installer.decide.errors import InstallerError
from installer.decide.settings import CredentialsGiven
url, out = sys.argv[1], sys.argv[2]
result = {}
try:
    creds = obtain(CredentialsGiven(), previous=(None, None), interactive=True, terminal=open_terminal("linux"),
                   check=lambda i, p: verify(url, i, p, env={}, timeout=10), say=print)
    result = {"id": creds.client_id, "password": creds.password, "origin": creds.origin}
except InstallerError as exc:
    result = {"error": type(exc).__name__, "message": exc.message}
except KeyboardInterrupt:
    import termios
    with open("/dev/tty", "rb") as tty:
        result = {"interrupted": True, "echo": bool(termios.tcgetattr(tty)[3] & termios.ECHO)}
json.dump(result, open(out, "w"))
"""


@pytest.fixture
def pty_child(tmp_path: Path) -> Iterator[Callable[..., Pty]]:
    """A Python child whose only way to the user is its controlling terminal (stdin at EOF,
    as under `curl … | sh`); its stderr goes to child-stderr.txt."""
    started: list[Pty] = []

    def start(code: str, *args: str) -> Pty:
        child = Pty.start(
            [sys.executable, "-c", code, *args], cwd=REPO, stdio_log=tmp_path / "child-stderr.txt"
        )
        started.append(child)
        return child

    yield start
    for child in started:
        child.close()


@posix_only
def test_a_real_terminal_reads_the_answers_and_hides_the_password(
    pty_child: Callable[..., Pty], tmp_path: Path
) -> None:
    out = tmp_path / "answers.json"
    child = pty_child(CHILD_PROMPTS, str(out))
    child.expect("Client ID: ")
    child.type("client-1\n")
    child.expect("Client password: ")
    child.type("Hunter2-Secret\n")
    child.expect("done.")
    assert child.wait() == 0, (tmp_path / "child-stderr.txt").read_text()
    assert json.loads(out.read_text()) == {"id": "client-1", "password": "Hunter2-Secret"}
    assert b"client-1" in child.seen  # the id is echoed as typed
    assert b"Hunter2-Secret" not in child.seen  # the password is not


@posix_only
def test_a_real_terminal_rejected_then_accepted(
    pty_child: Callable[..., Pty], tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    with BackendServer(400, 200) as backend:
        child = pty_child(CHILD_OBTAIN, backend.url, str(out))
        child.expect("Client ID: ")
        child.type("client-1\n")
        child.expect("Client password: ")
        child.type("Pw-Wrong-1\n")
        child.expect("Client ID [client-1]: ")
        child.type("\n")
        child.expect("Client password: ")
        child.type("Pw-Right-2\n")
        assert child.wait() == 0, (tmp_path / "child-stderr.txt").read_text()
        sent = [(r.fields["username"], r.fields["password"]) for r in backend.requests]
    assert sent == [("client-1", "Pw-Wrong-1"), ("client-1", "Pw-Right-2")]
    assert json.loads(out.read_text()) == {
        "id": "client-1",
        "password": "Pw-Right-2",
        "origin": "prompt",
    }
    assert b"try 1 of 5" in child.seen
    assert b"Pw-Wrong-1" not in child.seen and b"Pw-Right-2" not in child.seen


@posix_only
def test_ctrl_d_at_a_real_prompt_is_bad_input(
    pty_child: Callable[..., Pty], tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    child = pty_child(CHILD_OBTAIN, "http://127.0.0.1:9/", str(out))
    child.expect("Client ID: ")
    child.type("\x04")
    assert child.wait() == 0, (tmp_path / "child-stderr.txt").read_text()
    assert json.loads(out.read_text())["error"] == "BadInput"


@posix_only
def test_ctrl_c_at_the_password_prompt_restores_echo(
    pty_child: Callable[..., Pty], tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    child = pty_child(CHILD_OBTAIN, "http://127.0.0.1:9/", str(out))
    child.expect("Client ID: ")
    child.type("client-1\n")
    child.expect("Client password: ")
    child.type("half-typed\x03")
    assert child.wait() == 0, (tmp_path / "child-stderr.txt").read_text()
    assert json.loads(out.read_text()) == {"interrupted": True, "echo": True}
    assert b"half-typed" not in child.seen


CHILD_NO_TERMINAL = """
import json, sys
from installer.commands.credentials import obtain, open_terminal
from installer.decide.errors import BadInput
from installer.decide.settings import CredentialsGiven
terminal = open_terminal("linux")
try:
    obtain(CredentialsGiven(), previous=(None, None), interactive=True, terminal=terminal,
           check=lambda i, p: 1 / 0, say=print)
    print(json.dumps({"terminal": terminal is not None}))
except BadInput as exc:
    print(json.dumps({"terminal": terminal is not None, "message": exc.message}))
"""


@posix_only
def test_without_a_controlling_terminal_it_fails_at_once_naming_the_variables() -> None:
    # A new session has no controlling terminal (as under CI or a service manager), and
    # stdin is a pipe that stays open and silent: reading it would hang to the timeout.
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_NO_TERMINAL],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    try:
        code = child.wait(timeout=60)  # not communicate(): it would close stdin
    finally:
        child.kill()
        child.stdin.close()
    out, err = child.stdout.read(), child.stderr.read()
    assert code == 0, err.decode()
    assert json.loads(out) == {"terminal": False, "message": f"no credentials: {BOTH}"}
    assert time.monotonic() - started < 30  # generous: it is one interpreter start


# ---------------------------------------------------------------------------------------
# The Windows console's hidden prompt (msvcrt.getwch turns console processing off, so
# Ctrl-C arrives as the character \x03): it interrupts at once, reading nothing after it.
# Run everywhere with a stand-in msvcrt that replays keystrokes.
# ---------------------------------------------------------------------------------------


class _Keys:
    def __init__(self, keys: str) -> None:
        self.left = list(keys)

    def getwch(self) -> str:
        if not self.left:
            raise AssertionError("the prompt read past the end of the keystrokes")
        return self.left.pop(0)


@pytest.mark.parametrize(
    ("keys", "outcome"),
    [
        pytest.param("s3cret\r", "s3cret", id="enter-ends-the-password"),
        pytest.param("ab\bc\r", "ac", id="backspace-deletes"),
        pytest.param("\xe0Kpw\r", "pw", id="arrow-key-dropped"),
        pytest.param("half-typed\x03more\r", KeyboardInterrupt, id="ctrl-c-interrupts-at-once"),
        pytest.param("\x03", KeyboardInterrupt, id="ctrl-c-before-any-key"),
        pytest.param("\x1a", EOFError, id="ctrl-z-first-is-end-of-input"),
    ],
)
def test_windows_console_hidden_prompt(
    monkeypatch: pytest.MonkeyPatch, keys: str, outcome: str | type[BaseException]
) -> None:
    import io

    from installer.commands import credentials

    fake = _Keys(keys)
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.setattr(sys, "platform", "win32")
    conout = io.StringIO()
    console = credentials._Console(io.StringIO(), conout)  # type: ignore[arg-type]
    if isinstance(outcome, str):
        assert console.secret("Client password: ") == outcome
        assert fake.left == []
    else:
        with pytest.raises(outcome):
            console.secret("Client password: ")
        if outcome is KeyboardInterrupt:
            assert "".join(fake.left) == keys[keys.index("\x03") + 1 :], "read past Ctrl-C"
    # Nothing typed is echoed; the prompt's line is ended whatever happened.
    assert conout.getvalue() == "Client password: \n"
