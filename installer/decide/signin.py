"""Browser sign-in through the tracebloc CLI: the pure decisions (RFC-CLI-0001).

Used when no credentials are given or kept: `tracebloc login` (a device code), then
`tracebloc client create --credential-file F`, whose file is read here as data, never run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from installer.decide.errors import InstallerError
from installer.decide.settings import CredentialsGiven

NAME_VAR = "TRACEBLOC_CLIENT_NAME"
LOCATION_VAR = "TRACEBLOC_CLIENT_LOCATION"
CLI_VAR = "TRACEBLOC_CLI"
UNATTENDED = "set TRACEBLOC_CLIENT_ID and TRACEBLOC_CLIENT_PASSWORD (or TRACEBLOC_VALUES_FILE)"
LOGIN_TRIES = 2  # the first try and exactly one fresh code after Enter
NAME_TRIES = 3
LEGACY_NAMESPACE = "tracebloc"  # listed by its minted slug, never by this name
CLI_INSTALL = {
    "posix": "curl -fsSL https://github.com/tracebloc/cli/releases/latest/download/install.sh | sh",
    "windows": "irm https://github.com/tracebloc/cli/releases/latest/download/install.ps1 | iex",
}
ZONES_URL = "https://api.electricitymap.org/v3/zones"
MAX_CREDENTIAL_BYTES = 64 * 1024
_KEYS = (
    "TRACEBLOC_CLIENT_ID",
    "TRACEBLOC_CLIENT_PASSWORD",
    "TB_NAMESPACE",
    "TRACEBLOC_CLIENT_ADOPTED",
)
# CSI (ESC [ … final), SS3 (ESC O x), OSC (ESC ] … BEL/ST), any other ESC pair, then every
# other C0 control and DEL: what arrow keys and pastes put into a line read in cooked mode.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1bO.|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b.?|\x9b[0-?]*[ -/]*[@-~]|[\x00-\x1f\x7f]"
)
_ERROR_LINE = re.compile(
    r"Error:|HTTP \d{3}|refused|timed? ?out|unauthorized|forbidden|denied", re.IGNORECASE
)
_BAD_LOCATION = re.compile(r"location.*not a valid choice", re.IGNORECASE)
_SLUG = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def wanted(
    given: CredentialsGiven, *, values_given: bool, previous: tuple[str | None, str | None]
) -> bool:
    """Is sign-in the way credentials come? Not when any of the unattended ways is there."""
    if values_given or given.values_file:
        return False
    if given.client_id or given.password:
        return False  # both, or an error naming the missing one: credentials.obtain's call
    return not (previous[0] and previous[1])


def clean_name(raw: str) -> str:
    """A typed or given name without escape sequences and control characters, trimmed."""
    return _ESCAPES.sub("", raw).strip()


@dataclass(frozen=True)
class Location:
    code: str | None  # None: omitted, the CLI sends none
    source: str  # "env", "time zone" or "none"
    zone: str = ""  # the IANA zone it came from


def location(typed: str, zone: str | None, tables: Iterable[str]) -> Location:
    """`typed` (TRACEBLOC_CLIENT_LOCATION), else the country of the Area/City zone `zone` in
    the first zone table that lists it, else none."""
    given = clean_name(typed)
    if given:
        return Location(given, "env")
    if zone and "/" in zone:
        for table in tables:
            code = zone_country(table, zone)
            if code:
                return Location(code, "time zone", zone)
    return Location(None, "none")


def zone_country(table: str, zone: str) -> str | None:
    """The first country code of `zone`'s row in a zone.tab / zone1970.tab text."""
    for line in table.splitlines():
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) >= 3 and cols[2].strip() == zone:
            code = cols[0].split(",")[0].strip()
            return code if re.fullmatch(r"[A-Z]{2}", code) else None
    return None


def zone_from_link(target: str) -> str:
    """/etc/localtime's link target → the IANA zone (`…/zoneinfo/Europe/Berlin`)."""
    return target.split("/zoneinfo/", 1)[1] if "/zoneinfo/" in target else ""


@dataclass(frozen=True)
class Minted:
    """What `tracebloc client create` wrote. `password` is None when the cluster was already
    registered (ADOPTED): the backend keeps the existing credential."""

    client_id: str
    namespace: str
    adopted: bool
    password: str | None = field(default=None, repr=False)


class CredentialFileError(InstallerError):
    """The credential file is not what `tracebloc client create` writes."""


def parse_credential(text: str) -> Minted:
    """KEY=VALUE lines as the CLI writes them (comments and blank lines skipped), read as
    data: nothing is expanded, quoted or run. Unknown keys are ignored."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        if not sep:
            raise CredentialFileError(
                "the credential file has a line that is not KEY=VALUE", _REPORT
            )
        key = key.strip().removeprefix("export ").strip()
        if key in _KEYS:
            found[key] = _unquote(value.strip())
    client_id, namespace = found.get(_KEYS[0], ""), found.get(_KEYS[2], "")
    adopted = found.get(_KEYS[3], "") == "1"
    password = found.get(_KEYS[1]) or None
    if not client_id:
        raise CredentialFileError("the credential file holds no TRACEBLOC_CLIENT_ID", _REPORT)
    if not namespace or len(namespace) > 53 or not _SLUG.fullmatch(namespace):
        raise CredentialFileError("the credential file holds no usable TB_NAMESPACE", _REPORT)
    if not adopted and password is None:
        raise CredentialFileError("the credential file holds no TRACEBLOC_CLIENT_PASSWORD", _REPORT)
    return Minted(client_id, namespace, adopted, None if adopted else password)


_REPORT = "re-run to try again; if it happens again, report it with the tracebloc CLI's version"


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


# --- the one-client pre-flight -----------------------------------------------------------


def owned(listing: str, namespace: str) -> bool:
    """Does `tracebloc client list --plain` show a client in `namespace`?"""
    return re.search(rf"namespace={re.escape(namespace)}(\s|$)", listing, re.MULTILINE) is not None


def foreign(namespaces: Iterable[str], listing: str) -> list[str]:
    """The installed clients' namespaces the signed-in account provably does not own. The
    legacy `tracebloc` namespace is never listed by that name, so it proves nothing here."""
    return [ns for ns in namespaces if ns != LEGACY_NAMESPACE and not owned(listing, ns)]


def three_choices(namespace: str, cluster_name: str | None) -> str:
    """The three ways on, when this machine runs another account's client."""
    if cluster_name:
        remove = (
            f"remove the current client first (k3d cluster delete {cluster_name} wipes it "
            "and its local data), then re-run"
        )
    else:
        remove = (
            f"remove the current client first (tracebloc-installer uninstall -n "
            f"{namespace}), then re-run"
        )
    return (
        "tracebloc runs one client per machine; registering another would strand it. "
        "Choose one: (1) repair or update it: sign in as the account that owns it, or re-run "
        f"with that client's TRACEBLOC_CLIENT_ID and TRACEBLOC_CLIENT_PASSWORD; (2) switch "
        f"to this account: {remove}; (3) run both: install on a separate machine"
    )


# --- what a failed `client create` said ---------------------------------------------------


def create_failure(output: str, code: str | None, source: str) -> list[str]:
    """The lines to show for a failed `client create`: a hint for an unknown carbon
    zone, else up to four of the CLI's error lines."""
    if _BAD_LOCATION.search(output):
        where = (
            f"it came from {LOCATION_VAR}; set it to a valid code"
            if source == "env"
            else f"it was derived from this machine's time zone; set {LOCATION_VAR} to a valid code"
        )
        return [
            f"{code or 'that location'!r} is not a recognised carbon zone, so the client "
            f"was not created: {where} (e.g. DE, FR, US, GB; all codes: {ZONES_URL}) "
            "and re-run"
        ]
    return [line.strip() for line in output.splitlines() if _ERROR_LINE.search(line)][:4]


# --- where the CLI is, for the person's next step ------------------------------------------


def path_line(directory: str, *, os_: str, shell: str, path: str, home: str = "") -> str | None:
    """The line that puts `directory` on PATH in the person's shell; None when it is there.
    Under `home` it names the home the shell's way ($HOME, ~), as a person types it."""
    separator = ";" if os_ == "windows" else ":"
    entries = [p.rstrip("/\\") for p in path.split(separator) if p]
    if directory.rstrip("/\\") in entries:
        return None
    home = home.rstrip("/\\")
    rest = directory[len(home) :] if len(home) > 1 and directory.startswith(home) else None
    if rest is not None and rest[:1] not in ("/", "\\"):
        rest = None
    if os_ == "windows":
        shown = f"$HOME{rest}" if rest is not None else directory
        return f'$env:Path = "{shown};" + $env:Path'
    name = shell.replace("\\", "/").rsplit("/", 1)[-1]
    if name in ("fish", "csh", "tcsh"):
        word = (
            "~" + _sh_quote(rest)
            if rest is not None and _sh_quote(rest) == rest
            else (_sh_quote(directory))
        )
        return f"fish_add_path {word}" if name == "fish" else f"set path = ({word} $path)"
    shown = "$HOME" + _dq(rest) if rest is not None else _dq(directory)
    return f'export PATH="{shown}:$PATH"'


def _sh_quote(text: str) -> str:
    return (
        text
        if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", text)
        else "'" + text.replace("'", "'\\''") + "'"
    )


def _dq(text: str) -> str:
    return re.sub(r'(["\\$`])', r"\\\1", text)
