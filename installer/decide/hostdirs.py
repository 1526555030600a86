"""Rules for the host directories, checked before anything changes. Pure.

HOST_DATA_DIR must be a local directory under the user's home, not the home itself or a
system directory (its subdirectories are made world-writable; InnoDB corrupts on network
storage). HOST_DATASET_DIR may be a network mount: it must exist, be writable, not system.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from installer.decide.errors import BadInput

POSIX_SYSTEM_DIRS = (
    "/etc",
    "/usr",
    "/var",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
)
NETWORK_FS = frozenset(
    "nfs nfs3 nfs4 nfsd cifs smb smbfs smb2 smb3 afpfs 9p ncpfs gfs gfs2 ocfs2 lustre "
    "glusterfs ceph beegfs sshfs s3fs gcsfuse blobfuse blobfuse2 davfs webdav rclone "
    "network".split()
)
ALLOW = "TRACEBLOC_ALLOW_NETWORK_FS"


@dataclass(frozen=True)
class DirFacts:
    given: str  # as the user wrote it
    path: str  # absolute, ~ expanded, symlinks of the existing part resolved
    exists: bool
    parent_exists: bool
    writable: bool  # the directory, or its parent when it is still to be created
    fstype: str | None  # None: could not be read (assumed local)
    link_to: str | None = None  # the directory itself is a symbolic link (or junction) to this


def _under(path: str, root: str, windows: bool) -> bool:
    join = ntpath if windows else posixpath
    a, b = (join.normcase(path), join.normcase(root)) if windows else (path, root)
    b = b.rstrip("\\/")
    return a == b or a.startswith(b + ("\\" if windows else "/"))


def storage_kind(fstype: str | None) -> str | None:
    """ "network", "FUSE" or None (local, or not known)."""
    if not fstype:
        return None
    name = fstype.lower()
    if name.removeprefix("fuse.") in NETWORK_FS:
        return "network"
    if name.startswith("fuse") or name in ("macfuse", "osxfuse", "osxfusefs"):
        return "FUSE"
    return None


def system_dir(path: str, system_dirs: Sequence[str], windows: bool) -> str | None:
    return next((d for d in system_dirs if d and _under(path, d, windows)), None)


def shown_as(facts: DirFacts, variable: str) -> str:
    """How an error names the directory: `variable` is where the path came from
    (HOST_DATA_DIR; HOME/USERPROFILE when the default under the home directory is used; or
    a description such as "the directory typed"), so the error names what the user set."""
    if variable in ("HOST_DATA_DIR", "--data-dir"):
        return f"{variable}={facts.given!r}"
    if variable in ("HOME", "USERPROFILE"):
        return f"{variable}: the default data directory {facts.given!r}"
    return f"{variable} {facts.given!r}"


def check_place(
    facts: DirFacts,
    home: str,
    system_dirs: Sequence[str],
    *,
    windows: bool,
    variable: str = "HOST_DATA_DIR",
) -> None:
    """Where a data directory may be, for every use of it (install, plan, the leftover
    prompt, uninstall --delete-data): BadInput for the first rule broken."""
    shown = shown_as(facts, variable)
    if facts.link_to is not None:
        # A link is refused: followed, the checks and the install could see different paths.
        raise BadInput(
            f"{shown} is a symbolic link to {facts.link_to}",
            choose_another(variable, f"{facts.link_to} itself")
            + ", or replace the link with a directory",
        )
    if facts.path.rstrip("\\/") in ("", "/") or (windows and len(facts.path.rstrip("\\/")) <= 2):
        raise BadInput(f"{shown} is the root of a filesystem", _where_instead(home, variable))
    found = system_dir(facts.path, system_dirs, windows)
    if found:
        raise BadInput(
            f"{shown} is inside the system directory {found}", _where_instead(home, variable)
        )
    if not _under(facts.path, home, windows):
        raise BadInput(
            f"{shown} is not under your home directory {home}", _where_instead(home, variable)
        )
    if _under(home, facts.path, windows):
        raise BadInput(
            f"{shown} is your home directory itself, or holds it; the install "
            "would make its data subdirectories writable for the cluster",
            _where_instead(home, variable),
        )


def check_data_dir(
    facts: DirFacts,
    home: str,
    system_dirs: Sequence[str],
    *,
    windows: bool,
    allow_network: bool,
    variable: str = "HOST_DATA_DIR",
) -> list[str]:
    """Raise BadInput for the first rule broken; return warnings (network storage allowed)."""
    shown = shown_as(facts, variable)
    check_place(facts, home, system_dirs, windows=windows, variable=variable)
    if not facts.exists and not facts.parent_exists:
        raise BadInput(
            f"{shown} does not exist, and neither does the directory it would be created in",
            "create the parent directory first, or choose another",
        )
    if not facts.writable:
        what = (
            "is not writable by you"
            if facts.exists
            else "cannot be created: its parent is not writable by you"
        )
        raise BadInput(f"{shown} {what}", "fix its permissions, or choose a directory you own")
    kind = storage_kind(facts.fstype)
    if kind is None:
        return []
    said = f"{shown} is on a {kind} filesystem ({facts.fstype}): the client database corrupts or crash-loops there"
    if allow_network:
        return [f"{said}; going on because {ALLOW} is set"]
    raise BadInput(
        said,
        "use a local directory under your home; HOST_DATASET_DIR may stay on "
        f"network storage; or set {ALLOW}=1 to go on anyway (not recommended)",
    )


def check_dataset_dir(
    facts: DirFacts, system_dirs: Sequence[str], *, windows: bool, storage_mode: str
) -> None:
    shown = f"HOST_DATASET_DIR={facts.given!r}"
    if storage_mode == "node-local":
        raise BadInput(
            f"{shown} cannot be used with TB_STORAGE_MODE=node-local: datasets would "
            "land inside the node, not on that directory",
            "use the default TB_STORAGE_MODE=hostpath with HOST_DATASET_DIR",
        )
    found = system_dir(facts.path, system_dirs, windows)
    if facts.path.rstrip("\\/") in ("", "/") or found:
        raise BadInput(
            f"{shown} is {'inside the system directory ' + found if found else 'the root'}",
            "choose the directory the dataset volume is mounted on",
        )
    if not facts.exists:
        raise BadInput(f"{shown} does not exist", "mount the dataset volume before installing")
    if not facts.writable:
        raise BadInput(f"{shown} is not writable by you", "check the mount's permissions")


def _where_instead(home: str, variable: str) -> str:
    return choose_another(variable, f"a directory under {home}") + (
        ", or leave it out for the default"
        if variable == "--data-dir"
        else ", or unset it for the default"
    )


def choose_another(variable: str, what: str) -> str:
    """The remedy's first words: the flag when the directory came from `--data-dir`, else
    the variable (the default under the home directory is changed by HOST_DATA_DIR too)."""
    return f"give --data-dir={what}" if variable == "--data-dir" else f"set HOST_DATA_DIR to {what}"
