"""What `status` found: the release's row, its values, the nodes and the workloads, and the
problems they add up to. Pure data; `commands/status.py` reads it, `present/health.py` prints it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from installer.decide.model import Installed, ListRead, NodeRead, ReleaseRead, ReleaseState
from installer.decide.readiness import DefinedRead, Snapshot, SnapshotRead, health_problems
from installer.decide.resolve import carried_choice


@dataclass(frozen=True)
class Status:
    release: str
    namespace: str
    tools: Mapping[str, str | None]
    tool_problems: Mapping[str, str]
    row: Installed | None  # the release as `helm list` shows it; None when absent
    listed: ListRead
    values: ReleaseRead
    nodes: NodeRead
    workloads: SnapshotRead
    defined: DefinedRead = DefinedRead(None, "not read")

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
        return self.row.chart[len(name) + 1 :] if self.row.chart != name else None

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
        elif not self.snapshot.workloads and self.defined.workloads is None:
            if self.state != "absent":
                out.append(f"release {self.release} has no workloads in namespace {self.namespace}")
        elif self.state != "absent":
            out += health_problems(self.snapshot, self.defined)
        return out

    @property
    def healthy(self) -> bool:
        return not self.problems
