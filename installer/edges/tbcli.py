"""Running the tracebloc CLI for sign-in: `login` on the person's terminal, `client list
--plain`, `client create --credential-file`, and reading (then removing) that file.

The engine never speaks the device-flow protocol itself: the CLI is the one implementation
of it in the ecosystem. Every call goes through proc.run (argv list, deadline, tree kill).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from installer.decide import signin
from installer.decide.errors import InstallerError
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import call, proc

log = logging.getLogger(__name__)

HELP_TIMEOUT_S = 20.0
LOGIN_TIMEOUT_S = 15 * 60.0  # the device code lives ten minutes; the CLI stops by itself then
LIST_TIMEOUT_S = 60.0
CREATE_TIMEOUT_S = 180.0
CREDENTIAL_FILE = "client-credential.env"
SIGNIN_DIR = ".tracebloc-signin"  # the engine's own: `client create` writes only here
ZONE_TABLES = ("/usr/share/zoneinfo/zone.tab", "/usr/share/zoneinfo/zone1970.tab")


def supports_signin(tool: Tool, env: Mapping[str, str]) -> bool:
    """Does this CLI have `login` and `client create`? Asked with `--help`
    (no side effect; an unknown command exits non-zero)."""
    for args in (("login", "--help"), ("client", "create", "--help")):
        result = call.answer(tool, args, timeout=HELP_TIMEOUT_S, env=env)
        if isinstance(result, call.NoAnswer):
            log.debug("%s %s: %s", tool.path, " ".join(args), result.reason)
            return False
        if result.rc != 0:
            return False
    return True


def login(tool: Tool, env: Mapping[str, str], terminal: tuple[int, int] | None) -> int:
    """One `tracebloc login` on the person's terminal; its exit code. TRACEBLOC_INSTALLER=1
    is in this child's environment only: the CLI then leaves the recovery advice to us."""
    child = {**env, "TRACEBLOC_INSTALLER": "1"}
    if terminal is None:  # nobody to show a code to: the CLI fails at once, it cannot hang
        result = proc.run(tool, ["login"], timeout=LOGIN_TIMEOUT_S, env=child)
        log.debug("tracebloc login (no terminal): %s", result.stderr.strip()[-500:])
        return result.rc
    result = proc.run(tool, ["login"], timeout=LOGIN_TIMEOUT_S, env=child, terminal=terminal)
    log.info("tracebloc login: exit %d (its output went to the terminal only)", result.rc)
    return result.rc


@dataclass(frozen=True)
class Listed:
    readable: bool
    text: str = ""


def list_clients(tool: Tool, env: Mapping[str, str], redactor: Redactor) -> Listed:
    result = call.answer(
        tool, ["client", "list", "--plain"], timeout=LIST_TIMEOUT_S, env=env, redactor=redactor
    )
    if isinstance(result, call.NoAnswer):
        log.info("tracebloc client list --plain: %s", result.reason)
        return Listed(False)
    log.info(
        "tracebloc client list --plain: exit %d\n%s",
        result.rc,
        redactor(result.stdout + result.stderr).strip(),
    )
    return Listed(result.rc == 0, result.stdout)


@dataclass(frozen=True)
class Created:
    rc: int
    output: str  # stdout and stderr: a failed create minted nothing, so it holds no secret


def create_argv(name: str, path: str, location: str | None, kube: Sequence[str] = ()) -> list[str]:
    argv = ["client", "create", "--yes", "--name", name, "--credential-file", path]
    if location:
        argv += ["--location", location]
    return argv + list(kube)


def create(tool: Tool, argv: Sequence[str], env: Mapping[str, str], redactor: Redactor) -> Created:
    result = proc.run(tool, argv, timeout=CREATE_TIMEOUT_S, env=env, redactor=redactor)
    return Created(result.rc, (result.stdout + "\n" + result.stderr).strip())


@contextlib.contextmanager
def credential_file(directory: str) -> Iterator[str]:
    """Where `client create` writes the credential: `<data dir>/.tracebloc-signin`, owner-only,
    emptied before and removed after; nothing else of the data directory is touched."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    private = os.path.join(directory, SIGNIN_DIR)
    _remove(os.path.join(directory, CREDENTIAL_FILE))  # where an older engine had it
    _remove_private(private)  # a killed run's is never read as this run's
    try:
        os.mkdir(private, 0o700)
    except OSError as exc:
        raise InstallerError(
            f"cannot make {private} for the sign-in: {exc.strerror or exc}",
            "remove it, then re-run",
        ) from None
    try:
        yield os.path.join(private, CREDENTIAL_FILE)
    finally:
        _remove_private(private)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _remove_private(private: str) -> None:
    """The sign-in directory and the files in it, never following a link (a link in its
    place is removed as itself)."""
    try:
        found = os.lstat(private)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(found.st_mode) or os.path.islink(private):
        _remove(private)
        return
    if os.name == "nt" or os.unlink not in os.supports_dir_fd:
        with os.scandir(private) as listing:
            for entry in listing:
                if not entry.is_dir(follow_symlinks=False):
                    _remove(entry.path)
    else:  # through the directory opened without following a link: one swapped in since
        _empty_by_fd(private)  # the look is never listed or emptied
    with contextlib.suppress(OSError):  # not empty (the CLI made a directory): kept
        os.rmdir(private)


def _empty_by_fd(private: str) -> None:
    """Remove the files in `private`, listed and unlinked through its descriptor."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(private, flags)
    except OSError:
        return  # a link or gone now: nothing of it is removed
    try:
        with os.scandir(fd) as listing:
            for entry in listing:
                if not entry.is_dir(follow_symlinks=False):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.name, dir_fd=fd)
    finally:
        os.close(fd)


def read_credential(path: str) -> signin.Minted:
    """The credential, read as data and removed at once. The file must be a regular file
    (never a link followed), owner-only on POSIX, and small."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InstallerError(
            "tracebloc client create succeeded but wrote no credential file", "re-run to try again"
        ) from None
    except OSError as exc:
        _remove(path)
        raise InstallerError(
            f"the credential file cannot be read: {exc.strerror or exc}", "re-run to try again"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise signin.CredentialFileError("the credential file is not a regular file")
        if os.name != "nt" and info.st_mode & 0o077:
            raise signin.CredentialFileError(
                "the credential file is readable by others",
                "upgrade the tracebloc CLI, then re-run",
            )
        data = os.read(fd, signin.MAX_CREDENTIAL_BYTES + 1)
    finally:
        os.close(fd)
        _remove(path)
    if len(data) > signin.MAX_CREDENTIAL_BYTES:
        raise signin.CredentialFileError("the credential file is too large to be one")
    return signin.parse_credential(data.decode("utf-8", errors="replace"))


# --- the system time zone ----------------------------------------------------------------


def system_zone(env: Mapping[str, str]) -> str | None:
    """TZ; else where /etc/localtime links; else /etc/timezone's first line."""
    if env.get("TZ", "").strip():
        return env["TZ"].strip().lstrip(":")
    with contextlib.suppress(OSError):
        if os.path.islink("/etc/localtime"):
            return signin.zone_from_link(os.readlink("/etc/localtime")) or None
    with contextlib.suppress(OSError), open("/etc/timezone", encoding="utf-8") as handle:
        return handle.readline(256).strip() or None
    return None


def zone_tables(paths: Sequence[str] = ZONE_TABLES) -> list[str]:
    tables = []
    for path in paths:
        with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as f:
            tables.append(f.read(1 << 20))
    return tables
