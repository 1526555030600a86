"""What the local-cluster step found and decided, as one value `plan` shows and `install` acts on."""

from __future__ import annotations

from dataclasses import dataclass, field

from installer.decide.drift import DockerRead, Drift, Inspected
from installer.decide.localcluster import ClusterRead, Decision, Settings
from installer.decide.model import MachineFacts


@dataclass(frozen=True)
class Local:
    settings: Settings | None
    decision: Decision
    machine: MachineFacts
    docker: DockerRead | None = None
    cluster: ClusterRead | None = None
    inspected: Inspected | None = None
    drift: tuple[Drift, ...] = ()
    action: str | None = None
    gpu: bool = False
    leftovers: tuple[str, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()  # (message, remedy): why it cannot go on
    commands: tuple[tuple[str, ...], ...] = field(default_factory=tuple)

    @property
    def managed(self) -> bool:
        return self.decision.manage is True
