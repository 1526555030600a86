"""Every place the engine keeps something, computed once from the environment. Pure.

The home, the data directory (values file, install.log, bundles, its lock), the tools cache
and the release locks are derived here and nowhere else; nothing touches the disk.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from installer.decide.errors import BadInput

DATA_DIR_VARIABLE = "HOST_DATA_DIR"
DATA_DIR_FLAG = "--data-dir"  # the scripts' flag; the command line turns it into HOST_DATA_DIR
TOOLS_DIR_VARIABLE = "TRACEBLOC_TOOLS_DIR"
LOG_FILE = "install.log"
LOCK_FILE = "install.lock"
VALUES_FILE = "values.yaml"


def home_variable(os_: str) -> str:
    return "USERPROFILE" if os_ == "windows" else "HOME"


def _home(env: Mapping[str, str], os_: str) -> str:
    return (env.get("USERPROFILE") if os_ == "windows" else env.get("HOME")) or ""


def home_dir(env: Mapping[str, str], os_: str) -> str:
    home = _home(env, os_)
    if not home:
        raise BadInput(
            f"{home_variable(os_)} is not set, so there is no default data directory",
            f"set {DATA_DIR_VARIABLE} to the directory the values file should live in",
        )
    return home


def absolute_path(given: str, env: Mapping[str, str], os_: str, what: str) -> str:
    """`given` with a leading `~` made the home directory; a path that is still relative is
    BadInput. A relative path would be checked against one directory and used in another
    (the current one), so it is never guessed at. `what` is the variable or flag named."""
    path = ntpath if os_ == "windows" else posixpath
    text = given
    if text == "~" or text.startswith(("~/", "~\\") if os_ == "windows" else "~/"):
        text = home_dir(env, os_) + text[1:]
    if not path.isabs(text) or (os_ == "windows" and not path.splitdrive(text)[0]):
        shown = f"{what} {given!r}" if " " in what else f"{what}={given!r}"
        raise BadInput(
            f"{shown} is not an absolute path",
            "give a full path (~ is your home directory), such as ~/tracebloc-data",
        )
    return path.normpath(text)


def data_dir_source(env: Mapping[str, str], os_: str, *, from_flag: bool = False) -> str:
    """What to name when the data directory is refused: the flag or the variable it was given
    by, else the home variable its default lives under."""
    if env.get(DATA_DIR_VARIABLE, "").strip():
        return DATA_DIR_FLAG if from_flag else DATA_DIR_VARIABLE
    return home_variable(os_)


def data_dir(env: Mapping[str, str], os_: str, *, from_flag: bool = False) -> str:
    """HOST_DATA_DIR (or --data-dir), else ~/.tracebloc."""
    join = ntpath.join if os_ == "windows" else posixpath.join
    given = env.get(DATA_DIR_VARIABLE, "").strip()
    if given:
        return absolute_path(given, env, os_, data_dir_source(env, os_, from_flag=from_flag))
    return join(home_dir(env, os_), ".tracebloc")


def default_tools_dir(env: Mapping[str, str], os_: str) -> str:
    """The per-user cache of downloaded tools when TRACEBLOC_TOOLS_DIR is not set:
    ~/.tracebloc/bin, on Windows %LOCALAPPDATA%\\tracebloc\\bin."""
    if os_ == "windows":
        base = env.get("LOCALAPPDATA", "").strip()
        if not base and env.get("USERPROFILE", "").strip():
            base = ntpath.join(env["USERPROFILE"].strip(), "AppData", "Local")
        if base:
            return ntpath.join(base, "tracebloc", "bin")
    elif env.get("HOME", "").strip():
        return posixpath.join(env["HOME"].strip(), ".tracebloc", "bin")
    raise BadInput(
        "there is no home directory for the downloaded tools",
        f"set {TOOLS_DIR_VARIABLE} to a directory you can write to",
    )


def locks_dir(env: Mapping[str, str], os_: str, data_dir: str) -> str:
    """Where release locks live: the user's home (shared by every data directory), or the
    data directory when no home is set."""
    home = _home(env, os_).strip()
    join = ntpath.join if os_ == "windows" else posixpath.join
    return join(home, ".tracebloc", "locks") if home else data_dir


@dataclass(frozen=True)
class Paths:
    home: str | None
    data_dir: str
    data_dir_source: str  # the flag or variable an error about the data directory names
    log_file: str
    data_lock: str
    locks_dir: str
    # The default tools cache (None without a home); TRACEBLOC_TOOLS_DIR replaces it.
    tools_cache: str | None = None


def paths(env: Mapping[str, str], os_: str, *, data_dir_from_flag: bool = False) -> Paths:
    """Every location, or BadInput naming the variable (or flag) that makes one unusable."""
    join = ntpath.join if os_ == "windows" else posixpath.join
    where = data_dir(env, os_, from_flag=data_dir_from_flag)
    return Paths(
        home=_home(env, os_) or None,
        data_dir=where,
        data_dir_source=data_dir_source(env, os_, from_flag=data_dir_from_flag),
        log_file=join(where, LOG_FILE),
        data_lock=join(where, LOCK_FILE),
        locks_dir=locks_dir(env, os_, where),
        tools_cache=_or_none(default_tools_dir, env, os_),
    )


def _or_none(
    compute: Callable[[Mapping[str, str], str], str], env: Mapping[str, str], os_: str
) -> str | None:
    try:
        return compute(env, os_)
    except BadInput:
        return None


def kubeconfig_listed(env: Mapping[str, str], os_: str) -> list[str]:
    """The files KUBECONFIG lists, in order (kubectl's list semantics: `:`, on Windows `;`),
    blank entries dropped; [] when it lists none (edges/kubeconfig: ~/.kube/config)."""
    separator = ";" if os_ == "windows" else ":"
    return [p.strip() for p in env.get("KUBECONFIG", "").split(separator) if p.strip()]
