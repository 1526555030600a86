"""decide/openpgp.py against keys the real gpg made: one key (with its subkey, user ID
and signatures) has gpg's fingerprint; a file holding a second key, armored or binary,
has none (apt would trust every key in a signed-by file)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from installer.decide import openpgp
from tests.fakes.debian_repo import export, gpg_key

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed")


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    home = tmp_path_factory.mktemp("gnupg")
    return home, gpg_key(home, "docker stand-in"), gpg_key(home, "someone else")


@pytest.mark.parametrize(
    "armor", [pytest.param(True, id="armored"), pytest.param(False, id="binary")]
)
def test_one_gpg_key_has_gpgs_fingerprint(keys: tuple[Path, str, str], armor: bool) -> None:
    home, docker, _ = keys
    assert openpgp.fingerprint(export(home, docker, armor=armor)) == docker


@pytest.mark.parametrize(
    "armor", [pytest.param(True, id="armored"), pytest.param(False, id="binary")]
)
def test_a_second_key_in_the_same_file_is_refused(keys: tuple[Path, str, str], armor: bool) -> None:
    home, docker, other = keys
    assert openpgp.fingerprint(export(home, docker, other, armor=armor)) is None


def test_a_second_armored_block_appended_is_refused(keys: tuple[Path, str, str]) -> None:
    home, docker, other = keys
    assert openpgp.fingerprint(export(home, docker) + export(home, other)) is None
    assert openpgp.fingerprint(export(home, docker) + b"\ntrailing words\n") is None


def test_a_second_binary_key_appended_is_refused(keys: tuple[Path, str, str]) -> None:
    home, docker, other = keys
    assert (
        openpgp.fingerprint(export(home, docker, armor=False) + export(home, other, armor=False))
        is None
    )


def test_a_cut_or_padded_key_is_refused(keys: tuple[Path, str, str]) -> None:
    home, docker, _ = keys
    binary = export(home, docker, armor=False)
    assert openpgp.fingerprint(binary[:-5]) is None
    assert openpgp.fingerprint(binary + b"\x00") is None


def test_a_key_whose_first_packet_is_not_a_public_key_is_refused(
    keys: tuple[Path, str, str],
) -> None:
    home, docker, _ = keys
    binary = export(home, docker, armor=False)
    user_id = b"\xcd\x05tests"  # a new-format user ID packet (tag 13) ahead of the key
    assert openpgp.fingerprint(user_id + binary) is None


@pytest.mark.parametrize(
    "armor", [pytest.param(True, id="from-armored"), pytest.param(False, id="from-binary")]
)
def test_the_marked_key_file_is_read_back_by_the_real_gpg_as_the_same_packets(
    keys: tuple[Path, str, str],
    armor: bool,
    tmp_path: Path,
) -> None:
    import subprocess

    home, docker, _ = keys
    text = openpgp.marked(export(home, docker, armor=armor), "# Managed by tracebloc installer")
    assert text.startswith(
        "# Managed by tracebloc installer\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n"
    )
    marked = tmp_path / "docker.asc"
    marked.write_text(text, encoding="ascii")
    # gpg skips the line before the armor and checks the armor's CRC-24 (a wrong one fails).
    packets = subprocess.run(
        ["gpg", "--homedir", str(home), "--batch", "--dearmor", "-o", "-", str(marked)],
        capture_output=True,
        check=True,
    ).stdout
    assert packets == export(home, docker, armor=False)
    broken = tmp_path / "broken.asc"
    broken.write_text(text.replace(text.splitlines()[-2], "=AAAA"), encoding="ascii")
    assert (
        subprocess.run(
            ["gpg", "--homedir", str(home), "--batch", "--dearmor", "-o", "-", str(broken)],
            capture_output=True,
        ).returncode
        != 0
    )
