"""The kubeconfig as kubectl merges it: which context is current, and the one rewrite the
engine makes (its own cluster's server anchored to 127.0.0.1). Read without kubectl; a file
that cannot be read or parsed makes the read unreadable, never "no context".
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import Any

from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import KubeTarget, exec_command
from installer.decide.paths import kubeconfig_listed
from installer.edges import files

# k3d (older versions, or a cluster created with --api-port 0.0.0.0:…) writes server URLs
# a corporate proxy intercepts; Docker Desktop on Windows may write host.docker.internal.
_UNANCHORED = ("https://0.0.0.0:", "https://host.docker.internal:")
_ANCHOR = "https://127.0.0.1:"


def paths(env: Mapping[str, str], os_: str) -> list[str]:
    """KUBECONFIG's files in order (kubectl's list semantics), else ~/.kube/config."""
    listed = kubeconfig_listed(env, os_)
    if listed:
        return [os.path.expanduser(p) for p in listed]
    home = env.get("USERPROFILE", "") if os_ == "windows" else env.get("HOME", "")
    return [os.path.join(home or os.path.expanduser("~"), ".kube", "config")]


# Kubeconfigs carry certificates and may list many clusters, but not this much.
MAX_KUBECONFIG_BYTES = 16 * 2**20


def _read(path: str) -> bytes | None:
    """The file's bytes (None when it does not exist), read like every file the engine reads
    (edges/files.py): a FIFO, a device or a huge file is bad input, never a hang."""
    try:
        return files.read_bounded(
            path,
            limit=MAX_KUBECONFIG_BYTES,
            what="a kubeconfig",
            remedy="fix KUBECONFIG (or --kubeconfig)",
        )
    except files.NotRegular as exc:
        raise BadInput(f"the kubeconfig {exc.message}", exc.remedy) from None


def _parse(path: str, data: bytes) -> dict[str, Any]:
    from installer.decide import yamldoc  # here: `probe` checks the files without YAML

    doc = yamldoc.load(data, f"the kubeconfig {path}")
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ValueError("not a kubeconfig mapping")
    return doc


def _load(path: str) -> dict[str, Any] | None:
    """The document, {} for an empty file, None when the file does not exist."""
    data = _read(path)
    return None if data is None else _parse(path, data)


def check_files(
    env: Mapping[str, str], os_: str, explicit: str | None = None, *, parse: bool = True
) -> None:
    """Before kubectl or helm: each kubeconfig is a regular file of sane size and, with `parse`,
    YAML neither too deep nor an alias bomb (BadInput). Merely invalid is left to the reads."""
    for path in [explicit] if explicit else paths(env, os_):
        try:
            data = _read(path)
        except files.Unreadable:
            continue
        if data is not None and parse:
            from installer.decide import yamldoc

            try:
                _parse(path, data)
            except yamldoc.UnsafeYaml:
                raise
            except (yamldoc.BadYaml, ValueError):
                continue


def _names(doc: dict[str, Any], key: str) -> dict[str, Any]:
    entries = doc.get(key)
    out: dict[str, Any] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            out.setdefault(entry["name"], entry.get(key[:-1]))
    return out


def read_context(env: Mapping[str, str], os_: str, named: str | None = None) -> KubeTarget:
    """The current context (or the one `named`) as kubectl would merge the files: readable
    with `context` "" when no file sets one (a fresh machine), `cluster` set only when its
    entry exists (a named context that does not exist has no server)."""
    from installer.decide import yamldoc

    current: str | None = None
    contexts: dict[str, Any] = {}
    clusters: dict[str, Any] = {}
    users: dict[str, Any] = {}
    for path in paths(env, os_):
        try:
            doc = _load(path)
        except yamldoc.UnsafeYaml:
            raise
        except (files.Unreadable, yamldoc.BadYaml, ValueError) as exc:
            reason = exc.message if isinstance(exc, InstallerError) else str(exc)
            return KubeTarget(False, reason=f"{path}: {reason}")
        if doc is None:
            continue
        value = doc.get("current-context")
        if current is None and isinstance(value, str) and value:
            current = value  # the first file that sets it wins, as in kubectl
        for name, entry in _names(doc, "contexts").items():
            contexts.setdefault(name, entry)
        for name, entry in _names(doc, "clusters").items():
            clusters.setdefault(name, entry)
        for name, entry in _names(doc, "users").items():
            users.setdefault(name, entry)
    if named is not None:
        current = named
    context = contexts.get(current) if current else None
    cluster = context.get("cluster") if isinstance(context, dict) else None
    user = context.get("user") if isinstance(context, dict) else None
    entry = clusters.get(cluster) if isinstance(cluster, str) else None
    server = entry.get("server") if isinstance(entry, dict) else None
    return KubeTarget(
        True,
        context=current or "",
        server=server if isinstance(server, str) else "",
        cluster=cluster if isinstance(cluster, str) and cluster in clusters else "",
        user=user if isinstance(user, str) else "",
        exec_command=exec_command(users.get(user) if isinstance(user, str) else None),
    )


def anchor(env: Mapping[str, str], os_: str, cluster: str) -> str | None:
    """Point `cluster`'s server at 127.0.0.1 in the file k3d merged into (the first of the
    list). Only that entry's URL is rewritten; the file is replaced atomically with its mode
    kept. Returns the rewritten URL, or None when nothing needed rewriting."""
    # A link (dotfile managers keep ~/.kube/config as one) stays a link: the file it points
    # at is the one rewritten, as kubectl does.
    path = os.path.realpath(paths(env, os_)[0])
    data = _read(path)
    doc = _parse(path, data) if data is not None else {}
    entry = _names(doc, "clusters").get(cluster)
    server = entry.get("server") if isinstance(entry, dict) else None
    if not isinstance(server, str) or not server.startswith(_UNANCHORED):
        return None
    fixed = _ANCHOR + server.split("://", 1)[1].split(":", 1)[1]
    text = (data or b"").decode("utf-8")
    # The exact URL, in `server:` lines only: other occurrences (CIDRs, comments) stay.
    lines = [
        line.replace(server, fixed) if line.strip().startswith("server:") else line
        for line in text.splitlines(keepends=True)
    ]
    _replace(path, "".join(lines))
    return fixed


def _replace(path: str, text: str) -> None:
    mode = os.stat(path).st_mode & 0o7777
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".kubeconfig-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
