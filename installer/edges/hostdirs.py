"""Read the facts the host-directory rules need (decide/hostdirs.py) and apply them."""

from __future__ import annotations

import ntpath
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping

from installer.decide import hostdirs, paths
from installer.decide.errors import BadInput
from installer.decide.yesno import flag
from installer.edges.machine import filesystem_type


def _facts(given: str, home: str, *, relative_to_home: bool) -> hostdirs.DirFacts:
    path = os.path.expanduser(given) if given.startswith("~") else given
    if given.startswith("~") and home:
        path = home + given[1:]
    if not os.path.isabs(path):
        if not relative_to_home:
            raise BadInput(f"HOST_DATASET_DIR={given!r} is not an absolute path")
        path = os.path.join(home, path)
    path = os.path.abspath(path)
    exists = os.path.isdir(path)
    parent = os.path.dirname(path)
    parent_exists = os.path.isdir(parent)
    # Symlinks in the existing part are resolved, so a link into /etc is seen as /etc.
    resolved = (
        os.path.realpath(path)
        if exists
        else (
            os.path.join(os.path.realpath(parent), os.path.basename(path))
            if parent_exists
            else path
        )
    )
    probe = resolved if exists else os.path.dirname(resolved)
    writable = (exists or parent_exists) and os.access(probe, os.W_OK | os.X_OK)
    return hostdirs.DirFacts(
        given,
        resolved,
        exists,
        parent_exists,
        writable,
        filesystem_type(probe) if (exists or parent_exists) else None,
        link_to=_link_target(path),
    )


def _link_target(path: str) -> str | None:
    """Where `path` points when it is itself a symbolic link or a Windows junction (a
    dangling link included: it is still not a directory of ours)."""
    isjunction = getattr(os.path, "isjunction", None)  # Python 3.12+
    if os.path.islink(path) or (isjunction is not None and isjunction(path)):
        try:
            return os.path.realpath(path)
        except OSError:
            return "an unreadable target"
    return None


def _system_dirs(env: Mapping[str, str], windows: bool) -> tuple[str, ...]:
    if not windows:
        return hostdirs.POSIX_SYSTEM_DIRS
    root = env.get("SystemRoot") or env.get("SYSTEMROOT") or r"C:\Windows"
    return tuple(
        d
        for d in (
            root,
            env.get("ProgramFiles"),
            env.get("ProgramFiles(x86)"),
            env.get("ProgramData"),
        )
        if d
    )


def _home(env: Mapping[str, str], windows: bool) -> str:
    home = env.get("USERPROFILE", "") if windows else env.get("HOME", "")
    home = os.path.realpath(home) if home else home
    return ntpath.normpath(home) if windows else home


def check(
    env: Mapping[str, str],
    os_: str,
    data_dir: str,
    dataset_dir: str | None,
    storage_mode: str,
    *,
    variable: str | None = None,
) -> list[str]:
    """BadInput for a directory the install must not use; warnings otherwise. `variable`
    names where `data_dir` came from when it is not HOST_DATA_DIR or the default."""
    windows = os_ == "windows"
    home = _home(env, windows)
    system = _system_dirs(env, windows)
    allow = flag(env, "TRACEBLOC_ALLOW_NETWORK_FS")
    warnings = hostdirs.check_data_dir(
        _facts(data_dir, home, relative_to_home=True),
        home,
        system,
        windows=windows,
        allow_network=allow,
        variable=variable or variable_for(env, os_),
    )
    if dataset_dir:
        hostdirs.check_dataset_dir(
            _facts(dataset_dir, home, relative_to_home=False),
            system,
            windows=windows,
            storage_mode=storage_mode,
        )
    return warnings


def check_place(env: Mapping[str, str], os_: str, data_dir: str) -> str:
    """The place rules alone (not a link, not the home, a system path or outside the home),
    for a data directory that is about to be deleted from; returns its resolved path."""
    windows = os_ == "windows"
    home = _home(env, windows)
    facts = _facts(data_dir, home, relative_to_home=False)
    hostdirs.check_place(
        facts, home, _system_dirs(env, windows), windows=windows, variable=variable_for(env, os_)
    )
    return facts.path


def variable_for(env: Mapping[str, str], os_: str) -> str:
    """The variable the data directory came from, to name in an error."""
    return paths.data_dir_source(env, os_)


def check_writable(
    directory: str, env: Mapping[str, str], os_: str, variable: str | None = None
) -> None:
    """Create `directory` (owner-only) if missing and prove a file can be made in it: an
    install that cannot write its values file stops before anything in the cluster changes."""
    name = variable or variable_for(env, os_)
    given = name in ("HOST_DATA_DIR", "--data-dir")
    shown = directory if given else f"{directory} (the default under {name})"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".tracebloc-write-test-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise BadInput(
            f"{name}: cannot write to {shown}: {exc.strerror or exc}",
            "nothing was changed; " + hostdirs.choose_another(name, "a directory you can write to"),
        ) from None


def check_files(values_path: str, dirs: Iterable[str] = ()) -> None:
    """The data directory's files the install will replace and the directories whose modes it
    sets, refused before any change when unusable (a link, FIFO, device or wrong type)."""
    from installer.edges.files import refuse_special_target

    refuse_special_target(values_path, said="nothing was changed")
    for path in dirs:
        try:
            found = os.lstat(path)
        except OSError:
            continue  # absent: made by the install itself
        if stat.S_ISLNK(found.st_mode) or not stat.S_ISDIR(found.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(found.st_mode) else "not a directory"
            raise BadInput(
                f"{path} is {what}: the install would set its mode; nothing was changed",
                "remove it or move it aside, then run again",
            )
