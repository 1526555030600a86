"""Carrying out the local cluster's step once the one question was answered: `k3d cluster
create` (a partial cluster removed on failure, timeout or interrupt), `start`, the kubeconfig
merge anchored to 127.0.0.1, the API wait with install's own kubectl, and the release's host
directories. commands/localcluster.py decides what to do; this does it."""

from __future__ import annotations

import contextlib
import ntpath
import os
import posixpath
from collections.abc import Mapping

from installer.decide import localcluster as lc
from installer.decide.errors import BadInput, InstallerError, ToolTimeout
from installer.decide.localcluster_state import Local
from installer.decide.model import KubeTarget, NodeRead
from installer.decide.redact import Redactor
from installer.decide.render import to_yaml
from installer.decide.settings import PlanConfig
from installer.decide.tooling import Tool
from installer.edges import childio, datadir, docker, k3d, kubeconfig, poll, proc
from installer.edges.call import Caller
from installer.edges.valuesfile import write_private
from installer.present.ui import Ui

API_POLL_S = 2.0  # between looks at a new cluster's API (each look bounded to 10s)


def proxy_config_path(s: lc.Settings, data_dir: str, windows: bool) -> str:
    return (ntpath.join if windows else posixpath.join)(data_dir, ".k3d", f"{s.name}-proxy.yaml")


def files_for(
    s: lc.Settings, data_dir: str, env: Mapping[str, str], windows: bool
) -> lc.CreateFiles:
    join = ntpath.join if windows else posixpath.join
    folder = join(data_dir, ".k3d")
    return lc.CreateFiles(
        proxy_config=proxy_config_path(s, data_dir, windows) if lc.proxy_config(s.proxy) else None,
        registries=join(folder, f"{s.name}-registries.yaml") if s.ca_bundle else None,
    )


def ca_path(s: lc.Settings) -> str | None:
    if not s.ca_bundle:
        return None
    path = os.path.abspath(os.path.expanduser(s.ca_bundle))
    if not os.path.isfile(path):
        raise BadInput(
            f"{s.ca_variable}={s.ca_bundle!r} is not a file",
            "point it at your corporate CA bundle (PEM), or unset it",
        )
    return path


_X509 = ("x509", "certificate signed by unknown authority", "tls: failed to verify")


def exec_args(s: lc.Settings, release: str) -> list[str]:
    dirs = lc.node_release_dirs(release, dataset=bool(s.dataset_dir))
    return ["exec", s.server0, "sh", "-c", lc.chmod_script(dirs)]


class Runner:
    def __init__(
        self, env: Mapping[str, str], redactor: Redactor, os_: str, k3d_tool: Tool | None = None
    ) -> None:
        self.env, self.redactor, self.os = env, redactor, os_
        self._k3d = k3d_tool

    def k3d_tool(self) -> Tool:
        if self._k3d is None:  # the survey resolved none: it reported that as a problem
            raise InstallerError(
                "k3d was not resolved for this run",
                "this is a bug in tracebloc-installer; please report it",
            )
        return self._k3d

    def k3d(self, args: list[str], timeout: float, doing: str) -> proc.Result:
        tool = self.k3d_tool()
        try:
            return Caller(self.env, self.redactor).run(tool, args, timeout=timeout)
        except ToolTimeout as exc:
            exc.remedy = f"{doing} took longer than {timeout:g}s; check that Docker is healthy"
            raise

    def docker(self, args: list[str], timeout: float) -> proc.Result:
        return Caller(self.env, self.redactor).run(
            docker.find_docker(self.env, self.os), args, timeout=timeout
        )


def create(
    local: Local, cfg: PlanConfig, env: Mapping[str, str], ui: Ui, run: Runner, os_: str
) -> None:
    s = local.settings
    assert s is not None
    data_dir = cfg.host_data_dir
    datadir.ensure_traversable(data_dir)
    files = files_for(s, data_dir, env, os_ == "windows")
    ca = ca_path(s)
    documents = (
        (files.proxy_config, lc.proxy_config(s.proxy)),
        (files.registries, lc.registries_config() if ca else None),
    )
    # A killed run's proxy config (password and all) goes first, proxy or not.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(proxy_config_path(s, data_dir, os_ == "windows"))
    written: list[str] = []
    try:
        for path, doc in documents:
            if path and doc:
                # Owner-only and atomic: the proxy configuration may hold a password.
                write_private(path, to_yaml(doc), env=env, os_=os_)
                written.append(path)
        args = lc.create_args(s, data_dir, gpu=local.gpu, files=files, ca_path=ca)
        deadline = s.create_timeout_s + lc.CREATE_BACKSTOP_S
        try:
            with ui.step(f"Creating the local cluster {s.name} (first run downloads its images)"):
                result = run.k3d(args, deadline, "creating the cluster")
        except KeyboardInterrupt as exc:
            # Interrupted mid-create: what k3d made is this run's own, so it goes.
            removed = remove_partial(s, ui, run)
            said = (
                f"the partially created cluster {s.name} was removed"
                if removed
                else f"the partially created cluster {s.name} may remain: run "
                f"`k3d cluster delete {s.name}` before running the installer again"
            )
            exc.remedy = said  # type: ignore[attr-defined]  # the handler in cli prints it
            raise
        except ToolTimeout as exc:
            remove_partial(s, ui, run)
            raise InstallerError(
                f"creating the local cluster {s.name} did not finish within {deadline / 60:g} "
                "minutes and was stopped; the partial cluster was removed",
                x509_hint(exc.output, os_)
                or "check that Docker is healthy and this machine "
                "can pull images, then run again (TB_CREATE_TIMEOUT_MIN raises the bound)",
            ) from None
    finally:
        for path in written:
            try:
                os.unlink(path)
            except OSError:
                pass
    if result.rc != 0:
        said = result.stderr + result.stdout
        if "already exists" in said:
            # Absent when read: another install made it meanwhile, so it is left alone.
            raise InstallerError(
                f"k3d says a cluster named {s.name} already exists (it was absent when this "
                "run looked: another install may have made it meanwhile); it was left as it is",
                "run the installer again: it reads the cluster as it now is",
            )
        after = k3d.read_cluster(
            run.k3d_tool(), s.name, env=env, timeout=cfg.probe.timeout, redactor=run.redactor
        )
        if after.present:
            remove_partial(s, ui, run)
        raise InstallerError(
            f"k3d could not create the cluster {s.name}: "
            f"{childio.last_line(result.stderr or result.stdout, result.rc)}",
            x509_hint(said, os_) or "see the log file for k3d's output",
        )


def delete(s: lc.Settings, ui: Ui, run: Runner) -> None:
    """A recreate's first step, as listed (decide/gpucluster.py): the engine's own cluster,
    made without GPU access and holding no release, goes; HOST_DATA_DIR is not touched."""
    with ui.step(f"Deleting the local cluster {s.name} (its data under HOST_DATA_DIR is kept)"):
        result = run.k3d(lc.delete_args(s), lc.DELETE_TIMEOUT_S, "deleting the cluster")
    if result.rc != 0:
        raise InstallerError(
            f"k3d could not delete the cluster {s.name}: "
            f"{childio.last_line(result.stderr, result.rc)}",
            f"check `k3d cluster list` and `docker ps -a`; `k3d cluster delete {s.name}`, then "
            "run the installer again (its data under HOST_DATA_DIR is kept)",
        )


def remove_partial(s: lc.Settings, ui: Ui, run: Runner) -> bool:
    """Delete the cluster this run's own create left half-made; False (and said) when not."""
    try:
        with ui.step(f"Removing the partially created cluster {s.name}"):
            result = run.k3d(lc.delete_args(s), lc.DELETE_TIMEOUT_S, "removing the cluster")
        if result.rc == 0:
            return True
    except InstallerError:
        pass
    ui.warn(
        f"could not remove the partial cluster: run `k3d cluster delete {s.name}` before "
        "running the installer again"
    )
    return False


def x509_hint(output: str, os_: str) -> str:
    if not any(marker in output.lower() for marker in _X509):
        return ""
    where = (
        "add the CA to the system trust store (update-ca-certificates / update-ca-trust), "
        "then restart Docker"
        if os_ == "linux"
        else "add the CA to the system's trusted roots, then restart Docker Desktop"
    )
    return (
        "Docker could not verify TLS while pulling k3d's images (x509): the Docker daemon "
        f"itself must trust your corporate CA; {where}"
    )


def merge(s: lc.Settings, env: Mapping[str, str], ui: Ui, run: Runner, os_: str) -> None:
    command = "k3d " + " ".join(lc.merge_args(s))
    try:
        result = run.k3d(lc.merge_args(s), lc.MERGE_TIMEOUT_S, "merging the kubeconfig")
    except ToolTimeout:
        result = None
    if result is None or result.rc != 0:
        said = childio.last_line(result.stderr, result.rc) if result else "timed out"
        raise InstallerError(
            f"could not point kubectl at the cluster {s.name} ({said}); "
            "stopping rather than install into another cluster",
            f"fix the kubeconfig (is it writable?), then run: {command}",
        )
    try:
        fixed = kubeconfig.anchor(env, os_, s.context)
    except (OSError, ValueError) as exc:
        ui.warn(f"could not anchor the kubeconfig's server address to 127.0.0.1: {exc}")
    else:
        if fixed:
            ui.detail(f"kubeconfig: {s.context} now reaches the API at {fixed}")
    context = kubeconfig.read_context(env, os_)
    if context.context != s.context:
        raise InstallerError(
            f"after merging, the current kube context is {context.context or 'unreadable'}, "
            f"not {s.context}; stopping rather than install into another cluster",
            f"run: kubectl config use-context {s.context}, then run the installer again",
        )


def wait_for_api(
    s: lc.Settings, env: Mapping[str, str], ui: Ui, redactor: Redactor, tool: Tool
) -> None:
    def answers() -> bool:
        try:
            return (
                proc.run(tool, lc.api_wait_args(), timeout=10, env=env, redactor=redactor).rc == 0
            )
        except ToolTimeout:
            return False

    with ui.step("Waiting for the cluster's API"):
        if poll.until(answers, s.api_wait_s, API_POLL_S, at_deadline=False).done:
            return
    raise InstallerError(
        f"the cluster {s.name} runs but its API did not answer within {s.api_wait_s:g}s",
        "check `docker ps`; on a slow or proxied machine "
        "raise TB_API_WAIT_S; running the installer again is safe",
    )


def release_dirs(
    local: Local,
    cfg: PlanConfig,
    release: str,
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    os_: str,
    target: KubeTarget | None = None,
    nodes: NodeRead | None = None,
) -> None:
    """The release's hostPath directories, with their modes, before the first pod: whenever
    the cluster runs on this machine, the engine's own or one named with --context /
    --kubeconfig (`target`, read: positive evidence that it is local, never a guess)."""
    s = local.settings
    here = lc.host_dirs_here(local.managed, target, nodes, cfg.storage_mode)
    if not here or cfg.storage_mode != "hostpath":
        return
    dataset = s.dataset_dir if s is not None else cfg.host_dataset_dir
    dirs = lc.release_dirs(cfg.host_data_dir, dataset, release, windows=os_ == "windows")
    try:
        unset = datadir.make_dirs(dirs)
    except OSError as exc:
        raise InstallerError(
            f"could not create the data directories of {release}: {exc}",
            "check the permissions of HOST_DATA_DIR",
        ) from None
    if unset:
        ui.warn(
            f"could not set the mode of {', '.join(unset)}; the first data ingest may "
            "fail with 'Permission denied'"
        )
    if os_ == "windows" and local.managed and s is not None:
        # Windows cannot hold POSIX modes: they are set inside the node.
        run = Runner(env, redactor, os_)
        try:
            result = run.docker(exec_args(s, release), 60)
            ok = result.rc == 0
        except InstallerError:
            ok = False
        if not ok:
            ui.warn(
                "could not make the data directories writable inside the cluster; fix: "
                "docker "
                + " ".join(exec_args(s, release)[:3])
                + f' sh -c "{exec_args(s, release)[-1]}"'
            )
