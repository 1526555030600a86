"""What `uninstall` removes, in the order its plan listed, stopping at the first failure:
the helm release, with --delete-data its volume claims, volumes and data (through the
directory as it was shown, never through a link) and the install record, then the local
cluster this engine created."""

from __future__ import annotations

import os
import shutil
import stat
import sys

from installer.commands.uninstall import Options, Survey, Tools, runner
from installer.decide import localcluster as lc
from installer.decide import remedy
from installer.decide.errors import InstallerError, ToolTimeout
from installer.decide.settings import ProbeConfig
from installer.edges import (
    childio,
    datadir,
    record,
    volumes,
)

HELM_TIMEOUT_S = 330.0  # helm's own --timeout 5m, plus time to start and report
PVC_TIMEOUT_S = 120.0
STOP_GRACE_S = 10.0
K3D_DELETE_TIMEOUT_S = 180.0


def execute(s: Survey, tools: Tools, cfg: ProbeConfig, options: Options) -> list[str]:
    """Remove what `plan` listed; returns what was done. Stops at the first failure."""
    from installer.commands.tools import typed_conn

    done: list[str] = []
    if s.row is not None:
        args = volumes.uninstall_args(s.release, s.namespace, cfg.conn)  # no wait on volumes
        conn = typed_conn(cfg.conn, tools.env, tools.helm.path, None)
        check = "check: " + remedy.helm(["status", s.release], conn, s.namespace)
        try:
            result = tools.run(tools.helm, args, HELM_TIMEOUT_S, grace=STOP_GRACE_S)
        except ToolTimeout:
            raise InstallerError(
                "helm uninstall did not finish in time (its hooks) and was stopped", check
            ) from None
        if result.rc != 0:
            raise InstallerError(
                f"helm uninstall failed: {childio.last_line(result.stderr, result.rc)}", check
            )
        done.append(f"removed helm release {s.release}")
    if options.delete_data and tools.kubectl is not None:
        run = runner(tools, tools.kubectl)
        volumes.delete(
            run,
            volumes.CLAIMS,
            s.pvcs,
            s.namespace,
            cfg.conn,
            timeout=PVC_TIMEOUT_S,
            read_timeout=cfg.timeout,
        )
        if s.pvcs:
            done.append(f"deleted volume claims {', '.join(s.pvcs)}")
        volumes.delete(
            run,
            volumes.VOLUMES,
            s.volumes,
            None,
            cfg.conn,
            timeout=PVC_TIMEOUT_S,
            read_timeout=cfg.timeout,
        )
        if s.volumes:
            done.append(f"deleted volumes {', '.join(s.volumes)}")
    if s.shown is not None and datadir.BY_FD:
        done += _delete_shown(s.shown)
    for name in s.data.delete if s.data is not None and not datadir.BY_FD else ():
        path = os.path.join(s.data_dir, name)
        left = (
            remove_tree(path) if os.path.isdir(path) and not os.path.islink(path) else _unlink(path)
        )
        if left:
            raise InstallerError(
                f"could not delete all of {path}: {left}",
                "files written by containers may belong to another user; "
                "remove the directory as that user or an administrator",
            )
        done.append(f"deleted {path}")
    # After the data: --delete-data may have deleted the record with the shared files.
    if s.row is not None and record.forget(s.data_dir, s.release, s.namespace):
        done.append(f"removed the install record {record.path_in(s.data_dir)}")
    if s.cluster and tools.k3d is not None:
        settings = lc.settings(tools.env)
        result = tools.run(tools.k3d, lc.delete_args(settings), K3D_DELETE_TIMEOUT_S)
        if result.rc != 0:
            raise InstallerError(
                f"k3d cluster delete failed: {childio.last_line(result.stderr, result.rc)}",
                f"delete it by hand: k3d cluster delete {s.cluster}",
            )
        done.append(f"deleted local k3d cluster {s.cluster}")
    return done


def _delete_shown(shown: datadir.Shown) -> list[str]:
    """The data entries shown, through the directory as it was when shown (POSIX)."""
    try:
        left = datadir.wipe(shown)
    except datadir.Changed as exc:
        raise InstallerError(
            f"{exc}: its data was not deleted", "look at the directory, then run uninstall again"
        ) from None
    if left:
        raise InstallerError(
            f"could not delete all of {', '.join(left)}",
            "files written by containers may belong to another user; "
            "remove the directory as that user or an administrator",
        )
    return [f"deleted {os.path.join(shown.data_dir, name)}" for name, _ in shown.leftovers]


def remove_tree(path: str) -> str:
    """Delete `path`; returns the first thing that could not be deleted ("" when all went)."""
    failures: list[str] = []

    def retry_writable(function: object, name: str, error: object) -> None:
        # Windows refuses read-only files: made writable once, never through a link.
        try:
            if os.path.islink(name):
                raise OSError(f"{error}")
            os.chmod(name, stat.S_IWRITE | stat.S_IREAD)
            (os.rmdir if os.path.isdir(name) else os.unlink)(name)
        except OSError as exc:
            failures.append(f"{name}: {exc.strerror or exc}")

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry_writable)
    else:  # onerror is deprecated from 3.12 on
        shutil.rmtree(path, onerror=retry_writable)
    return failures[0] if failures else ""


def _unlink(path: str) -> str:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return ""
