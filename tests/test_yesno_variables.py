"""One yes/no parser for every yes/no variable (decide/yesno.flag): 1/true/yes/on or
0/false/no/off in any case; a typo is bad input naming the variable, never a quiet answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from installer.decide import preflight, winhost, yesno
from installer.decide.errors import BadInput
from installer.edges import hostdirs


@pytest.mark.parametrize("name", yesno.VARIABLES)
def test_every_yes_no_variable_with_a_typo_is_refused_naming_it(name: str) -> None:
    with pytest.raises(BadInput) as caught:
        yesno.check_all({name: "ture"})
    assert caught.value.message == f"{name}='ture' is not understood"
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("raw", "meant"),
    [
        pytest.param("0", False, id="zero"),
        pytest.param("false", False, id="false"),
        pytest.param("OFF", False, id="off-upper"),
        pytest.param("1", True, id="one"),
        pytest.param(" Yes ", True, id="yes-spaced"),
    ],
)
def test_the_windows_host_options_read_no_as_no(raw: str, meant: bool) -> None:
    # They counted any non-empty value as yes: TRACEBLOC_SKIP_DAILY_USER=0 skipped the user.
    chosen = winhost.options({"TRACEBLOC_SKIP_DAILY_USER": raw, "TRACEBLOC_NO_AUTOSTART": raw})
    assert (chosen.skip_daily_user, chosen.no_autostart) == (meant, meant)


def test_a_typo_in_the_windows_autostart_variable_is_refused() -> None:
    with pytest.raises(BadInput, match="TRACEBLOC_NO_AUTOSTART='ture' is not understood"):
        winhost.options({"TRACEBLOC_NO_AUTOSTART": "ture"})


def test_skip_preflight_is_read_by_the_one_parser() -> None:
    assert preflight.skipped({"TRACEBLOC_SKIP_PREFLIGHT": "On"}) is True
    assert preflight.skipped({}) is False
    with pytest.raises(BadInput, match="TRACEBLOC_SKIP_PREFLIGHT='y' is not understood"):
        preflight.skipped({"TRACEBLOC_SKIP_PREFLIGHT": "y"})


@pytest.mark.parametrize(
    ("raw", "allowed"),
    [
        pytest.param("false", False, id="false-means-no"),
        pytest.param("1", True, id="one"),
    ],
)
def test_network_storage_is_allowed_only_by_a_yes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str, allowed: bool
) -> None:
    # It counted anything but "" and "0" as yes: TRACEBLOC_ALLOW_NETWORK_FS=false allowed it.
    monkeypatch.setattr(hostdirs, "filesystem_type", lambda path: "nfs4")
    env = {"HOME": str(tmp_path), "TRACEBLOC_ALLOW_NETWORK_FS": raw}
    data = str(tmp_path / ".tracebloc")
    if allowed:
        assert (
            "TRACEBLOC_ALLOW_NETWORK_FS is set"
            in hostdirs.check(env, "linux", data, None, "hostpath")[0]
        )
    else:
        with pytest.raises(BadInput, match="network filesystem"):
            hostdirs.check(env, "linux", data, None, "hostpath")
