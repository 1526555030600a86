"""`status`: is the client healthy? Reads only, all at once, each bounded.

The release's row (`helm list` of that one release: state and chart), its user values (the
training size and its provenance marker), the namespace's workloads (one `kubectl get`) and
the cluster's nodes. Healthy means: both tools found, the cluster answers, the release is
deployed, and every one of its workloads is rolled out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from installer.commands.probe import concurrently, find_tools
from installer.config import ProbeConfig
from installer.decide.errors import InstallerError
from installer.decide.model import NodeRead, ReleaseRead, ReleaseState
from installer.decide.readiness import Snapshot
from installer.decide.resolve import carried_choice
from installer.edges import helm, kubectl, proc, workloads
from installer.edges.machine import read_machine
from installer.present.redact import Redactor


@dataclass(frozen=True)
class Status:
    release: str
    namespace: str
    tools: Mapping[str, str | None]
    tool_problems: Mapping[str, str]
    row: helm.Installed | None  # the release as `helm list` shows it; None when absent
    listed: helm.ListRead
    values: ReleaseRead
    nodes: NodeRead
    workloads: workloads.SnapshotRead

    @property
    def state(self) -> str:
        """deployed, failed, pending-upgrade, … or absent / unreadable."""
        if not self.listed.readable:
            return "unreadable"
        return self.row.status if self.row is not None else "absent"

    @property
    def chart_version(self) -> str | None:
        if self.row is None:
            return None
        name = self.row.chart_name
        return self.row.chart[len(name) + 1:] if self.row.chart != name else None

    @property
    def training(self) -> tuple[str, str] | None:
        """(size, provenance) the release carries, when it carries a size."""
        if self.values.state is not ReleaseState.PRESENT:
            return None
        choice = carried_choice(self.values.values)
        return (choice[0], choice[1].value) if choice else None

    @property
    def snapshot(self) -> Snapshot | None:
        return self.workloads.snapshot

    @property
    def problems(self) -> list[str]:
        out = list(self.tool_problems.values())
        if not self.nodes.readable:
            out.append(f"the cluster does not answer: {self.nodes.reason}")
        if self.state == "unreadable":
            out.append(f"the release could not be read: {self.listed.reason}")
        elif self.state == "absent":
            out.append(f"no release {self.release} in namespace {self.namespace}")
        elif self.state != "deployed":
            out.append(f"release {self.release} is {self.state}")
        if self.snapshot is None:
            if self.nodes.readable:
                out.append(f"the workloads could not be read: {self.workloads.reason}")
        elif not self.snapshot.workloads:
            if self.state != "absent":
                out.append(f"release {self.release} has no workloads in namespace {self.namespace}")
        else:
            out += [f"{w.kind} {w.name} is not ready ({w.ready} of {w.desired})"
                    for w in self.snapshot.workloads if not w.rolled_out]  # fmt: skip
        return out

    @property
    def healthy(self) -> bool:
        return not self.problems


def gather_status(cfg: ProbeConfig, env: Mapping[str, str], redactor: Redactor) -> Status:
    found, choices, problems = find_tools(env, read_machine(env), cfg.timeout)
    # status never downloads: a tool only a download would bring is a problem, with its remedy.
    problems = {**problems, **{name: f"{choice.absent()}; {choice.where_to_get()}"
                               for name, choice in choices.items()
                               if name in found and choice.source == "download"}}  # fmt: skip
    helm_tool, kubectl_tool = found["helm"], found["kubectl"]
    release, namespace, conn, timeout = cfg.release, cfg.namespace, cfg.conn, cfg.timeout
    with concurrently(4) as pool:
        listed = pool.submit(_list_release, helm_tool, release, namespace, cfg, env, redactor)
        values = pool.submit(helm.read_release, helm_tool, release, namespace, conn,
                             timeout=timeout, env=env, redactor=redactor)  # fmt: skip
        nodes = pool.submit(kubectl.read_nodes, kubectl_tool, conn, timeout=timeout, env=env,
                            redactor=redactor)  # fmt: skip
        snapshot = pool.submit(workloads.read_snapshot, kubectl_tool, release, namespace, conn,
                               timeout=timeout, env=env, redactor=redactor)  # fmt: skip
        # Inside the pool: leaving it cancels whatever has not started yet.
        listing, values_read = listed.result(), values.result()
        nodes_read, snapshot_read = nodes.result(), snapshot.result()
    row = next((r for r in listing.releases if r.name == release and r.namespace == namespace),
               None)  # fmt: skip
    return Status(release, namespace, {k: t.path if t else None for k, t in found.items()},
                  problems, row, listing, values_read, nodes_read, snapshot_read)  # fmt: skip


def _list_release(
    tool: proc.Tool | None,
    release: str,
    namespace: str,
    cfg: ProbeConfig,
    env: Mapping[str, str],
    redactor: Redactor,
) -> helm.ListRead:
    if tool is None:
        return helm.ListRead(False, reason="helm was not found")
    try:
        result = proc.run(tool, helm.release_list_args(release, namespace, cfg.conn),
                          timeout=cfg.timeout, env=env, redactor=redactor)  # fmt: skip
    except InstallerError as exc:
        return helm.ListRead(False, reason=exc.message)
    return helm.parse_list(result.rc, result.out, result.err)
