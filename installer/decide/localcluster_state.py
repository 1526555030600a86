"""What the local-cluster step found and decided, as one value `plan` shows and `install` acts on."""

from __future__ import annotations

from dataclasses import dataclass, field

from installer.decide.drift import DockerRead, Drift, Inspected
from installer.decide.localcluster import ClusterRead, Decision, Settings
from installer.decide.model import MachineFacts
from installer.decide.runtime import RuntimePlan, Step
from installer.decide.tooling import Tool, ToolChoice
from installer.decide.winhost import HostPlan

# What the local-cluster step does with the engine's k3d cluster (RECREATE: delete it, then
# create it as CREATE would; decide/gpucluster.py).
CREATE, START, ADOPT, RECREATE = "create", "start", "adopt", "recreate"


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
    gpu: bool = False  # the cluster has (or is created with) access to this machine's GPU
    gpu_notes: tuple[str, ...] = ()  # why not, or its shape for one GPU (decide/gpucluster.py)
    gpu_reason: str = ""  # why the pods get no GPU although this machine has one
    leftovers: tuple[str, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()  # (message, remedy): why it cannot go on
    commands: tuple[tuple[str, ...], ...] = field(default_factory=tuple)
    # What runs instead when Docker's GPU check fails after the question (listed too).
    fallback: tuple[tuple[str, ...], ...] = field(default_factory=tuple)
    k3d_choice: ToolChoice | None = None  # the k3d this survey resolved: the one bring_up runs
    runtime: RuntimePlan | None = None  # Docker to install or start first (commands/runtime.py)
    gpu_host: RuntimePlan | None = (
        None  # then this machine's NVIDIA GPU for Docker (decide/gpuhost.py)
    )
    windows: HostPlan | None = None  # Windows: WSL2 and Docker Desktop first (commands/winhost.py)
    boot: tuple[
        Step, ...
    ] = ()  # Docker answers already: its autostart, as this user (commands/runtime.py)

    @property
    def managed(self) -> bool:
        return self.decision.manage is True

    @property
    def k3d(self) -> Tool | None:
        choice = self.k3d_choice
        return choice.tool() if choice is not None and choice.ready else None

    @property
    def choices(self) -> dict[str, ToolChoice]:
        return {"k3d": self.k3d_choice} if self.k3d_choice is not None else {}


def leftover_said(action: str | None, data_dir: str, *, node_local: bool = False) -> str:
    """What becomes of an earlier client's data in `data_dir`, in the plan's words: the
    choice (--reuse-data / --wipe-data / TB_LEFTOVER_ACTION, or typed), or that none was
    given. A wipe is carried out only after the go-ahead."""
    if action == "reuse":
        kept = (
            "kept on disk, unused (node-local storage)"
            if node_local
            else "kept and used by the new cluster"
        )
        return f"{data_dir}: {kept} (your choice)"
    if action == "wipe":
        return (
            f"{data_dir}: deleted after the go-ahead, before the new cluster is created "
            "(your choice)"
        )
    return (
        f"{data_dir}: no choice given; install asks before its plan (reuse, wipe or "
        "another directory), and under --yes stops (--reuse-data, --wipe-data or "
        "--data-dir)"
    )
