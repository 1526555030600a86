"""HOST_DATA_DIR and HOST_DATASET_DIR are checked before anything changes (issue 10, req 6)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from installer.decide.errors import BadInput
from installer.decide.hostdirs import DirFacts, check_data_dir, storage_kind
from installer.edges import hostdirs

SYSTEM = ("/etc", "/usr", "/var")


def facts(
    path: str,
    *,
    exists: bool = True,
    parent: bool = True,
    writable: bool = True,
    fstype: str | None = "ext4",
) -> DirFacts:
    return DirFacts(path, path, exists, parent, writable, fstype)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        pytest.param(facts("/home/ana"), "your home directory itself", id="home-itself"),
        pytest.param(facts("/srv/tb"), "not under your home directory", id="outside-home"),
        pytest.param(facts("/etc/tb"), "inside the system directory /etc", id="system-dir"),
        pytest.param(facts("/"), "root of a filesystem", id="root"),
        pytest.param(
            facts("/home/ana/a/b", exists=False, parent=False),
            "does not exist",
            id="missing-parent-is-its-own-error-not-zero-gib-free",
        ),
        pytest.param(
            facts("/home/ana/.tb", writable=False), "is not writable by you", id="not-writable"
        ),
        pytest.param(facts("/home/ana/.tb", fstype="nfs4"), "network filesystem (nfs4)", id="nfs"),
        pytest.param(facts("/home/ana/.tb", fstype="fuse.sshfs"), "network filesystem", id="sshfs"),
        pytest.param(facts("/home/ana/.tb", fstype="fuseblk"), "FUSE filesystem", id="opaque-fuse"),
    ],
)
def test_data_dir_rules_refuse_before_anything_changes(data: DirFacts, said: str) -> None:
    with pytest.raises(BadInput) as caught:
        check_data_dir(data, "/home/ana", SYSTEM, windows=False, allow_network=False)
    assert said in caught.value.message
    assert caught.value.exit_code == 2


def test_network_storage_allowed_by_the_scripts_variable_warns() -> None:
    warned = check_data_dir(
        facts("/home/ana/.tb", fstype="cifs"),
        "/home/ana",
        SYSTEM,
        windows=False,
        allow_network=True,
    )
    assert len(warned) == 1 and "TRACEBLOC_ALLOW_NETWORK_FS" in warned[0]


@pytest.mark.parametrize(
    ("data", "windows"),
    [
        pytest.param(facts("/home/ana/.tracebloc"), False, id="default"),
        pytest.param(facts("/home/ana/new", exists=False), False, id="created-by-the-install"),
        pytest.param(facts(r"C:\Users\Ana\.tracebloc", fstype="NTFS"), True, id="windows-any-case"),
    ],
)
def test_data_dir_under_home_on_local_disk_passes(data: DirFacts, windows: bool) -> None:
    home = r"C:\users\ana" if windows else "/home/ana"
    system = (r"C:\Windows",) if windows else SYSTEM
    assert check_data_dir(data, home, system, windows=windows, allow_network=False) == []


@pytest.mark.parametrize(
    ("fstype", "kind"),
    [
        ("ext4", None),
        ("apfs", None),
        ("nfs", "network"),
        ("fuse.rclone", "network"),
        ("fuse", "FUSE"),
        ("macfuse", "FUSE"),
        ("network", "network"),
        (None, None),
    ],
)
def test_storage_kind(fstype: str | None, kind: str | None) -> None:
    assert storage_kind(fstype) == kind


def test_the_real_filesystem_is_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "USERPROFILE": str(home)}
    os_ = "windows" if sys.platform == "win32" else "linux"
    assert hostdirs.check(env, os_, str(home / ".tracebloc"), None, "hostpath") == []
    with pytest.raises(BadInput, match="does not exist"):
        hostdirs.check(env, os_, str(home / "no" / "such"), None, "hostpath")
    with pytest.raises(BadInput, match="HOST_DATASET_DIR.*does not exist"):
        hostdirs.check(env, os_, str(home / ".tb"), str(tmp_path / "absent"), "hostpath")
    with pytest.raises(BadInput, match="node-local"):
        hostdirs.check(env, os_, str(home / ".tb"), str(tmp_path), "node-local")


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="POSIX permissions; root writes anywhere"
)
def test_an_unwritable_data_dir_is_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".tb").mkdir(parents=True)
    (home / ".tb").chmod(0o500)
    try:
        with pytest.raises(BadInput, match="not writable"):
            hostdirs.check({"HOME": str(home)}, "linux", str(home / ".tb"), None, "hostpath")
    finally:
        (home / ".tb").chmod(0o700)
