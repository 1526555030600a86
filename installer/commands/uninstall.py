"""`uninstall`: remove the client's release; keep its data unless told, and confirmed.

With --delete-data also its PVCs and data directory; with --delete-cluster the local k3d
cluster, only when this engine created it. What cannot be read or vouched for stops the run
before any change (decide/deletion.py decides); the whole run holds install's lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from installer.decide import deletion, locality
from installer.decide import localcluster as lc
from installer.decide.errors import BadInput, InstallerError, Refused
from installer.decide.model import Installed, KubeTarget, os_name
from installer.decide.redact import Redactor
from installer.decide.settings import ProbeConfig
from installer.decide.tooling import Tool
from installer.edges import (
    datadir,
    helm,
    hostdirs,
    k3d,
    kubectl,
    lock,
    proc,
    volumes,
    workloads,
)
from installer.edges.call import Caller, NoAnswer, reason

OUR_FILES = ("values.yaml", "install.log")  # evidence that a directory is our data directory


@dataclass(frozen=True)
class Survey:
    release: str
    namespace: str
    row: Installed | None  # None: no such release
    pvcs: tuple[str, ...]
    pvc_reason: str  # why the claims could not be listed ("" when they were)
    data_dir: str
    data_dir_exists: bool
    cluster: str | None  # the local cluster to delete (only with --delete-cluster)
    data: deletion.DataPlan | None = None  # with --delete-data: names inside data_dir
    sizes: Mapping[str, int | None] = dataclasses.field(default_factory=dict)
    target: KubeTarget | None = None  # the kube context and API server acted on
    volumes: tuple[str, ...] = ()  # the release's PersistentVolumes (edges/volumes.py)
    # With --delete-data: what is shown is pinned (edges/datadir.py) and only that is deleted.
    shown: datadir.Shown | None = None


@dataclass(frozen=True)
class Options:
    delete_data: bool
    delete_cluster: bool


@dataclass(frozen=True)
class Tools:
    helm: Tool
    kubectl: Tool | None
    k3d: Tool | None
    env: Mapping[str, str]
    redactor: Redactor

    @property
    def caller(self) -> Caller:
        return Caller(self.env, self.redactor)

    def run(self, tool: Tool, args: list[str], timeout: float, grace: float = 0.0) -> proc.Result:
        return self.caller.run(tool, args, timeout=timeout, grace=grace)


def find(env: Mapping[str, str], redactor: Redactor, options: Options) -> Tools:
    """The tools, as install finds them but never downloaded: removing needs nothing new."""
    from installer.commands.localcluster_survey import find_k3d

    kubectl = _found("kubectl", env) if options.delete_data else _maybe("kubectl", env)
    k3d_tool = find_k3d(env, fetch=False) if options.delete_cluster else None
    return Tools(_found("helm", env), kubectl, k3d_tool, env, redactor)


def _found(name: str, env: Mapping[str, str]) -> Tool:
    from installer.commands.tools import resolve_tool

    return resolve_tool(name, env).tool()


def _maybe(name: str, env: Mapping[str, str]) -> Tool | None:
    try:
        return _found(name, env)
    except InstallerError:
        return None


def survey(cfg: ProbeConfig, tools: Tools, data_dir: str, options: Options) -> Survey:
    release, namespace, conn = cfg.release, cfg.namespace, cfg.conn
    result = tools.run(tools.helm, helm.release_list_args(release, namespace, conn), cfg.timeout)
    listing = helm.parse_list(result.rc, result.out, result.err)
    if not listing.readable:
        raise Refused(
            f"cannot see whether release {release} is installed: {listing.reason}",
            "nothing was changed; check that the cluster is reachable",
        )
    row = next((r for r in listing.releases if r.name == release), None)
    if row is not None and not row.is_client:
        raise Refused(
            f"release {release} in namespace {namespace} is chart {row.chart}, not "
            "the tracebloc client",
            "nothing was changed",
        )
    if row is None and options.delete_data:
        raise Refused(
            f"release {release} is not installed in namespace {namespace}: "
            f"--delete-data deletes nothing; {_seen(cfg, tools)}",
            "nothing was changed; name the client's namespace with -n",
        )
    target = kubectl.read_target(
        tools.kubectl, conn, timeout=cfg.timeout, env=tools.env, redactor=tools.redactor
    )
    if options.delete_cluster:
        _local_target(target, conn.context or "")
    pvcs: tuple[str, ...] = ()
    reason = "kubectl was not found"
    if tools.kubectl is not None:
        pvcs, reason = _claims(tools, tools.kubectl, release, namespace, cfg)
    if options.delete_data and reason:
        raise Refused(f"cannot list the release's volume claims: {reason}", "nothing was changed")
    pvs: tuple[str, ...] = ()
    if tools.kubectl is not None:
        pvs, why = volumes.read_volumes(
            runner(tools, tools.kubectl), release, namespace, conn, cfg.timeout
        )
        if why and options.delete_data:
            raise Refused(f"cannot list the release's volumes: {why}", "nothing was changed")
    exists = os.path.lexists(data_dir)
    data: deletion.DataPlan | None = None
    sizes: dict[str, int | None] = {}
    shown: datadir.Shown | None = None
    if options.delete_data and exists:
        # install's rules: never home, its ancestor, a system path or a link; checked = deleted.
        data_dir = hostdirs.check_place(tools.env, os_name(sys.platform), data_dir)
        if not _looks_like_ours(data_dir):
            raise Refused(
                f"{data_dir} does not look like a tracebloc data directory (it "
                f"holds no {' or '.join(OUR_FILES)}): it is not deleted",
                "nothing was changed; set HOST_DATA_DIR to the data directory",
            )
        try:
            data = deletion.data_to_delete(datadir.entries(data_dir), release)
        except OSError as exc:
            raise Refused(
                f"cannot list the data directory {data_dir}: {exc.strerror or exc}",
                "nothing was changed",
            ) from None
        sizes = {name: datadir.size_of(os.path.join(data_dir, name)) for name in data.delete}
        try:
            shown = datadir.shown(data_dir, [os.path.join(data_dir, n) for n in data.delete])
        except datadir.Changed as exc:
            raise Refused(f"{exc}", "nothing was changed") from None
    cluster = _cluster(tools, cfg.timeout) if options.delete_cluster else None
    return Survey(
        release,
        namespace,
        row,
        pvcs,
        reason,
        data_dir,
        exists,
        cluster,
        data,
        sizes,
        target,
        pvs,
        shown,
    )


def _seen(cfg: ProbeConfig, tools: Tools) -> str:
    """The client releases in every namespace, to say where the data may belong instead."""
    result = tools.caller.answer(tools.helm, helm.list_args(cfg.conn), timeout=cfg.timeout)
    if isinstance(result, NoAnswer):
        return f"other namespaces could not be listed: {result.reason}"
    listing = helm.parse_list(result.rc, result.out, result.err)
    if not listing.readable:
        return f"other namespaces could not be listed: {listing.reason}"
    return deletion.client_releases(
        [(r.name, r.namespace) for r in listing.releases if r.is_client]
    )


def pinned(cfg: ProbeConfig, env: Mapping[str, str], options: Options) -> ProbeConfig:
    """With --delete-cluster every read and removal goes to that cluster's own context,
    never to whatever context is current (which may be production)."""
    if not options.delete_cluster:
        return cfg
    own = lc.settings(env).context
    if cfg.conn.context and cfg.conn.context != own:
        raise BadInput(
            f"--delete-cluster deletes the local cluster of context {own}; "
            f"--context {cfg.conn.context} names another",
            f"drop --context, or give --context {own}",
        )
    return dataclasses.replace(cfg, conn=dataclasses.replace(cfg.conn, context=own))


def _local_target(target: KubeTarget, context: str) -> None:
    if not target.readable:
        raise Refused(
            f"--delete-cluster: the kube context {context} cannot be read: {target.reason}",
            "nothing was changed; run: k3d kubeconfig merge "
            f"{context.removeprefix('k3d-')} --kubeconfig-merge-default",
        )
    # Deleting needs the address itself to reach this machine (a k3d name alone is not
    # enough), and the one decision not to see a cloud cluster behind it (a tunnel).
    where = locality.where(target)
    if not locality.server_here(target.server) or where.local is not True:
        why = where.evidence if where.local is not True else "not an address of this machine"
        raise Refused(
            f"--delete-cluster: the kube context {context} points at "
            f"{target.server or 'no server'}, not shown to be this machine "
            f"({why}): it is not known to be the engine's local cluster",
            "nothing was changed",
        )


@contextlib.contextmanager
def locked(
    env: Mapping[str, str], data_dir: str, cfg: ProbeConfig, options: Options
) -> Iterator[None]:
    """Install's own locks: the release's, and the data directory's when its data is to be
    deleted. An install running now makes this refuse, naming who holds the lock."""
    paths = [lock.release_lock(env, data_dir, cfg.namespace, cfg.release)]
    if options.delete_data and os.path.isdir(data_dir) and not os.path.islink(data_dir):
        paths.insert(0, lock.data_dir_lock(data_dir))
    if options.delete_cluster:  # an install making or adopting it now keeps it
        paths.append(lock.cluster_lock(env, data_dir, lc.settings(env).name))
    what = f"uninstall of release {cfg.release} in namespace {cfg.namespace}"
    with lock.hold(paths, what=what):
        yield


def target_lines(s: Survey) -> list[str]:
    """Which cluster, as install's confirmation names it."""
    t = s.target
    context = (
        f"{t.context} (API server {t.server or 'unknown'})"
        if t is not None and t.readable
        else f"unknown ({t.reason if t is not None else 'not read'})"
    )
    return [f"kube context:   {context}", f"namespace:      {s.namespace} (release {s.release})"]


def runner(tools: Tools, tool: Tool) -> volumes.Run:
    return lambda args, timeout: tools.run(tool, args, timeout)


def _claims(
    tools: Tools, kubectl: Tool, release: str, namespace: str, cfg: ProbeConfig
) -> tuple[tuple[str, ...], str]:
    result = tools.caller.answer(
        kubectl, workloads.pvc_args(namespace, cfg.conn, cfg.timeout), timeout=cfg.timeout
    )
    if isinstance(result, NoAnswer):
        return (), result.reason
    if result.rc != 0:
        return (), reason(result)
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
    seen = k3d.read_cluster(
        tools.k3d, name, env=tools.env, timeout=timeout, redactor=tools.redactor
    )
    if not seen.readable:
        raise Refused(
            f"--delete-cluster: k3d could not list its clusters: {seen.reason}",
            "nothing was changed",
        )
    if not seen.present:
        raise Refused(
            f"--delete-cluster: there is no local k3d cluster {name}",
            "nothing was changed; run again without --delete-cluster",
        )
    created = created_by_engine_check(tools.env, os_name(sys.platform), name, timeout)
    if created is not True:
        why = (
            "Docker could not say who created it"
            if created is None
            else "tracebloc-installer did not create it"
        )
        raise Refused(
            f"--delete-cluster: the local cluster {name} is kept: {why}",
            f"nothing was changed; to remove it anyway: k3d cluster delete {name}",
        )
    return name


def plan(s: Survey, options: Options) -> tuple[list[str], list[str]]:
    """(what will be removed, what will be kept), in words."""
    remove: list[str] = []
    keep: list[str] = []
    if s.row is not None:
        remove.append(
            f"helm release {s.release} in namespace {s.namespace} "
            f"(chart {s.row.chart}, {s.row.status})"
        )
    claims = ", ".join(s.pvcs) if s.pvcs else "none found"
    if s.pvc_reason:
        claims = f"not listed: {s.pvc_reason}"
    (remove if options.delete_data else keep).append(
        f"volume claims of the release in namespace {s.namespace}: {claims}"
    )
    if options.delete_data:
        remove.append(f"volumes of the release: {', '.join(s.volumes) or 'none found'}")
    elif s.volumes and s.row is not None:
        # A volume bound to a kept claim stays Terminating until that claim is deleted.
        keep.append(
            f"volumes of the release: {', '.join(s.volumes)} (helm deletes them; each "
            "stays, Terminating, while its kept claim holds it, and a later install "
            "adopts it)"
        )
    if s.data is not None:
        remove += [
            f"{os.path.join(s.data_dir, name)} ({deletion.size_text(s.sizes.get(name))})"
            for name in s.data.delete
        ]
        keep += [f"{os.path.join(s.data_dir, name)}: {why}" for name, why in s.data.keep]
    elif s.data_dir_exists:
        keep.append(f"data directory {s.data_dir}")
    if s.cluster:
        remove.append(f"local k3d cluster {s.cluster} (created by tracebloc-installer)")
    return remove, keep
