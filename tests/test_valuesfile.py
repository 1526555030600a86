"""Writing the values file: atomic, owner-only, the previous version kept as `.bak`.

The file holds three passwords. These tests check the permissions the file has on disk,
that a failure at any step leaves the previous file byte-identical with no temporary file
behind, and, on the Windows branch, that the ACL is set before a single byte is written.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from installer.decide.errors import InstallerError
from installer.edges.valuesfile import Written, write_values
from tests.fakes.cluster import FakeCluster
from tests.fakes.executables import CHILD_WITHOUT_SYSTEMROOT, make_executable

OLD = b"clientPassword: old\n"
NEW = b"clientPassword: new\n"
real_replace = os.replace

# Exact 0600 modes exist only on POSIX; on Windows the ACL branch (icacls, below) is the one
# that runs, and is covered there with os_="windows".
POSIX_MODES = pytest.mark.skipif(sys.platform == "win32", reason="no POSIX file modes on Windows")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def listing(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


@POSIX_MODES
def test_creates_the_directory_and_an_owner_only_file(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".tracebloc" / "values.yaml"
    written = write_values(str(path), NEW, env={}, os_="linux")
    assert written == Written(str(path), changed=True, backup=None)
    assert path.read_bytes() == NEW
    assert mode(path) == 0o600
    assert listing(path.parent) == {"values.yaml"}


@POSIX_MODES
def test_previous_content_is_kept_as_bak(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_bytes(OLD)
    path.chmod(0o644)  # an older installer's world-readable file
    written = write_values(str(path), NEW, env={}, os_="linux")
    backup = tmp_path / "values.yaml.bak"
    assert written == Written(str(path), changed=True, backup=str(backup))
    assert path.read_bytes() == NEW
    assert backup.read_bytes() == OLD
    assert mode(path) == 0o600
    assert mode(backup) == 0o600
    assert listing(tmp_path) == {"values.yaml", "values.yaml.bak"}


def test_bak_holds_the_version_just_replaced(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    for data in (b"a: 1\n", b"a: 2\n", b"a: 3\n"):
        write_values(str(path), data, env={}, os_="linux")
    assert path.read_bytes() == b"a: 3\n"
    assert (tmp_path / "values.yaml.bak").read_bytes() == b"a: 2\n"


@POSIX_MODES
def test_unchanged_content_is_not_rewritten_and_makes_no_bak(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_bytes(NEW)
    path.chmod(0o644)
    inode = path.stat().st_ino
    written = write_values(str(path), NEW, env={}, os_="linux")
    assert written == Written(str(path), changed=False, backup=None)
    assert path.stat().st_ino == inode
    assert listing(tmp_path) == {"values.yaml"}
    # Still tightened: the file holds secrets whoever wrote it last.
    assert mode(path) == 0o600


@POSIX_MODES
def test_a_values_file_swapped_for_a_link_after_the_check_never_has_its_target_chmodded(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Between the link check and the tightening of an unchanged file, `values.yaml` becomes
    a link to another file with the same bytes: that file keeps its mode."""
    from installer.edges import valuesfile

    path, other = tmp_path / "values.yaml", tmp_path / "shared-notes.yaml"
    path.write_bytes(NEW)
    other.write_bytes(NEW)
    other.chmod(0o644)
    real_read = valuesfile._read_existing

    def swapped(target: str) -> bytes | None:
        data = real_read(target)
        os.remove(target)
        os.symlink(other, target)
        return data

    monkeypatch.setattr(valuesfile, "_read_existing", swapped)
    with pytest.raises(InstallerError, match="symbolic link|owner-only"):
        write_values(str(path), NEW, env={}, os_="linux")
    assert mode(other) == 0o644


def _replace_failing_on(call: int) -> Any:
    """A fresh os.replace stand-in per test: the `call`-th rename hits a full disk."""

    def make() -> Any:
        calls = {"n": 0}

        def replace(src: str, dst: str) -> None:
            calls["n"] += 1
            if calls["n"] == call:
                raise OSError(28, "No space left on device")
            real_replace(src, dst)

        return replace

    return make


def _raising(exc: OSError) -> Any:
    return lambda: exc


@pytest.mark.parametrize(
    ("target", "failure", "why"),
    [
        pytest.param(
            "installer.edges.valuesfile.os.replace",
            _replace_failing_on(1),
            "No space left on device",
            id="disk-full-at-first-rename",
        ),
        pytest.param(
            "installer.edges.valuesfile.os.replace",
            _replace_failing_on(2),
            "No space left on device",
            id="disk-full-after-bak-was-written",
        ),
        pytest.param(
            "installer.edges.valuesfile.os.fsync",
            _raising(OSError(5, "Input/output error")),
            "Input/output error",
            id="fsync-fails",
        ),
        pytest.param(
            "installer.edges.valuesfile.tempfile.mkstemp",
            _raising(PermissionError(13, "Permission denied")),
            "Permission denied",
            id="directory-not-writable",
        ),
    ],
)
def test_failed_write_leaves_previous_file_as_it_was(
    tmp_path: Path, mocker: Any, target: str, failure: Any, why: str
) -> None:
    path = tmp_path / "values.yaml"
    path.write_bytes(OLD)
    path.chmod(0o600)
    mocker.patch(target, side_effect=failure())
    with pytest.raises(InstallerError) as caught:
        write_values(str(path), NEW, env={}, os_="linux")
    assert str(path) in caught.value.message
    assert why in caught.value.message
    assert "previous values file" in caught.value.remedy
    assert "left exactly as it was" in caught.value.remedy
    assert path.read_bytes() == OLD
    leftovers = listing(tmp_path) - {"values.yaml", "values.yaml.bak"}
    assert leftovers == set()
    bak = tmp_path / "values.yaml.bak"
    if bak.exists():  # only when the failure came after the backup was complete
        assert bak.read_bytes() == OLD


@pytest.mark.parametrize(
    ("target", "failure"),
    [
        pytest.param(
            "installer.edges.valuesfile.os.replace",
            OSError(28, "No space left on device"),
            id="disk-full",
        ),
        pytest.param(
            "installer.edges.valuesfile.os.fsync",
            OSError(5, "Input/output error"),
            id="fsync-fails",
        ),
    ],
)
def test_failed_first_write_leaves_nothing(
    tmp_path: Path, mocker: Any, target: str, failure: OSError
) -> None:
    mocker.patch(target, side_effect=failure)
    with pytest.raises(InstallerError):
        write_values(str(tmp_path / "values.yaml"), NEW, env={}, os_="linux")
    assert listing(tmp_path) == set()


@pytest.mark.skipif(
    sys.platform == "win32",
    reason="ENOTDIR's wording; Windows reports a file "
    "in the way as an existing file, and the write fails the same way",
)
def test_directory_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_bytes(b"")
    with pytest.raises(InstallerError) as caught:
        write_values(str(blocker / "values.yaml"), NEW, env={}, os_="linux")
    assert "Not a directory" in caught.value.message
    assert "left exactly as it was" in caught.value.remedy
    assert blocker.read_bytes() == b""


@pytest.mark.skipif(
    sys.platform.startswith("win") or os.geteuid() == 0,
    reason="root (and Windows) ignore a read-only directory mode; the mocked "
    "directory-not-writable case covers this there",
)
def test_read_only_directory(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_bytes(OLD)
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(InstallerError) as caught:
            write_values(str(path), NEW, env={}, os_="linux")
    finally:
        tmp_path.chmod(0o700)
    assert "left exactly as it was" in caught.value.remedy
    assert path.read_bytes() == OLD
    assert listing(tmp_path) == {"values.yaml"}


# --- the Windows branch: an ACL granting only the current user, set by icacls ------------

WINDOWS_ENV = {"USERNAME": "ana", "USERDOMAIN": "CORP"}


def windows_env(cluster: FakeCluster, **extra: str) -> dict[str, str]:
    # find_tool on Windows searches PATH split on ';' for `icacls.exe`.
    return {"PATH": str(cluster.bin), **WINDOWS_ENV, **extra}


@CHILD_WITHOUT_SYSTEMROOT
def test_windows_restricts_the_unchanged_file_itself(cluster: FakeCluster, tmp_path: Path) -> None:
    cluster.install("icacls.exe")
    cluster.on("icacls.exe", stdout="processed file\nSuccessfully processed 1 files\n")
    path = tmp_path / "data" / "values.yaml"
    path.parent.mkdir()
    path.write_bytes(NEW)
    written = write_values(str(path), NEW, env=windows_env(cluster), os_="windows")
    assert written.changed is False
    assert cluster.calls("icacls.exe") == [[str(path), "/inheritance:r", "/grant:r", "CORP\\ana:F"]]


@CHILD_WITHOUT_SYSTEMROOT
@pytest.mark.parametrize(
    ("extra", "principal"),
    [
        pytest.param({}, "CORP\\ana", id="domain-user"),
        pytest.param({"USERDOMAIN": ""}, "ana", id="local-user"),
    ],
)
def test_windows_acl_is_set_on_the_temp_file_before_the_rename(
    cluster: FakeCluster, tmp_path: Path, extra: dict[str, str], principal: str
) -> None:
    cluster.install("icacls.exe")
    cluster.on("icacls.exe", stdout="Successfully processed 1 files\n")
    path = tmp_path / "data" / "values.yaml"
    write_values(str(path), NEW, env=windows_env(cluster, **extra), os_="windows")
    assert path.read_bytes() == NEW
    [argv] = cluster.calls("icacls.exe")
    # The ACL goes on the temporary file, which the rename then puts in place (a rename
    # keeps the file's security descriptor): the final file is never unprotected.
    target = Path(argv[0])
    assert target.parent == path.parent
    assert target.name.startswith(".values-") and target.name.endswith(".tmp")
    assert argv[1:] == ["/inheritance:r", "/grant:r", f"{principal}:F"]
    assert listing(path.parent) == {"values.yaml"}


@CHILD_WITHOUT_SYSTEMROOT
def test_windows_acl_comes_before_any_byte_is_written(tmp_path: Path) -> None:
    # A shim of our own: it records how many bytes the file held when icacls was called.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = tmp_path / "icacls.json"
    make_executable(
        bindir / "icacls.exe",
        "import json, os, sys\n"
        f"with open({str(record)!r}, 'a') as log:\n"
        "    log.write(json.dumps({'argv': sys.argv[1:], 'size': os.path.getsize(sys.argv[1])})"
        " + '\\n')\n",
    )
    path = tmp_path / "data" / "values.yaml"
    path.parent.mkdir()
    path.write_bytes(OLD)
    write_values(str(path), NEW, env={"PATH": str(bindir), **WINDOWS_ENV}, os_="windows")
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    # Two writes (the .bak, then the file), each restricted while still empty.
    assert [call["size"] for call in calls] == [0, 0]
    assert all(call["argv"][1:] == ["/inheritance:r", "/grant:r", "CORP\\ana:F"] for call in calls)
    assert path.read_bytes() == NEW
    assert (path.parent / "values.yaml.bak").read_bytes() == OLD


@pytest.mark.parametrize("previous", [OLD, None], ids=["previous-file", "fresh"])
@CHILD_WITHOUT_SYSTEMROOT
def test_windows_icacls_failure_aborts_and_keeps_the_old_file(
    cluster: FakeCluster, tmp_path: Path, previous: bytes | None
) -> None:
    cluster.install("icacls.exe")
    cluster.on(
        "icacls.exe",
        stderr="values.yaml: Access is denied.\n"
        "Successfully processed 0 files; Failed processing 1 files\n",
        rc=5,
    )
    path = tmp_path / "data" / "values.yaml"
    path.parent.mkdir()
    if previous is not None:
        path.write_bytes(previous)
    with pytest.raises(InstallerError) as caught:
        write_values(str(path), NEW, env=windows_env(cluster), os_="windows")
    assert "CORP\\ana" in caught.value.message
    assert "exit 5" in caught.value.message
    assert "nothing was written" in caught.value.remedy
    assert len(cluster.calls("icacls.exe")) == 1
    if previous is None:
        assert listing(path.parent) == set()
    else:
        assert path.read_bytes() == previous
        assert listing(path.parent) == {"values.yaml"}


def test_windows_without_icacls_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_bytes(OLD)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    with pytest.raises(InstallerError) as caught:
        write_values(str(path), NEW, env={"PATH": str(empty), **WINDOWS_ENV}, os_="windows")
    assert "icacls" in caught.value.message
    assert path.read_bytes() == OLD
    assert listing(tmp_path) == {"values.yaml", "empty-bin"}
