"""Every change `install` makes outside the engine's own data directory, in order, each with
its exact argv: what the one question is asked about, and what `plan` shows. Pure.
Downloads into the tools directory are listed apart: they may happen before the question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from installer.decide import remedy
from installer.decide.localcluster_state import START
from installer.decide.model import Connection
from installer.decide.placement import PluginSet
from installer.decide.runtime import NEW_SUFFIX
from installer.edges import helm
from installer.edges.cluster import adopt_args

if TYPE_CHECKING:
    from installer.decide.localcluster_state import Local
    from installer.decide.tooling import ToolChoice


@dataclass(frozen=True)
class Change:
    argv: tuple[str, ...]
    why: str  # what it changes, in words

    def line(self) -> str:
        return f"{remedy.command(self.argv)}  ({self.why})"


def _local_why(argv: Sequence[str], local: Local) -> str:
    verb = tuple(argv[:3])
    if verb == ("k3d", "cluster", "delete"):
        return (
            "deletes the local cluster made without GPU access, to create it again with the "
            "GPU; its data under HOST_DATA_DIR is kept"
        )
    if verb == ("k3d", "cluster", "create"):
        return "creates the local cluster: Docker containers, a network and volumes"
    if verb == ("k3d", "cluster", "start") and local.action != START:
        return "starts the local cluster again if Docker's restart stopped it"
    if verb == ("k3d", "cluster", "start"):
        return "starts the stopped local cluster"
    if tuple(argv[:2]) == ("docker", "update"):
        return "the cluster's containers restart with Docker after a reboot"
    if tuple(argv[:3]) == ("k3d", "kubeconfig", "merge"):
        return (
            "adds the cluster to your kubeconfig, points its server at 127.0.0.1 and "
            "makes it the current kube context"
        )
    if tuple(argv[:2]) == ("docker", "exec"):
        return "makes the data directories writable inside the cluster"
    return "the local cluster"


def host_changes(local: Local) -> list[Change]:
    """The container runtime's steps (Linux, macOS: decide/runtime.py) or the Windows host's
    (decide/winhost.py), before the cluster's: each privileged one says so."""
    out: list[Change] = []
    for plan in (local.runtime, local.gpu_host):  # Docker first, then the GPU for Docker
        if plan is None:
            continue
        for step in plan.steps:
            prefix = ("sudo", "-n") if step.root and not plan.as_root else ()
            who = "as administrator: " if step.root else ""
            if step.guard == "ours" and step.kind in ("stage", "fetch"):
                # What runs: the write beside the file, then one rename over it.
                dest = step.argv[-1]
                new = dest + NEW_SUFFIX
                out.append(Change((*prefix, *step.argv[:-1], new), who + step.why))
                out.append(Change((*prefix, "mv", "-f", new, dest), who + "put it in place"))
                continue
            out.append(Change((*prefix, *step.argv), who + step.why))
    for step in local.boot:
        out.append(Change(step.argv, step.why))
    if local.windows is not None:
        for wstep in local.windows.steps:
            why = (
                "as administrator (one Windows prompt): " if wstep.privileged else ""
            ) + wstep.title
            out.append(Change(wstep.argv or ("(the engine writes it)",), why))
    return out


def changes(
    *,
    local: Local | None,
    release: str,
    namespace: str,
    chart: str,
    values_path: str,
    conn: Connection,
    repo: tuple[str, str] | None,
    set_context_namespace: bool,
    ca_file: str | None = None,
    recovery: str | None = None,
    adopt: PluginSet | None = None,
) -> list[Change]:
    """In install's order. `repo` (name, URL) None: a chart directory, no repository is added;
    `recovery` the helm verb that recovers a wedged release; `adopt` the orphaned device
    plugin that becomes the release's."""
    out: list[Change] = []
    if local is not None and local.managed:
        out += host_changes(local)
        out += [Change(tuple(argv), _local_why(argv, local)) for argv in local.commands]
        out += [
            Change(argv, f"only if Docker's GPU check fails, instead: {_local_why(argv, local)}")
            for argv in local.fallback
        ]
    if recovery is not None:
        build = helm.rollback_args if recovery == "rollback" else helm.uninstall_args
        out.append(
            Change(
                ("helm", *build(release, namespace, conn)), f"recovers the wedged release {release}"
            )
        )
    if repo is not None:
        out.append(
            Change(
                ("helm", *helm.repo_add_args(repo[0], repo[1], ca_file)),
                "adds the chart repository to helm's settings, if absent",
            )
        )
    if adopt is not None:
        out += [
            Change(("kubectl", *args), "the orphaned NVIDIA device plugin becomes the release's")
            for args in adopt_args(adopt, release, namespace, conn)
        ]
    out.append(
        Change(
            ("helm", *helm.upgrade_install_args(release, chart, namespace, values_path, conn)),
            f"installs or upgrades the client; creates namespace {namespace} if absent",
        )
    )
    if set_context_namespace:
        target = [conn.context] if conn.context else ["--current"]
        out.append(
            Change(
                (
                    "kubectl",
                    "config",
                    "set-context",
                    *target,
                    "--namespace",
                    namespace,
                    *(["--kubeconfig", conn.kubeconfig] if conn.kubeconfig else []),
                ),
                f"kubectl defaults to namespace {namespace}",
            )
        )
    return out


def downloads(choices: Mapping[str, ToolChoice]) -> list[str]:
    """The tools this run downloads (or did) into the engine's tools directory."""
    return [
        f"{c.name} {c.version} from {c.url} (sha256 {c.sha256}) to {c.path}"
        for c in choices.values()
        if c.source == "download"
    ]


def text(found: Sequence[Change], fetched: Sequence[str] = ()) -> list[str]:
    lines = [f"  {i}. {change.line()}" for i, change in enumerate(found, 1)]
    lines += [f"  downloaded into the engine's tools directory: {line}" for line in fetched]
    return lines
