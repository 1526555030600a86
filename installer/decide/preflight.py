"""Preflight: is this machine big enough to run the client? Pure: facts in, findings out.

`check` returns every finding; the caller prints them all and stops once if any `failed`.
Every "GB" here, `PF_*_GB` included, is a GiB: memory is configured and `free -g`/`df -BG`
print in GiB, so a GiB floor measures what the user set and sees.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from installer.decide.model import MachineFacts, NodeRead
from installer.decide.settings import Thresholds
from installer.decide.yesno import flag

GIB = 2**30
MIB = 2**20

# A VM given N GiB reports a little less, so a memory total this close to a floor passes.
VM_GRACE_BYTES = 512 * MIB

CPU_TRAINING = 4  # below this: a note that training wants more cores
DISK_WARN_GIB = 20  # below this: a warning that datasets and images fill the disk quickly
TRAINING_MEM_GIB = 16  # what training wants, quoted in the memory warning

Level = Literal["fail", "warn", "note"]


@dataclass(frozen=True)
class Finding:
    level: Level
    message: str  # one line: what was measured, and what is wanted


def skipped(env: Mapping[str, str]) -> bool:
    """`TRACEBLOC_SKIP_PREFLIGHT`, read by the one yes/no parser (decide/yesno.flag)."""
    return flag(env, "TRACEBLOC_SKIP_PREFLIGHT", False)


def check(
    machine: MachineFacts, disk_free_bytes: int | None, data_dir: str, limits: Thresholds
) -> list[Finding]:
    """Every finding about memory, CPU and disk; at most one per measurement, the most
    severe. Linux is where the client's cluster runs on this machine, so a floor there fails;
    on macOS/Windows the cluster lives in a VM whose size we do not see, so it warns."""
    return [
        *_memory(machine, limits),
        *_cpu(machine.cpu_count, limits),
        *_disk(machine.os, disk_free_bytes, data_dir, limits),
    ]


def failed(findings: Iterable[Finding]) -> bool:
    return any(f.level == "fail" for f in findings)


def _gib(value: float) -> str:
    return f"{value:g} GiB"


def _measured(n_bytes: int) -> str:
    # Rounded down, so 4.97 GiB reads "4.9 GiB" next to a 5 GiB floor, never "5.0 GiB".
    return f"{math.floor(n_bytes * 10 / GIB) / 10:.1f} GiB"


def _memory(machine: MachineFacts, limits: Thresholds) -> list[Finding]:
    linux = machine.os == "linux"
    docker = machine.budget == "docker"
    total = machine.memory_total_bytes
    what = "Docker's memory budget" if docker else "memory"
    findings = []
    under_floor = total + VM_GRACE_BYTES < limits.min_mem_gib * GIB
    if under_floor:
        # Docker's budget is what the pods get, on every OS: under the floor they OOM.
        findings.append(
            Finding(
                "fail" if linux or docker else "warn",
                f"{what}: {_measured(total)} total, the client needs at least "
                f"{_gib(limits.min_mem_gib)} (PF_MIN_MEM_GB lowers this floor)",
            )
        )
    elif total + VM_GRACE_BYTES < limits.warn_mem_gib * GIB:
        findings.append(
            Finding(
                "warn",
                f"{what}: {_measured(total)} total, below the recommended "
                f"{_gib(limits.warn_mem_gib)}; training wants about {TRAINING_MEM_GIB} GiB",
            )
        )
    if docker and total + VM_GRACE_BYTES < limits.warn_mem_gib * GIB:
        findings.append(Finding("note", _docker_memory_remedy(machine, limits, under_floor)))
    # Available memory matters only on Linux, and only when the total passes the floor.
    available = machine.memory_available_bytes
    if linux and not under_floor and available < limits.min_mem_gib * GIB:
        findings.append(
            Finding(
                "warn",
                f"memory: {_measured(available)} available of {_measured(total)}, below "
                f"{_gib(limits.min_mem_gib)}; other programs may leave the client too little",
            )
        )
    return findings


OS_RESERVE_GIB = 2  # memory the OS keeps for itself when Docker's VM is sized from the host


def _docker_memory_remedy(machine: MachineFacts, limits: Thresholds, under_floor: bool) -> str:
    """How to give Docker more memory, for this OS; or, when the host itself cannot give
    the floor and keep the OS its reserve, that no setting will."""
    host = machine.host_memory_bytes
    target = limits.warn_mem_gib if under_floor else TRAINING_MEM_GIB
    if host is not None and host / GIB - OS_RESERVE_GIB < limits.min_mem_gib:
        return (
            f"this machine has {_measured(host)} in all; the client needs "
            f"{_gib(limits.min_mem_gib)} for Docker plus ~{OS_RESERVE_GIB} GiB for the "
            "operating system: free memory or use a larger machine"
        )
    if host is not None:
        target = min(target, max(limits.min_mem_gib, math.floor(host / GIB) - OS_RESERVE_GIB))
    if machine.os == "linux":
        return (
            f"give Docker {_gib(target)}: on Linux its budget is the machine's memory or "
            "a VM/cgroup limit; raise that or free memory, then restart Docker"
        )
    if machine.os == "windows":
        # Docker Desktop on WSL 2 is sized by the [wsl2] section of the user's .wslconfig.
        return (
            f"give Docker {_gib(target)}: in %USERPROFILE%\\.wslconfig set [wsl2] "
            f"memory={target:g}GB, run `wsl --shutdown`, start Docker Desktop again, then "
            "run the installer again"
        )
    colima = (
        f" (colima: colima stop && colima start --memory {target:g})"
        if machine.os == "darwin"
        else ""
    )
    return (
        f"give Docker {_gib(target)}: Docker Desktop > Settings > Resources > Memory"
        f"{colima}, then run the installer again"
    )


def _cpu(count: int, limits: Thresholds) -> list[Finding]:
    if count < limits.min_cpu:
        return [
            Finding(
                "warn",
                f"CPU: {count} logical CPUs, the client wants at least "
                f"{limits.min_cpu} (PF_MIN_CPU lowers this floor)",
            )
        ]
    if count < CPU_TRAINING:
        return [
            Finding(
                "note",
                f"CPU: {count} logical CPUs; training runs faster with {CPU_TRAINING} or more",
            )
        ]
    return []


def _disk(os_: str, free: int | None, data_dir: str, limits: Thresholds) -> list[Finding]:
    if free is None:
        return [
            Finding(
                "warn",
                f"disk: could not measure the free space for {data_dir}; "
                f"the client wants at least {_gib(limits.min_disk_gib)} "
                f"there",
            )
        ]
    if free < limits.min_disk_gib * GIB:
        return [
            Finding(
                "fail" if os_ == "linux" else "warn",
                f"disk: {_measured(free)} free for {data_dir}, the client needs at least "
                f"{_gib(limits.min_disk_gib)} (PF_MIN_DISK_GB lowers this floor)",
            )
        ]
    if free < DISK_WARN_GIB * GIB:
        return [
            Finding(
                "warn",
                f"disk: {_measured(free)} free for {data_dir}, below the "
                f"recommended {DISK_WARN_GIB} GiB",
            )
        ]
    return []


def docker_root(os_: str, free: int | None, root_dir: str, limits: Thresholds) -> list[Finding]:
    """Docker's data root (`docker info`'s DockerRootDir), where the images and the
    cluster's containers land: measured too when it is another filesystem than the data
    directory. Linux only: elsewhere it is inside Docker's VM. Unmeasurable: nothing said
    (the data directory's own finding already speaks for the disk)."""
    if os_ != "linux" or not root_dir or free is None:
        return []
    return [
        Finding(
            f.level,
            f.message.replace(f"free for {root_dir}", f"free on Docker's data root {root_dir}"),
        )
        for f in _disk(os_, free, root_dir, limits)
    ]


def docker_budget(machine: MachineFacts, limits: Thresholds) -> list[Finding]:
    """The memory floors alone, for Docker's budget read again once the engine started it
    (a first Docker Desktop VM may be smaller than the host suggested)."""
    return list(_memory(machine, limits))


def check_cluster(nodes: NodeRead, limits: Thresholds) -> list[Finding]:
    """The floors for a cluster that is not on this machine: its pods run on its nodes, so
    the largest schedulable node (by cpu, then memory, as the sizing ranks them) is measured
    instead of this machine; free disk here is not where the client's data will live."""
    usable = [n for n in nodes.nodes if n.usable]
    if not usable:
        why = "not read" if nodes.skipped or not nodes.readable else "none is schedulable"
        return [
            Finding(
                "note",
                f"cluster: the nodes' sizes were {why}; the memory and CPU floors were not checked",
            )
        ]
    node = max(usable, key=lambda n: (n.cpu_millicores or 0, n.memory_bytes or 0, n.name))
    memory, cpus = node.memory_bytes or 0, (node.cpu_millicores or 0) // 1000
    findings = []
    if memory + VM_GRACE_BYTES < limits.min_mem_gib * GIB:
        findings.append(
            Finding(
                "fail",
                f"memory: the largest node ({node.name}) has {_measured(memory)} "
                f"allocatable, the client needs at least {_gib(limits.min_mem_gib)} "
                "(PF_MIN_MEM_GB lowers this floor)",
            )
        )
    elif memory + VM_GRACE_BYTES < limits.warn_mem_gib * GIB:
        findings.append(
            Finding(
                "warn",
                f"memory: the largest node ({node.name}) has {_measured(memory)} "
                f"allocatable, below the recommended {_gib(limits.warn_mem_gib)}",
            )
        )
    return findings + [
        Finding(f.level, f.message.replace("CPU:", f"CPU ({node.name}):", 1))
        for f in _cpu(cpus, limits)
    ]
