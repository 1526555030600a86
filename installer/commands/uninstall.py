"""`uninstall`: remove the client's release; keep its data unless told, and confirmed.

survey (reads only) → what will be removed and kept → the caller confirms → `helm uninstall
--wait` → with --delete-data: the release's PVCs and the data directory → with
--delete-cluster: the local k3d cluster (CLUSTER_NAME), only when this engine created it —
the runtime label it puts on the cluster's nodes. Nothing is removed on a guess: a release
that cannot be read, a data directory that does not look like ours, or a cluster Docker
cannot vouch for stops the run before anything changes.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from installer.config import ProbeConfig
from installer.decide import localcluster as lc
from installer.decide import remedy
from installer.decide.errors import InstallerError, Refused, ToolTimeout
from installer.decide.model import os_name
from installer.edges import helm, k3d, proc, volumes, workloads
from installer.present.redact import Redactor

HELM_TIMEOUT_S = 330.0  # helm's own --timeout 5m, plus time to start and report
PVC_TIMEOUT_S = 120.0
STOP_GRACE_S = 10.0
K3D_DELETE_TIMEOUT_S = 180.0
OUR_FILES = ("values.yaml", "install.log")  # evidence that a directory is our data directory


@dataclass(frozen=True)
class Survey:
    release: str
    namespace: str
    row: helm.Installed | None  # None: no such release
    pvcs: tuple[str, ...]
    pvc_reason: str  # why the claims could not be listed ("" when they were)
    data_dir: str
    data_dir_exists: bool
    cluster: str | None  # the local cluster to delete (only with --delete-cluster)
    volumes: tuple[str, ...] = ()  # the release's PersistentVolumes (edges/volumes.py)


@dataclass(frozen=True)
class Options:
    delete_data: bool
    delete_cluster: bool


@dataclass(frozen=True)
class Tools:
    helm: proc.Tool
    kubectl: proc.Tool | None
    k3d: proc.Tool | None
    env: Mapping[str, str]
    redactor: Redactor

    def run(self, tool: proc.Tool, args: list[str], timeout: float,
            grace: float = 0.0) -> proc.Result:  # fmt: skip
        return proc.run(tool, args, timeout=timeout, env=self.env, redactor=self.redactor,
                        grace=grace)  # fmt: skip


def find(env: Mapping[str, str], redactor: Redactor, options: Options) -> Tools:
    """The tools, as install finds them but never downloaded: removing needs nothing new."""
    from installer.commands.localcluster import find_k3d

    kubectl = _found("kubectl", env) if options.delete_data else _maybe("kubectl", env)
    k3d_tool = find_k3d(env, fetch=False) if options.delete_cluster else None
    return Tools(_found("helm", env), kubectl, k3d_tool, env, redactor)


def _found(name: str, env: Mapping[str, str]) -> proc.Tool:
    from installer.commands.tools import resolve_tool

    return resolve_tool(name, env).tool()


def _maybe(name: str, env: Mapping[str, str]) -> proc.Tool | None:
    try:
        return _found(name, env)
    except InstallerError:
        return None


def survey(cfg: ProbeConfig, tools: Tools, data_dir: str, options: Options) -> Survey:
    release, namespace, conn = cfg.release, cfg.namespace, cfg.conn
    result = tools.run(tools.helm, helm.release_list_args(release, namespace, conn), cfg.timeout)
    listing = helm.parse_list(result.rc, result.out, result.err)
    if not listing.readable:
        raise Refused(f"cannot see whether release {release} is installed: {listing.reason}",
                      "nothing was changed; check that the cluster is reachable")  # fmt: skip
    row = next((r for r in listing.releases if r.name == release), None)
    if row is not None and not row.is_client:
        raise Refused(f"release {release} in namespace {namespace} is chart {row.chart}, not "
                      "the tracebloc client", "nothing was changed")  # fmt: skip
    pvcs: tuple[str, ...] = ()
    reason = "kubectl was not found"
    if tools.kubectl is not None:
        pvcs, reason = _claims(tools, tools.kubectl, release, namespace, cfg)
    if options.delete_data and reason:
        raise Refused(f"cannot list the release's volume claims: {reason}",
                      "nothing was changed")  # fmt: skip
    pvs: tuple[str, ...] = ()
    if tools.kubectl is not None:
        pvs, why = volumes.read_volumes(_runner(tools, tools.kubectl), release, namespace, conn,
                                        cfg.timeout)  # fmt: skip
        if why and options.delete_data:
            raise Refused(f"cannot list the release's volumes: {why}", "nothing was changed")
    exists = os.path.isdir(data_dir)
    if options.delete_data and exists and not _looks_like_ours(data_dir):
        raise Refused(f"{data_dir} does not look like a tracebloc data directory (it is a "
                      f"home or root directory, or holds no {' or '.join(OUR_FILES)}): it is "
                      "not deleted",
                      "nothing was changed; set HOST_DATA_DIR to the data directory")  # fmt: skip
    cluster = _cluster(tools, cfg.timeout) if options.delete_cluster else None
    return Survey(release, namespace, row, pvcs, reason, data_dir, exists, cluster, pvs)


def _runner(tools: Tools, tool: proc.Tool) -> volumes.Run:
    return lambda args, timeout: tools.run(tool, args, timeout)


def _claims(tools: Tools, kubectl: proc.Tool, release: str, namespace: str,
            cfg: ProbeConfig) -> tuple[tuple[str, ...], str]:  # fmt: skip
    try:
        result = tools.run(kubectl, workloads.pvc_args(namespace, cfg.conn, cfg.timeout),
                           cfg.timeout)  # fmt: skip
    except InstallerError as exc:
        return (), exc.message
    if result.rc != 0:
        return (), proc.last_line(result.stderr, result.rc)
    try:
        return workloads.parse_pvcs(result.out, release, namespace), ""
    except ValueError as exc:
        return (), str(exc)


def _looks_like_ours(path: str) -> bool:
    """Positive evidence only: our files inside, and neither a home nor a filesystem root
    (a HOST_DATA_DIR pointed at either would otherwise take everything with it)."""
    real = os.path.realpath(path)
    if real == os.path.realpath(os.path.expanduser("~")) or real == os.path.dirname(real):
        return False
    return any(os.path.exists(os.path.join(path, name)) for name in OUR_FILES)


def _cluster(tools: Tools, timeout: float) -> str:
    from installer.commands.localcluster import created_by_engine_check

    name = lc.settings(tools.env).name
    if tools.k3d is None:  # `find` requires k3d whenever --delete-cluster is given
        raise InstallerError("k3d was not found", "install k3d, or name it with TRACEBLOC_K3D")
    seen = k3d.read_cluster(tools.k3d, name, env=tools.env, timeout=timeout,
                            redactor=tools.redactor)  # fmt: skip
    if not seen.readable:
        raise Refused(f"--delete-cluster: k3d could not list its clusters: {seen.reason}",
                      "nothing was changed")  # fmt: skip
    if not seen.present:
        raise Refused(f"--delete-cluster: there is no local k3d cluster {name}",
                      "nothing was changed; run again without --delete-cluster")  # fmt: skip
    created = created_by_engine_check(tools.env, os_name(sys.platform), name, timeout)
    if created is not True:
        why = ("Docker could not say who created it" if created is None
               else "tracebloc-installer did not create it")  # fmt: skip
        raise Refused(f"--delete-cluster: the local cluster {name} is kept: {why}",
                      f"nothing was changed; to remove it anyway: k3d cluster delete {name}")  # fmt: skip
    return name


def plan(s: Survey, options: Options) -> tuple[list[str], list[str]]:
    """(what will be removed, what will be kept), in words."""
    remove: list[str] = []
    keep: list[str] = []
    if s.row is not None:
        remove.append(f"helm release {s.release} in namespace {s.namespace} "
                      f"(chart {s.row.chart}, {s.row.status})")  # fmt: skip
    claims = ", ".join(s.pvcs) if s.pvcs else "none found"
    if s.pvc_reason:
        claims = f"not listed: {s.pvc_reason}"
    (remove if options.delete_data else keep).append(
        f"volume claims of the release in namespace {s.namespace}: {claims}")
    if options.delete_data:
        remove.append(f"volumes of the release: {', '.join(s.volumes) or 'none found'}")
    elif s.volumes and s.row is not None:
        # helm deletes the chart's volumes, but a volume bound to a kept claim stays
        # (Terminating, by pv-protection) until that claim is deleted.
        keep.append(f"volumes of the release: {', '.join(s.volumes)} (helm deletes them; each "
                    "stays, Terminating, while its kept claim holds it, and a later install "
                    "adopts it)")  # fmt: skip
    if s.data_dir_exists:
        (remove if options.delete_data else keep).append(f"data directory {s.data_dir}")
    if s.cluster:
        remove.append(f"local k3d cluster {s.cluster} (created by tracebloc-installer)")
    return remove, keep


def execute(s: Survey, tools: Tools, cfg: ProbeConfig, options: Options) -> list[str]:
    """Remove what `plan` listed; returns what was done. Stops at the first failure."""
    done: list[str] = []
    if s.row is not None:
        args = volumes.uninstall_args(s.release, s.namespace, cfg.conn)  # no wait on volumes
        check = "check: " + remedy.helm(["status", s.release], cfg.conn, s.namespace)
        try:
            result = tools.run(tools.helm, args, HELM_TIMEOUT_S, grace=STOP_GRACE_S)
        except ToolTimeout:
            raise InstallerError("helm uninstall did not finish in time (its hooks) and was "
                                 "stopped", check) from None  # fmt: skip
        if result.rc != 0:
            raise InstallerError(f"helm uninstall failed: {proc.last_line(result.stderr, result.rc)}",
                                 check)  # fmt: skip
        done.append(f"removed helm release {s.release}")
    if options.delete_data and tools.kubectl is not None:
        run = _runner(tools, tools.kubectl)
        volumes.delete(run, volumes.CLAIMS, s.pvcs, s.namespace, cfg.conn, timeout=PVC_TIMEOUT_S,
                       read_timeout=cfg.timeout)  # fmt: skip
        if s.pvcs:
            done.append(f"deleted volume claims {', '.join(s.pvcs)}")
        volumes.delete(run, volumes.VOLUMES, s.volumes, None, cfg.conn, timeout=PVC_TIMEOUT_S,
                       read_timeout=cfg.timeout)  # fmt: skip
        if s.volumes:
            done.append(f"deleted volumes {', '.join(s.volumes)}")
    if options.delete_data and s.data_dir_exists:
        left = remove_tree(s.data_dir)
        if left:
            raise InstallerError(f"could not delete all of {s.data_dir}: {left}",
                                 "files written by containers may belong to another user; "
                                 "remove the directory as that user or an administrator")  # fmt: skip
        done.append(f"deleted data directory {s.data_dir}")
    if s.cluster and tools.k3d is not None:
        settings = lc.settings(tools.env)
        result = tools.run(tools.k3d, lc.delete_args(settings), K3D_DELETE_TIMEOUT_S)
        if result.rc != 0:
            raise InstallerError(f"k3d cluster delete failed: {proc.last_line(result.stderr, result.rc)}",
                                 f"delete it by hand: k3d cluster delete {s.cluster}")  # fmt: skip
        done.append(f"deleted local k3d cluster {s.cluster}")
    return done


def remove_tree(path: str) -> str:
    """Delete `path`; returns the first thing that could not be deleted ("" when all went)."""
    failures: list[str] = []

    def retry_writable(function: object, name: str, error: object) -> None:
        # Windows refuses to delete read-only files: make it writable and try once more.
        try:
            os.chmod(name, stat.S_IWRITE | stat.S_IREAD)
            (os.rmdir if os.path.isdir(name) else os.unlink)(name)
        except OSError as exc:
            failures.append(f"{name}: {exc.strerror or exc}")

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry_writable)
    else:  # onerror is deprecated from 3.12 on
        shutil.rmtree(path, onerror=retry_writable)
    return failures[0] if failures else ""
