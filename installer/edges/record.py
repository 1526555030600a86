"""The install record on disk (decide/record.py): written atomically and owner-only in the
engine's data directory after a successful install, read back by the next run."""

from __future__ import annotations

import os
from collections.abc import Mapping

from installer.decide.errors import InstallerError
from installer.decide.record import RECORD_FILE, Record, dump, parse
from installer.edges import files
from installer.edges.valuesfile import write_private

MAX_RECORD_BYTES = 64 * 1024


def path_in(data_dir: str) -> str:
    return os.path.join(data_dir, RECORD_FILE)


def write(record: Record, *, env: Mapping[str, str], os_: str) -> str:
    where = path_in(record.data_dir)
    write_private(where, dump(record), env=env, os_=os_)
    return where


def read(data_dir: str) -> tuple[Record | None, str]:
    """(the record, "") or (None, why it is not used); ("", "") when there is none."""
    if not os.path.isdir(data_dir):
        return None, ""  # no data directory (yet): the command says what is wrong with it
    where = path_in(data_dir)
    try:
        data = files.read_bounded(where, limit=MAX_RECORD_BYTES, what="the install record")
    except InstallerError as exc:
        return None, f"the install record {where} cannot be read: {exc.message}"
    if data is None:
        return None, ""
    try:
        return parse(data), ""
    except ValueError as exc:
        return None, f"the install record {where} is not used: {exc}"


def forget(data_dir: str, release: str, namespace: str) -> bool:
    """Remove the record when it names this release (uninstalled); True when it did."""
    found, _ = read(data_dir)
    if found is None or (found.release, found.namespace) != (release, namespace):
        return False
    try:
        os.unlink(path_in(data_dir))
    except OSError:
        return False
    return True
