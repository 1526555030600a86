"""Browser sign-in through the tracebloc CLI (issue 21): the decisions, and the flow against a
fake `tracebloc` executable that plays the CLI's contract (tests/fakes/tracebloc_cli.py)."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from installer.commands import signin as flow
from installer.commands import tracebloc_cli
from installer.commands.credentials import SIGN_IN, obtain
from installer.decide import signin
from installer.decide.errors import BadInput, InstallerError, Refused
from installer.decide.model import Installed, ListRead
from installer.decide.redact import Redactor
from installer.decide.settings import CredentialsGiven, credentials_given
from installer.decide.tooling import Tool
from installer.edges import tbcli
from installer.edges.backend import Check, Verdict
from tests.fakes.tracebloc_cli import FakeCli

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pty and file modes")
ZONE_TAB = "# comment\nDE\t+5230+01322\tEurope/Berlin\nUS\t+404251-0740023\tAmerica/New_York\n"
ZONE1970 = "CH,DE,LI\t+4723+00832\tEurope/Zurich\n"
PASSWORD = "9f8e7d6c" * 8


class Term:
    """A person at a terminal: answers from a script, end of input after it."""

    def __init__(self, *answers: str, fds: tuple[int, int] | None = None) -> None:
        self.answers, self.asked, self.said, self.fds = list(answers), [], [], fds  # type: ignore[var-annotated]

    def ask(self, prompt: str) -> str:
        self.asked.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)

    def secret(self, prompt: str) -> str:
        return self.ask(prompt)

    def say(self, text: str) -> None:
        self.said.append(text)


class TtyTerm(Term):
    def descriptors(self) -> tuple[int, int]:
        assert self.fds is not None
        return self.fds


# --- the pure decisions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "values_given", "previous", "expected"),
    [
        pytest.param({}, False, (None, None), True, id="bare-run-signs-in"),
        pytest.param(
            {"TRACEBLOC_CLIENT_ID": "a", "TRACEBLOC_CLIENT_PASSWORD": "b"},
            False,
            (None, None),
            False,
            id="env-credentials-unattended",
        ),
        pytest.param(
            {"TRACEBLOC_CLIENT_ID": "a"},
            False,
            (None, None),
            False,
            id="half-env-is-credentials-error-not-sign-in",
        ),
        pytest.param(
            {"TRACEBLOC_VALUES_FILE": "/v.yaml"}, False, (None, None), False, id="values-file-env"
        ),
        pytest.param({}, True, (None, None), False, id="values-file-given"),
        pytest.param({}, False, ("id", "pw"), False, id="earlier-values-file-with-credentials"),
        pytest.param({}, False, ("id", None), True, id="earlier-values-file-without-password"),
    ],
)
def test_when_sign_in_is_the_way_credentials_come(
    env: dict[str, str], values_given: bool, previous: tuple[str | None, str | None], expected: bool
) -> None:
    assert (
        signin.wanted(credentials_given(env), values_given=values_given, previous=previous)
        is expected
    )


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        pytest.param("lab\x1b[D\x1b[D one", "lab one", id="arrow-keys"),
        pytest.param("\x1b[200~lab-one\x1b[201~", "lab-one", id="bracketed-paste"),
        pytest.param("  lab\x1bOA\t \r", "lab", id="ss3-and-whitespace"),
        pytest.param("\x1b]0;title\x07box", "box", id="osc-title"),
        pytest.param("Müller's GPU", "Müller's GPU", id="unicode-kept"),
        pytest.param("\x1b[A\x1b[B", "", id="only-escapes"),
    ],
)
def test_a_typed_name_loses_escape_sequences(raw: str, clean: str) -> None:
    assert signin.clean_name(raw) == clean


@pytest.mark.parametrize(
    ("env", "zone", "expected"),
    [
        pytest.param(
            {"TRACEBLOC_CLIENT_LOCATION": " FR "}, "Europe/Berlin", ("FR", "env"), id="env-wins"
        ),
        pytest.param({}, "Europe/Berlin", ("DE", "time zone"), id="zone-tab"),
        pytest.param({}, "Europe/Zurich", ("CH", "time zone"), id="zone1970-first-country"),
        pytest.param({}, "UTC", (None, "none"), id="utc-names-no-country"),
        pytest.param({}, "Mars/Olympus", (None, "none"), id="unknown-zone-omitted"),
        pytest.param({}, None, (None, "none"), id="no-zone"),
    ],
)
def test_the_location_comes_from_the_variable_or_the_zone_table(
    env: dict[str, str], zone: str | None, expected: tuple[str | None, str]
) -> None:
    found = signin.location(credentials_given(env).location, zone, [ZONE_TAB, ZONE1970])
    assert (found.code, found.source) == expected


def test_localtime_link_gives_the_zone() -> None:
    assert signin.zone_from_link("/usr/share/zoneinfo/Europe/Berlin") == "Europe/Berlin"
    assert signin.zone_from_link("../usr/share/zoneinfo/America/New_York") == "America/New_York"
    assert signin.zone_from_link("/etc/UTC") == ""


def test_the_credential_file_is_read_as_data() -> None:
    text = (
        "# tracebloc client credential\nTRACEBLOC_CLIENT_ID=abc-123\n"
        f"TRACEBLOC_CLIENT_PASSWORD={PASSWORD}\nTB_NAMESPACE=ana-01\n"
        "PATH=$(rm -rf ~)\n"
    )
    minted = signin.parse_credential(text)
    assert (minted.client_id, minted.password, minted.namespace, minted.adopted) == (
        "abc-123",
        PASSWORD,
        "ana-01",
        False,
    )
    assert PASSWORD not in repr(minted)


def test_an_adopted_credential_file_has_no_password() -> None:
    minted = signin.parse_credential(
        "TRACEBLOC_CLIENT_ID=u\nTB_NAMESPACE=ana-01\nTRACEBLOC_CLIENT_ADOPTED=1\n"
    )
    assert minted.adopted and minted.password is None


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("TB_NAMESPACE=ana-01\nTRACEBLOC_CLIENT_PASSWORD=x\n", id="no-id"),
        pytest.param("TRACEBLOC_CLIENT_ID=u\nTRACEBLOC_CLIENT_PASSWORD=x\n", id="no-namespace"),
        pytest.param(
            "TRACEBLOC_CLIENT_ID=u\nTB_NAMESPACE=Bad_NS\nTRACEBLOC_CLIENT_PASSWORD=x\n",
            id="namespace-not-a-label",
        ),
        pytest.param("TRACEBLOC_CLIENT_ID=u\nTB_NAMESPACE=a\n", id="mint-without-password"),
        pytest.param("garbage\n", id="not-key-value"),
    ],
)
def test_a_credential_file_that_is_not_the_clis_is_refused(text: str) -> None:
    with pytest.raises(signin.CredentialFileError):
        signin.parse_credential(text)


def test_ownership_is_matched_on_the_exact_namespace() -> None:
    listing = "  7  box   state=connected   namespace=acme-prod-01   location=DE\n"
    assert signin.owned(listing, "acme-prod-01")
    assert not signin.owned(listing, "acme-prod")
    assert signin.foreign(["acme-prod", "acme-prod-01", "tracebloc"], listing) == ["acme-prod"]


def test_a_rejected_location_gets_the_hint_for_where_it_came_from() -> None:
    out = 'Error: creating client: HTTP 400: {"location":["\\"berlin\\" is not a valid choice."]}'
    env_hint = signin.create_failure(out, "berlin", "env")[0]
    zone_hint = signin.create_failure(out, "XX", "time zone")[0]
    assert "TRACEBLOC_CLIENT_LOCATION; set it" in env_hint and "'berlin'" in env_hint
    assert "time zone" in zone_hint and signin.ZONES_URL in zone_hint
    lines = signin.create_failure("working\nError: HTTP 403 forbidden\nmore\n", None, "none")
    assert lines == ["Error: HTTP 403 forbidden"]


@pytest.mark.parametrize(
    ("os_", "shell", "path", "expected"),
    [
        pytest.param(
            "linux",
            "/bin/bash",
            "/usr/bin",
            'export PATH="/home/a/.tracebloc/bin:$PATH"',
            id="bash",
        ),
        pytest.param(
            "darwin", "/bin/zsh", "/usr/bin", 'export PATH="/home/a/.tracebloc/bin:$PATH"', id="zsh"
        ),
        pytest.param(
            "linux", "/usr/bin/fish", "/usr/bin", "fish_add_path /home/a/.tracebloc/bin", id="fish"
        ),
        pytest.param(
            "linux", "/bin/bash", "/usr/bin:/home/a/.tracebloc/bin/", None, id="already-on-path"
        ),
    ],
)
def test_the_path_line_is_for_the_persons_shell(
    os_: str, shell: str, path: str, expected: str | None
) -> None:
    assert signin.path_line("/home/a/.tracebloc/bin", os_=os_, shell=shell, path=path) == expected


def test_the_path_line_on_windows_is_powershell() -> None:
    line = signin.path_line(
        r"C:\Users\a\AppData\Local\tracebloc\bin", os_="windows", shell="", path=r"C:\Windows"
    )
    assert line == r'$env:Path = "C:\Users\a\AppData\Local\tracebloc\bin;" + $env:Path'


# --- the flow against the fake CLI -----------------------------------------------------------


@pytest.fixture
def cli(tmp_path: Path) -> FakeCli:
    return FakeCli(tmp_path)


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    # No TZ reaches the flow unless a test sets one: the machine's own zone is not the test's.
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "TZ": "UTC"}
    if sys.platform == "win32":
        env["SYSTEMROOT"] = os.environ.get("SYSTEMROOT", "")
    env.update(extra)
    return env


def setting(
    tmp_path: Path,
    *releases: tuple[str, str],
    readable: bool = True,
    stored: dict[str, str] | None = None,
) -> flow.Setting:
    listing = ListRead(
        readable,
        tuple(Installed(n, ns, "client-1.4.2", "deployed") for n, ns in releases),
        "" if readable else "timeout",
    )
    return flow.Setting(str(tmp_path / "data"), listing, stored or {})


def run_flow(
    cli: FakeCli,
    tmp_path: Path,
    term: Term | None,
    *,
    may_ask: bool = True,
    st: flow.Setting | None = None,
    **env: str,
) -> flow.SignedIn:
    said: list[str] = []
    return flow.sign_in(
        Tool("tracebloc", str(cli.path)),
        env_for(tmp_path, **env),
        Redactor(),
        terminal=term,
        may_ask=may_ask,
        setting=st or setting(tmp_path),
        say=said.append,
    )


def test_a_bare_sign_in_mints_names_and_registers(cli: FakeCli, tmp_path: Path) -> None:
    cli.script(
        create={"mode": "mint", "client_id": "uuid-1", "password": PASSWORD, "namespace": "lab-one"}
    )
    term = Term("\x1b[D lab one ")
    got = run_flow(cli, tmp_path, term, TZ="Europe/Berlin")
    assert (got.client_id, got.password, got.namespace, got.adopted) == (
        "uuid-1",
        PASSWORD,
        "lab-one",
        False,
    )
    path = str(tmp_path / "data" / tbcli.SIGNIN_DIR / tbcli.CREDENTIAL_FILE)
    create = ["client", "create", "--yes", "--name", "lab one", "--credential-file", path]
    if os.path.exists("/usr/share/zoneinfo/zone.tab"):
        create += ["--location", "DE"]
    assert cli.calls() == [["login"], create]
    assert not os.path.exists(path), "the credential file outlived its reading"
    login = next(e for e in cli.entries() if e["argv"] == ["login"])
    assert login["installer"] == "1"
    others = [e for e in cli.entries() if e["argv"] != ["login"]]
    assert all(e["installer"] is None for e in others), "TRACEBLOC_INSTALLER leaked"
    assert all("TRACEBLOC_CLIENT_NAME" not in e["env_names"] for e in others)


def test_the_name_comes_from_the_variable_and_location_from_its_variable(
    cli: FakeCli, tmp_path: Path
) -> None:
    term = Term()
    run_flow(cli, tmp_path, term, TRACEBLOC_CLIENT_NAME="gpu box", TRACEBLOC_CLIENT_LOCATION="FR")
    create = cli.calls()[-1]
    assert create[create.index("--name") + 1] == "gpu box"
    assert create[create.index("--location") + 1] == "FR"
    assert not term.asked


def test_an_empty_name_is_asked_again_and_no_zone_omits_the_location(
    cli: FakeCli, tmp_path: Path
) -> None:
    term = Term("", "  ", "box")
    run_flow(cli, tmp_path, term)
    assert len(term.asked) == 3
    assert "--location" not in cli.calls()[-1]


def test_no_name_and_nobody_to_ask_is_exit_2_before_signing_in(
    cli: FakeCli, tmp_path: Path
) -> None:
    with pytest.raises(BadInput) as caught:
        run_flow(cli, tmp_path, Term(), may_ask=False)
    assert caught.value.exit_code == 2 and "TRACEBLOC_CLIENT_NAME" in caught.value.message
    assert cli.calls() == []


def test_a_lapsed_code_gets_exactly_one_fresh_try_after_enter(cli: FakeCli, tmp_path: Path) -> None:
    cli.script(login=["expired", "ok"])
    term = Term("", "box")
    run_flow(cli, tmp_path, term)
    assert [c[0] for c in cli.calls()] == ["login", "login", "client"]
    assert "Press Enter" in term.asked[0]


def test_a_second_lapsed_code_stops_with_what_to_do(cli: FakeCli, tmp_path: Path) -> None:
    cli.script(login=["expired", "expired", "ok"])
    with pytest.raises(InstallerError) as caught:
        run_flow(cli, tmp_path, Term("", "box"), TRACEBLOC_CLIENT_NAME="box")
    assert "sign-in did not complete" in caught.value.message
    assert "TRACEBLOC_CLIENT_ID" in (caught.value.remedy or "")
    assert cli.calls() == [["login"], ["login"]]


@POSIX_ONLY
def test_login_runs_on_the_persons_terminal(cli: FakeCli, tmp_path: Path) -> None:
    main, child = os.openpty()
    try:
        run_flow(cli, tmp_path, TtyTerm(fds=(child, child)), TRACEBLOC_CLIENT_NAME="box")
        shown = os.read(main, 65536).decode()
    finally:
        os.close(main)
        os.close(child)
    login = next(e for e in cli.entries() if e["argv"] == ["login"])
    assert login["stdin_tty"] and login["stdout_tty"]
    assert "WDJB-MJHT" in shown and "https://ai.tracebloc.io/device" in shown


def test_another_accounts_client_here_is_refused_before_minting(
    cli: FakeCli, tmp_path: Path
) -> None:
    cli.script(list={"clients": [{"id": 7, "name": "mine", "namespace": "ana-01"}]})
    with pytest.raises(Refused) as caught:
        run_flow(
            cli,
            tmp_path,
            Term(),
            st=setting(tmp_path, ("bob-01", "bob-01")),
            TRACEBLOC_CLIENT_NAME="box",
        )
    assert caught.value.exit_code == 3 and "bob-01" in caught.value.message
    remedy = caught.value.remedy or ""
    assert "(1) repair" in remedy and "(2) switch" in remedy and "(3) run both" in remedy
    assert cli.calls() == [["login"], ["client", "list", "--plain"]]


@pytest.mark.parametrize(
    "listed",
    [
        pytest.param({"clients": [{"id": 7, "name": "mine", "namespace": "bob-01"}]}, id="owned"),
        pytest.param({"rc": 1}, id="list-unreadable-defers-to-create"),
    ],
)
def test_an_owned_or_unprovable_installed_client_goes_on_to_create(
    cli: FakeCli, tmp_path: Path, listed: dict[str, Any]
) -> None:
    cli.script(list=listed)
    run_flow(
        cli,
        tmp_path,
        Term(),
        st=setting(tmp_path, ("bob-01", "bob-01")),
        TRACEBLOC_CLIENT_NAME="box",
    )
    assert cli.calls()[-1][:2] == ["client", "create"]


def test_the_legacy_namespace_is_not_checked_against_the_list(cli: FakeCli, tmp_path: Path) -> None:
    run_flow(
        cli,
        tmp_path,
        Term(),
        st=setting(tmp_path, ("tracebloc", "tracebloc")),
        TRACEBLOC_CLIENT_NAME="box",
    )
    # Listed, as the twin lists it, but its absence from the list proves nothing.
    assert [c[:2] for c in cli.calls()] == [["login"], ["client", "list"], ["client", "create"]]


def test_unreadable_releases_refuse_without_signing_in_or_minting(
    cli: FakeCli, tmp_path: Path
) -> None:
    with pytest.raises(Refused):
        run_flow(
            cli, tmp_path, Term(), st=setting(tmp_path, readable=False), TRACEBLOC_CLIENT_NAME="box"
        )
    assert cli.calls() == []


def test_a_failed_create_shows_the_clis_error_and_leaves_no_file(
    cli: FakeCli, tmp_path: Path
) -> None:
    cli.script(create={"mode": "fail", "error": "creating client: HTTP 403: forbidden"})
    with pytest.raises(InstallerError) as caught:
        run_flow(cli, tmp_path, Term(), TRACEBLOC_CLIENT_NAME="box")
    assert "HTTP 403: forbidden" in caught.value.message
    assert not [p for p in os.listdir(tmp_path / "data") if "cred" in p]


def test_an_unknown_location_gets_the_scripts_hint(cli: FakeCli, tmp_path: Path) -> None:
    cli.script(bad_locations=["berlin"])
    with pytest.raises(InstallerError) as caught:
        run_flow(
            cli, tmp_path, Term(), TRACEBLOC_CLIENT_NAME="box", TRACEBLOC_CLIENT_LOCATION="berlin"
        )
    assert "not a recognised carbon zone" in caught.value.message
    assert "TRACEBLOC_CLIENT_LOCATION" in caught.value.message


@POSIX_ONLY
def test_a_credential_file_readable_by_others_is_refused_and_removed(
    cli: FakeCli, tmp_path: Path
) -> None:
    cli.script(create={"mode": "world-readable"})
    with pytest.raises(InstallerError, match="readable by others"):
        run_flow(cli, tmp_path, Term(), TRACEBLOC_CLIENT_NAME="box")
    assert not (tmp_path / "data" / tbcli.SIGNIN_DIR).exists()


@pytest.mark.parametrize(
    "where",
    [
        pytest.param((tbcli.CREDENTIAL_FILE,), id="an-older-engines-place"),
        pytest.param(
            (tbcli.SIGNIN_DIR, tbcli.CREDENTIAL_FILE), id="a-killed-runs-sign-in-directory"
        ),
    ],
)
def test_a_stale_credential_file_is_never_read_as_this_runs(
    cli: FakeCli, tmp_path: Path, where: tuple[str, ...]
) -> None:
    stale = tmp_path.joinpath("data", *where)
    stale.parent.mkdir(parents=True)
    stale.write_text("TRACEBLOC_CLIENT_ID=old\nTRACEBLOC_CLIENT_PASSWORD=old\nTB_NAMESPACE=old\n")
    cli.script(create={"mode": "no-file"})
    with pytest.raises(InstallerError, match="wrote no credential file"):
        run_flow(cli, tmp_path, Term(), TRACEBLOC_CLIENT_NAME="box")


def test_an_adopted_cluster_keeps_the_installed_releases_password(
    cli: FakeCli, tmp_path: Path
) -> None:
    cli.script(
        create={"mode": "adopt", "client_id": "uuid-9", "namespace": "ana-01"},
        list={"clients": [{"id": 9, "name": "ana-01", "namespace": "ana-01"}]},
    )
    got = run_flow(
        cli,
        tmp_path,
        Term(),
        TRACEBLOC_CLIENT_NAME="box",
        st=setting(tmp_path, ("ana-01", "ana-01"), stored={"ns:ana-01": "kept-pw"}),
    )
    assert (got.client_id, got.password, got.namespace, got.adopted) == (
        "uuid-9",
        "kept-pw",
        "ana-01",
        True,
    )


def test_an_adopted_client_in_the_legacy_namespace_is_found_by_its_id(
    cli: FakeCli, tmp_path: Path
) -> None:
    from installer.decide.model import ReleaseRead, ReleaseState

    cli.script(create={"mode": "adopt", "client_id": "uuid-9", "namespace": "ana-01"})
    read = ReleaseRead(
        "tracebloc",
        "tracebloc",
        ReleaseState.PRESENT,
        {"clientId": "uuid-9", "clientPassword": "legacy-pw"},
    )
    stored = flow.stored_passwords({("tracebloc", "tracebloc"): read})
    got = run_flow(
        cli,
        tmp_path,
        Term(),
        TRACEBLOC_CLIENT_NAME="box",
        st=setting(tmp_path, ("tracebloc", "tracebloc"), stored=stored),
    )
    assert (got.password, got.adopted) == ("legacy-pw", True)


def test_an_adopted_cluster_without_a_readable_password_stops(cli: FakeCli, tmp_path: Path) -> None:
    cli.script(create={"mode": "adopt"})
    with pytest.raises(InstallerError, match="stored password could not be read"):
        run_flow(cli, tmp_path, Term(), TRACEBLOC_CLIENT_NAME="box")


@POSIX_ONLY
def test_the_credential_file_directory_is_owner_only(tmp_path: Path) -> None:
    with tbcli.credential_file(str(tmp_path / "fresh")) as path:
        assert not os.path.exists(path)
    assert stat.S_IMODE(os.stat(tmp_path / "fresh").st_mode) == 0o700


# --- the CLI as a tool; the hook in credentials.obtain -----------------------------------------


def test_an_old_cli_is_said_to_be_too_old(cli: FakeCli, tmp_path: Path) -> None:
    cli.script(old=True)
    tool = Tool("tracebloc", str(cli.path))
    assert not tbcli.supports_signin(tool, env_for(tmp_path))
    why = flow.cli_tool(
        env_for(tmp_path, TRACEBLOC_CLI=str(cli.path), TRACEBLOC_TOOLS_DIR=str(tmp_path / "tools"))
    )
    assert isinstance(why, str) and "too old" in why and "install.sh" in why


def test_the_cli_is_found_on_path_and_a_pending_pin_is_never_downloaded(
    cli: FakeCli, tmp_path: Path
) -> None:
    on_path = flow.cli_tool(
        env_for(tmp_path, PATH=str(cli.dir), TRACEBLOC_TOOLS_DIR=str(tmp_path / "tools"))
    )
    assert isinstance(on_path, Tool) and on_path.path == str(cli.path)
    missing = flow.cli_tool(
        env_for(
            tmp_path, PATH=str(tmp_path / "nowhere"), TRACEBLOC_TOOLS_DIR=str(tmp_path / "tools")
        )
    )
    assert isinstance(missing, str)
    assert "no verified checksum" in missing and "TRACEBLOC_CLI" in missing
    assert "releases/latest/download/install" in missing
    assert not (tmp_path / "tools").exists() or not os.listdir(tmp_path / "tools")


def accept(_: str, __: str) -> Check:
    return Check(Verdict.VALID)


def test_yes_without_a_terminal_is_exit_2_naming_the_unattended_variables(tmp_path: Path) -> None:
    hook = flow.hook(
        env_for(tmp_path),
        Redactor(),
        interactive=False,
        terminal=None,
        setting=setting(tmp_path),
        say=print,
        warn=print,
    )
    with pytest.raises(BadInput) as caught:
        obtain(
            CredentialsGiven(),
            previous=(None, None),
            interactive=False,
            terminal=None,
            check=accept,
            say=print,
            sign_in=hook,
        )
    assert caught.value.exit_code == 2
    remedy = caught.value.remedy or ""
    assert "TRACEBLOC_CLIENT_ID" in remedy and "TRACEBLOC_VALUES_FILE" in remedy


def test_signed_in_credentials_take_the_backend_check(cli: FakeCli, tmp_path: Path) -> None:
    checked: list[tuple[str, str]] = []

    def check(user: str, password: str) -> Check:
        checked.append((user, password))
        return Check(Verdict.REJECTED)

    env = env_for(
        tmp_path,
        PATH=str(cli.dir),
        TRACEBLOC_TOOLS_DIR=str(tmp_path / "tools"),
        TRACEBLOC_CLIENT_NAME="box",
    )
    hook = flow.hook(
        env,
        Redactor(),
        interactive=True,
        terminal=Term(),
        setting=setting(tmp_path),
        say=print,
        warn=print,
    )
    with pytest.raises(InstallerError, match="rejected the credential"):
        obtain(
            CredentialsGiven(),
            previous=(None, None),
            interactive=True,
            terminal=Term(),
            check=check,
            say=print,
            sign_in=hook,
        )
    assert checked == [("c0ffee-uuid", "0123abcd" * 8)]
    assert SIGN_IN == "sign-in"


def test_without_the_cli_the_old_prompt_goes_on(tmp_path: Path) -> None:
    warned: list[str] = []
    env = env_for(tmp_path, PATH=str(tmp_path / "nowhere"), TRACEBLOC_TOOLS_DIR=str(tmp_path / "t"))
    term = Term("client-7", "pw")
    hook = flow.hook(
        env,
        Redactor(),
        interactive=True,
        terminal=term,
        setting=setting(tmp_path),
        say=print,
        warn=warned.append,
    )
    got = obtain(
        CredentialsGiven(),
        previous=(None, None),
        interactive=True,
        terminal=term,
        check=accept,
        say=print,
        sign_in=hook,
    )
    assert (got.client_id, got.password) == ("client-7", "pw")
    assert warned and "browser sign-in is not available" in warned[0]


def test_an_old_cli_on_path_is_passed_over_with_a_note(cli: FakeCli, tmp_path: Path) -> None:
    from installer.commands.tools import resolve_tool

    cli.script(old=True)
    choice = resolve_tool(
        "tracebloc",
        env_for(tmp_path, PATH=str(cli.dir), TRACEBLOC_TOOLS_DIR=str(tmp_path / "tools")),
    )
    assert choice.source is None
    assert str(cli.path) in choice.note and "tracebloc login" in choice.note


def test_the_cli_a_person_names_is_used_whatever_is_on_path(cli: FakeCli, tmp_path: Path) -> None:
    from installer.commands.tools import resolve_tool
    from installer.present.tools import choice_text

    choice = resolve_tool(
        "tracebloc",
        env_for(
            tmp_path,
            PATH=str(tmp_path / "nowhere"),
            TRACEBLOC_CLI=str(cli.path),
            TRACEBLOC_TOOLS_DIR=str(tmp_path / "tools"),
        ),
    )
    assert (choice.source, choice.path, choice.version) == ("env", str(cli.path), "0.10.9")
    assert "named by TRACEBLOC_CLI" in choice_text(choice)


def test_the_credential_file_is_removed_on_ctrl_c(tmp_path: Path) -> None:
    """The credential and the CLI's partial file go; the person's own `.cred-*` files in
    the data directory stay (the engine removes only the names it made)."""
    (tmp_path / ".cred-store.kdbx").write_text("the person's passwords")
    with pytest.raises(KeyboardInterrupt), tbcli.credential_file(str(tmp_path)) as path:
        Path(path).write_text("TRACEBLOC_CLIENT_PASSWORD=x\n")
        (Path(path).parent / ".cred-123").write_text("partial")
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == [".cred-store.kdbx"]


def test_the_summary_says_how_to_reach_a_cli_not_on_path(cli: FakeCli, tmp_path: Path) -> None:
    env = env_for(
        tmp_path,
        PATH=str(tmp_path / "nowhere"),
        TRACEBLOC_CLI=str(cli.path),
        SHELL="/usr/bin/zsh",
        TRACEBLOC_TOOLS_DIR=str(tmp_path / "tools"),
    )
    (note,) = tracebloc_cli.cli_notes(env)
    assert "tracebloc data ingest" in note
    if sys.platform != "win32":
        assert f'export PATH="{cli.dir}:$PATH"' in note


@pytest.mark.parametrize(
    ("server", "named"),
    [
        pytest.param("https://127.0.0.1:6550", "tracebloc", id="k3d-context-on-this-machine"),
        pytest.param("https://10.20.0.7:6443", None, id="k3d-context-at-another-address"),
    ],
)
def test_the_k3d_cluster_is_named_for_the_remedy_only_when_it_is_on_this_machine(
    server: str, named: str | None
) -> None:
    """The sign-in's "k3d cluster delete <name>" choice is offered for a k3d context the
    locality decision shows to be here, never from the context's prefix alone."""
    from installer.config import plan_config, probe_config
    from installer.decide.cluster_reads import ClusterRead
    from installer.decide.model import Gpu, KubeTarget, NodeRead

    env = {"HOME": "/nonexistent-home"}
    cfg = plan_config(env, probe_config(env, context="k3d-tracebloc"), os_="linux")
    target = KubeTarget(True, context="k3d-tracebloc", server=server, cluster="k3d-tracebloc")
    cluster = ClusterRead(target, ListRead(True), {}, {}, NodeRead(False, reason="not read"), Gpu())

    setting = flow.setting_for(cfg, cluster)

    assert setting.cluster_name == named
    assert setting.kube_flags == ("--context", "k3d-tracebloc")


@pytest.mark.skipif(sys.platform == "win32", reason="directory descriptors are POSIX")
def test_the_signin_directory_swapped_for_a_link_while_it_is_emptied_leads_nowhere(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Between the look at `.tracebloc-signin` and its listing, it becomes a link to the
    person's documents: none of their files is removed."""
    data, documents = tmp_path / "data", tmp_path / "documents"
    (data / tbcli.SIGNIN_DIR).mkdir(parents=True)
    (data / tbcli.SIGNIN_DIR / "client-credential.env").write_text("stale\n")
    documents.mkdir()
    (documents / "thesis.tex").write_text("mine\n")
    real_scandir = os.scandir

    def swapped(target: Any = ".") -> Any:
        private = data / tbcli.SIGNIN_DIR
        if not private.is_symlink():
            os.rename(private, data / "aside")
            os.symlink(documents, private)
        return real_scandir(target)

    monkeypatch.setattr(tbcli.os, "scandir", swapped)
    with contextlib.suppress(InstallerError), tbcli.credential_file(str(data)):
        pass
    monkeypatch.undo()
    assert (documents / "thesis.tex").read_text() == "mine\n"
