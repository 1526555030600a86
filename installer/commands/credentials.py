"""The client id and password: from the environment, the previous values file, or asked on
the terminal; checked with the backend before anything is deployed. Prompts use the
controlling terminal, not stdin (`curl … | sh`); with none, nothing is ever read.
"""

from __future__ import annotations

import io
import locale
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from installer.config import clean_credential
from installer.decide.errors import BadInput, InstallerError
from installer.decide.settings import CredentialsGiven
from installer.edges.backend import Check, Verdict

ID_VAR = "TRACEBLOC_CLIENT_ID"
PASSWORD_VAR = "TRACEBLOC_CLIENT_PASSWORD"
MAX_TRIES = 5
ENVIRONMENT, PROMPT, VALUES_FILE = "environment", "prompt", "values file"
SIGN_IN = "sign-in"  # minted by `tracebloc client create` (commands/signin.py)
_SET_BOTH = f"set {ID_VAR} and {PASSWORD_VAR}"


@dataclass(frozen=True)
class Credentials:
    client_id: str
    password: str = field(repr=False)
    origin: str  # ENVIRONMENT, PROMPT, VALUES_FILE or SIGN_IN
    namespace: str | None = None  # SIGN_IN: the namespace (and release) the client was given


class Signed(Protocol):
    """What a sign-in hook returns (commands/signin.SignedIn)."""

    @property
    def client_id(self) -> str: ...

    @property
    def password(self) -> str: ...

    @property
    def namespace(self) -> str: ...


class Terminal(Protocol):
    """A person at a terminal. `ask` and `secret` return the line typed (without its line
    end) and raise EOFError at end of input; `secret` does not echo."""

    def ask(self, prompt: str) -> str: ...

    def secret(self, prompt: str) -> str: ...

    def say(self, text: str) -> None: ...


def previous_credentials(values: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """clientId and clientPassword of a previous values document; None for absent or non-text."""
    if not values:
        return None, None
    found = [values.get(key) for key in ("clientId", "clientPassword")]
    client_id, password = (v if isinstance(v, str) and v else None for v in found)
    return client_id, password


def in_environment(given: CredentialsGiven) -> tuple[bool, bool]:
    """Whether TRACEBLOC_CLIENT_ID and TRACEBLOC_CLIENT_PASSWORD are set (non-empty), the
    pair `obtain` takes first."""
    return bool(given.client_id), bool(given.password)


def obtain(
    from_env: CredentialsGiven,
    *,
    previous: tuple[str | None, str | None],
    interactive: bool,
    terminal: Terminal | None,
    check: Callable[[str, str], Check],
    say: Callable[[str], None],
    sign_in: Callable[[], Signed | None] | None = None,
    keep_previous: bool = False,
) -> Credentials:
    """The credentials to install with, checked once with the backend (up to MAX_TRIES when asked).
    Order: the environment, the terminal (`keep_previous`: the previous values file), the
    previous values file, else BadInput. REJECTED is BadInput unless a person can type again;
    INACTIVE stops; UNVERIFIED warns and goes on."""
    raw_id, raw_password = from_env.client_id, from_env.password  # settings.credentials_given
    if raw_id or raw_password:
        if not (raw_id and raw_password):
            missing, given = (ID_VAR, PASSWORD_VAR) if raw_password else (PASSWORD_VAR, ID_VAR)
            raise BadInput(f"{given} is set but {missing} is not", f"set {missing} too")
        creds = Credentials(clean_credential(raw_id), clean_credential(raw_password), ENVIRONMENT)
        for name, value in ((ID_VAR, creds.client_id), (PASSWORD_VAR, creds.password)):
            if not value:
                raise BadInput(f"{name} holds nothing but control characters")
        return _checked_once(creds, check, say)
    previous_id, previous_password = previous
    if sign_in is not None and not (previous_id and previous_password):
        signed = sign_in()  # None: the CLI cannot be had; the old ways go on
        if signed is not None:
            return _checked_once(
                Credentials(signed.client_id, signed.password, SIGN_IN, signed.namespace),
                check,
                say,
            )
    if (
        interactive
        and terminal is not None
        and not (keep_previous and previous_id and previous_password)
    ):
        return _prompt(terminal, previous_id, previous_password, check, say)
    if previous_id and previous_password:
        return _checked_once(Credentials(previous_id, previous_password, VALUES_FILE), check, say)
    why = "--yes never prompts" if not interactive else "there is no terminal to ask on"
    raise BadInput(f"no credentials: {_SET_BOTH}", f"{why}: {_SET_BOTH} in the environment")


def _checked_once(
    creds: Credentials, check: Callable[[str, str], Check], say: Callable[[str], None]
) -> Credentials:
    result = check(creds.client_id, creds.password)
    if result.verdict is Verdict.REJECTED:
        if creds.origin == ENVIRONMENT:
            raise BadInput(
                f"the backend rejected {ID_VAR} and {PASSWORD_VAR}",
                f"check both values (client id {creds.client_id!r})",
            )
        if creds.origin == SIGN_IN:
            raise InstallerError(
                f"the backend rejected the credential tracebloc client create "
                f"just issued (client id {creds.client_id!r})",
                "re-run to try again; if it happens again, contact tracebloc support",
            )
        raise BadInput(
            "the backend rejected the client id and password saved in the previous values file",
            f"{_SET_BOTH}, or run interactively to enter them",
        )
    _not_rejected(result, creds, say)
    return creds


def _not_rejected(result: Check, creds: Credentials, say: Callable[[str], None]) -> None:
    if result.verdict is Verdict.INACTIVE:
        raise InstallerError(
            f"the tracebloc account of client {creds.client_id!r} is not active",
            "contact tracebloc support to activate it, then re-run",
        )
    if result.verdict is Verdict.UNVERIFIED:
        say(f"could not verify the client id and password ({result.detail}); continuing with them")


# Asked for without a tracebloc CLI to sign in with: where the person finds the pair.
WHERE = "Client ID and password: on your client's page at https://ai.tracebloc.io"


def _prompt(
    terminal: Terminal,
    previous_id: str | None,
    previous_password: str | None,
    check: Callable[[str, str], Check],
    say: Callable[[str], None],
) -> Credentials:
    default_id, saved_password = previous_id, previous_password
    for attempt in range(1, MAX_TRIES + 1):
        shown = f" [{default_id}]" if default_id else ""
        where = WHERE + "\n" if attempt == 1 and not default_id else ""
        client_id = _answer(terminal.ask, f"{where}Client ID{shown}: ", default_id, strip=True)
        # The saved password belongs to the saved id: offered for that id only.
        keep = saved_password if client_id == previous_id else None
        hint = " (press Enter to keep the saved one)" if keep else ""
        password = _answer(terminal.secret, f"Client password{hint}: ", keep)
        creds = Credentials(client_id, password, PROMPT)
        result = check(client_id, password)
        if result.verdict is not Verdict.REJECTED:
            _not_rejected(result, creds, say)
            return creds
        if password == saved_password and client_id == previous_id:
            saved_password = None  # rejected: stop offering it
        default_id = client_id
        if attempt < MAX_TRIES:
            terminal.say(
                f"The client ID or password is not correct (try {attempt} of "
                f"{MAX_TRIES}); please enter them again."
            )
    raise BadInput(
        f"the backend rejected the client id and password {MAX_TRIES} times",
        f"check them in the tracebloc web app and re-run, or {_SET_BOTH}",
    )


def _answer(
    read: Callable[[str], str], prompt: str, default: str | None, *, strip: bool = False
) -> str:
    """The cleaned answer; Enter gives `default`; an empty answer without one asks again."""
    while True:
        try:
            raw = read(prompt)
        except EOFError:
            raise BadInput(
                "no answer at the prompt (end of input)", f"{_SET_BOTH} to install without prompts"
            ) from None
        except OSError as exc:
            raise BadInput(
                f"the terminal could not be read: {exc.strerror or exc}",
                f"{_SET_BOTH} to install without prompts",
            ) from None
        if "\ufffd" in raw:  # what the terminal sent was not text in its own encoding
            raise BadInput(
                "the terminal sent characters that are not valid in its encoding",
                "type them in a UTF-8 terminal, or " + _SET_BOTH,
            )
        answer = clean_credential(raw)
        answer = answer.strip() if strip else answer
        if answer:
            return answer
        if default:
            return default


# --- the controlling terminal --------------------------------------------------------------


def open_terminal(os_: str) -> Terminal | None:
    """The controlling terminal (/dev/tty; the console on Windows), or None without one."""
    if os_ == "windows":
        return _open_console()
    return _open_tty()


class _Tty:
    """/dev/tty: read and written directly, whatever stdin and stdout are."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        encoding = locale.getpreferredencoding(False) or "utf-8"
        self._file = io.TextIOWrapper(
            io.FileIO(fd, "r+"), encoding=encoding, errors="replace", write_through=True
        )

    def ask(self, prompt: str) -> str:
        self._file.write(prompt)
        self._file.flush()
        return _line(self._file.readline())

    def secret(self, prompt: str) -> str:
        if sys.platform == "win32":
            raise OSError("no /dev/tty on Windows")
        import termios

        try:
            saved = termios.tcgetattr(self._fd)
        except termios.error as exc:
            raise OSError(f"cannot hide input on this terminal: {exc}") from None
        hidden = list(saved)
        hidden[3] &= ~termios.ECHO
        # Echo goes off before the prompt shows: nothing typed after it is ever echoed.
        termios.tcsetattr(self._fd, termios.TCSAFLUSH, hidden)
        try:
            self._file.write(prompt)
            self._file.flush()
            return _line(self._file.readline())
        finally:  # Ctrl-C included: the terminal must not be left without echo
            termios.tcsetattr(self._fd, termios.TCSAFLUSH, saved)
            self._file.write("\n")
            self._file.flush()

    def say(self, text: str) -> None:
        self._file.write(text + "\n")
        self._file.flush()

    def descriptors(self) -> tuple[int, int]:
        """Where a child that talks to the person reads and writes (commands/signin.py)."""
        return self._fd, self._fd


def _line(text: str) -> str:
    """A line read from a terminal, without its line end; EOFError for end of input."""
    if not text:
        raise EOFError
    return text.removesuffix("\n").removesuffix("\r")


def _open_tty() -> Terminal | None:
    try:
        # O_NOCTTY: opening must never make this terminal ours. No controlling terminal
        # (a daemon, CI, `setsid`): ENXIO at once.
        fd = os.open("/dev/tty", os.O_RDWR | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    if not os.isatty(fd):
        os.close(fd)
        return None
    return _Tty(fd)


class _Console:
    """The Windows console (CONIN$/CONOUT$), whatever stdin and stdout are redirected to."""

    def __init__(self, conin: io.TextIOWrapper, conout: io.TextIOWrapper) -> None:
        self._in, self._out = conin, conout

    def ask(self, prompt: str) -> str:
        self._out.write(prompt)
        self._out.flush()
        return _line(self._in.readline())

    def secret(self, prompt: str) -> str:
        if sys.platform != "win32":
            raise OSError("the Windows console is only on Windows")
        import msvcrt

        self._out.write(prompt)
        self._out.flush()
        typed: list[str] = []
        try:
            while True:
                char = msvcrt.getwch()  # reads the console itself, without echo
                if char in ("\r", "\n"):
                    return "".join(typed)
                if char == "\x03":
                    raise KeyboardInterrupt
                if char == "\x1a" and not typed:  # Ctrl-Z: end of input
                    raise EOFError
                if char in ("\x00", "\xe0"):  # a function or arrow key: two codes, both dropped
                    msvcrt.getwch()
                elif char == "\b":
                    del typed[-1:]
                else:
                    typed.append(char)
        finally:
            self._out.write("\n")
            self._out.flush()

    def say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def descriptors(self) -> tuple[int, int]:
        return self._in.fileno(), self._out.fileno()


def _open_console() -> Terminal | None:
    if sys.platform != "win32":
        return None
    try:
        # The console speaks UTF-16 and Python's console I/O turns it into UTF-8 (PEP 528).
        conin = open("CONIN$", encoding="utf-8", errors="replace")
    except OSError:  # no console attached: a service, or started without one
        return None
    try:
        conout = open("CONOUT$", "w", encoding="utf-8", errors="replace")
    except OSError:
        conin.close()
        return None
    return _Console(conin, conout)
