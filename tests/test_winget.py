"""winget where it is missing (the twin's Install-Winget, pinned and verified): the plan's steps and
their exact argv, the signature decision, the checked download, and the elevated half against the
fake Windows tools of tests/test_winhost.py (a fake powershell answering Get-AuthenticodeSignature
and Add-AppxPackage, a winget that exists only once the bundle was installed)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import pytest

from installer.commands import winhost as flow
from installer.decide import winget as wg
from installer.decide import winhost as wh
from installer.decide.errors import InstallerError
from installer.edges import download
from installer.edges import winget as edge
from installer.present.winhost import host_lines
from tests.fakes.executables import executable_path
from tests.test_winhost import calls, facts, fake_windows, keys, run, scenario

__all__ = ["fake_windows"]  # the fixture, shared with tests/test_winhost.py

TEMP = r"C:\Users\nurse\AppData\Local\Temp"
BUNDLE = rf"{TEMP}\tracebloc-winget\Microsoft.DesktopAppInstaller_8wekyb3d8bbwe.msixbundle"
MICROSOFT = "CN=Microsoft Corporation, O=Microsoft Corporation, L=Redmond, S=Washington, C=US"


# --- the plan ----------------------------------------------------------------------------


def test_without_winget_the_plan_installs_the_pinned_bundle_before_docker_desktop() -> None:
    plan = wh.plan_host(facts(winget=False, temp_dir=TEMP), wh.Options())
    assert plan.blockers == ()
    order = keys(plan)
    assert order[order.index("wsl-default") + 1 : order.index("docker-users")] == [
        "winget-download",
        "winget-signature",
        "winget-install",
        "docker-desktop",
    ]
    steps = {s.key: s for s in plan.steps}
    assert all(steps[k].privileged for k in wg.KEYS)  # in the one elevated window
    assert steps["winget-download"].argv == ()  # the engine itself, through its one downloader
    assert steps["winget-signature"].argv == (
        "powershell.exe",
        "-NoProfile",
        "-NonInteractive",
        "-ExecutionPolicy",
        "Bypass",
        "-Command",
        f"$s = Get-AuthenticodeSignature -LiteralPath {BUNDLE}; [ordered]@{{ status = "
        '"$($s.Status)"; subject = "$($s.SignerCertificate.Subject)" } | ConvertTo-Json -Compress',
    )
    assert steps["winget-install"].argv == (
        "powershell.exe",
        "-NoProfile",
        "-NonInteractive",
        "-ExecutionPolicy",
        "Bypass",
        "-Command",
        f"Add-AppxPackage -Path {BUNDLE} -ErrorAction Stop",
    )
    shown = "\n".join(host_lines(plan))
    assert wg.URL in shown and wg.SHA256 in shown and "signed by Microsoft Corporation" in shown


def test_a_temp_path_with_spaces_is_one_quoted_powershell_literal() -> None:
    path = wg.bundle_path(r"C:\Users\Jo O'Neil\AppData\Local\Temp")
    assert wg.install_argv(path)[-1] == (
        r"Add-AppxPackage -Path 'C:\Users\Jo O''Neil\AppData\Local\Temp\tracebloc-winget"
        r"\Microsoft.DesktopAppInstaller_8wekyb3d8bbwe.msixbundle' -ErrorAction Stop"
    )


@pytest.mark.parametrize(
    ("overrides", "winget_steps"),
    [
        pytest.param({"winget": True}, False, id="winget-already-there"),
        pytest.param(
            {"winget": False, "docker_desktop": True}, False, id="docker-desktop-installed"
        ),
        pytest.param({"winget": False, "docker_usable": True}, False, id="docker-answers-tier-0"),
        pytest.param({"winget": False}, True, id="no-winget"),
    ],
)
def test_winget_is_installed_only_when_docker_desktop_needs_it(
    overrides: dict[str, Any], winget_steps: bool
) -> None:
    plan = wh.plan_host(facts(temp_dir=TEMP, **overrides), wh.Options())
    assert any(k in keys(plan) for k in wg.KEYS) is winget_steps


def test_the_pin_is_one_release_with_its_published_digest() -> None:
    assert "/latest/" not in wg.URL and f"/download/{wg.RELEASE}/" in wg.URL
    assert re.fullmatch(r"[0-9a-f]{64}", wg.SHA256)
    assert wg.CHECKSUM_SOURCE.startswith("microsoft/winget-pkgs ")


# --- the signature -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "subject", "refused"),
    [
        pytest.param("Valid", MICROSOFT, None, id="valid-microsoft"),
        pytest.param(
            "HashMismatch",
            MICROSOFT,
            "not valid (Get-AuthenticodeSignature: HashMismatch)",
            id="tampered",
        ),
        pytest.param("NotSigned", "", "not valid", id="unsigned"),
        pytest.param("UnknownError", MICROSOFT, "not valid", id="untrusted-chain"),
        pytest.param(
            "Valid",
            "CN=Contoso Ltd, O=Contoso Ltd, C=US",
            "not signed by Microsoft",
            id="valid-but-another-signer",
        ),
        pytest.param(
            "Valid",
            "CN=Microsoft Corporation, O=Contoso",
            "not signed by Microsoft",
            id="microsoft-in-the-name-only",
        ),
        pytest.param(
            "Valid",
            'CN="Microsoft Corporation, Evil", O=Microsoft Corporation',
            "not signed by Microsoft",
            id="quoted-name-with-a-comma",
        ),
        pytest.param("", "", "no status", id="nothing-read"),
    ],
)
def test_signature_problem(status: str, subject: str, refused: str | None) -> None:
    problem = wg.signature_problem(status, subject)
    if refused is None:
        assert problem is None
    else:
        assert problem is not None and refused in problem


# --- the download --------------------------------------------------------------------------


def fake_fetch(body: bytes, sha256: str) -> Any:
    def fetch(url: str, out: io.BufferedWriter, **kwargs: Any) -> download.Fetched:
        assert url == wg.URL and kwargs["most"] == wg.MOST_BYTES
        out.write(body)
        return download.Fetched(sha256, len(body), 0.1)

    return fetch


def test_a_download_with_another_digest_is_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "fetch", fake_fetch(b"evil", "0" * 64))
    path = wg.bundle_path(str(tmp_path))
    problem = edge.fetch_bundle(path, {})
    assert problem is not None and "not the published " + wg.SHA256 in problem
    assert not os.path.exists(path) and not os.path.exists(path + ".part")


def test_the_published_digest_lands_under_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "fetch", fake_fetch(b"bundle", wg.SHA256))
    path = wg.bundle_path(str(tmp_path))
    assert edge.fetch_bundle(path, {}) is None
    assert Path(path).read_bytes() == b"bundle" and not os.path.exists(path + ".part")


def test_after_the_install_windowsapps_is_on_path_once() -> None:
    local = os.path.join(os.sep, "Users", "nurse", "AppData", "Local")
    env = edge.with_windowsapps({"PATH": "bin", "LOCALAPPDATA": local})
    aliases = os.path.join(local, "Microsoft", "WindowsApps")
    assert env["PATH"] == os.pathsep.join(["bin", aliases])
    assert edge.with_windowsapps(env)["PATH"] == env["PATH"]


# --- the elevated half, against fake Windows tools --------------------------------------------


def no_winget(
    fake: dict[str, object],
    monkeypatch: pytest.MonkeyPatch,
    sha256: str = wg.SHA256,
    **state: object,
) -> Path:
    """A machine whose winget appears (in WindowsApps, off PATH) only once installed."""
    env = fake["env"]
    assert isinstance(env, dict)
    Path(str(fake["state"])).parent.joinpath("bin", "winget").unlink(missing_ok=True)
    Path(str(fake["state"])).parent.joinpath("bin", "winget.exe").unlink(missing_ok=True)
    local = Path(str(fake["state"])).parent / "LocalAppData"
    env["LOCALAPPDATA"] = str(local)
    temp = Path(str(fake["state"])).parent / "temp"
    installed = executable_path(local / "Microsoft" / "WindowsApps" / "winget")
    scenario(
        fake,
        probe={
            "admin": True,
            "winget": False,
            "temp": str(temp),
            "features": {wh.WSL_FEATURE: 1, wh.VM_PLATFORM: 1, wh.HYPER_V: 1},
        },
        appx_installs=str(installed),
        **state,
    )

    def fetch(url: str, out: io.BufferedWriter, **kwargs: Any) -> download.Fetched:
        assert url == wg.URL
        out.write(b"the bundle")
        return download.Fetched(sha256, 10, 0.1)

    monkeypatch.setattr(download, "fetch", fetch)
    return temp


def powershell_scripts(fake: dict[str, object]) -> list[str]:
    return [c[-1] for c in calls(fake) if c[0] == "powershell"]


def test_the_elevated_half_installs_winget_verified_then_docker_desktop_with_it(
    fake_windows: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = no_winget(fake_windows, monkeypatch)
    plan, said = run(fake_windows, elevated_child=True)
    path = wg.bundle_path(str(temp))
    scripts = powershell_scripts(fake_windows)
    signature = scripts.index(wg.signature_argv(path)[-1])
    assert scripts.index(wg.install_argv(path)[-1]) == signature + 1  # verified, then installed
    made = calls(fake_windows)
    docker = ["winget", "install", "-e", "--id", "Docker.DockerDesktop"]
    assert [c[:5] for c in made].index(docker) > [c[-1] for c in made].index(
        wg.install_argv(path)[-1]
    )
    assert not os.path.exists(path)  # the bundle is removed once installed
    assert "done: install winget (App Installer) from the verified bundle" in said
    recorded = flow.load_state(str(Path(str(fake_windows["data"])) / flow.STATE_FILE))
    assert "docker-desktop" in recorded.done and not set(wg.KEYS) & set(recorded.done)


@pytest.mark.parametrize(
    ("signature", "refused"),
    [
        pytest.param(
            {"status": "Valid", "subject": "CN=Contoso, O=Contoso"},
            "not signed by Microsoft Corporation",
            id="another-signer",
        ),
        pytest.param({"status": "HashMismatch", "subject": MICROSOFT}, "not valid", id="tampered"),
    ],
)
def test_a_bundle_whose_signature_is_refused_is_never_installed(
    fake_windows: dict[str, object],
    monkeypatch: pytest.MonkeyPatch,
    signature: dict[str, str],
    refused: str,
) -> None:
    temp = no_winget(fake_windows, monkeypatch, signature=signature)
    with pytest.raises(
        InstallerError, match=f"winget could not be installed: .*{refused}"
    ) as stopped:
        run(fake_windows, elevated_child=True)
    assert "Microsoft Store" in (stopped.value.remedy or "")
    assert not any("Add-AppxPackage" in s for s in powershell_scripts(fake_windows))
    assert not any(c[0] == "winget" for c in calls(fake_windows))
    assert not os.path.exists(wg.bundle_path(str(temp)))


def test_a_download_that_is_not_the_published_one_is_never_verified_or_installed(
    fake_windows: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    no_winget(fake_windows, monkeypatch, sha256="f" * 64)
    with pytest.raises(InstallerError, match="SHA-256 is f{64}, not the published"):
        run(fake_windows, elevated_child=True)
    scripts = powershell_scripts(fake_windows)
    assert not any("Get-AuthenticodeSignature" in s or "Add-AppxPackage" in s for s in scripts)


def test_add_appxpackage_failing_stops_before_docker_desktop(
    fake_windows: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    no_winget(fake_windows, monkeypatch, appx_rc=1)
    with pytest.raises(InstallerError, match="Add-AppxPackage failed: .*HRESULT: 0x80073CF3"):
        run(fake_windows, elevated_child=True)
    assert not any(c[0] == "winget" for c in calls(fake_windows))
