"""What the overlapped reads of `plan` and `install` found, as data (commands/cluster_reads.py reads it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from installer.decide.errors import InstallerError
from installer.decide.model import Gpu, KubeTarget, ListRead, NodeRead, ReleaseRead

Key = tuple[str, str]  # (release, namespace)


@dataclass(frozen=True)
class StatusRead:
    status: str | None = None  # None: helm says the release does not exist
    error: InstallerError | None = None  # set: the state could not be read


@dataclass(frozen=True)
class ClusterRead:
    target: KubeTarget
    listing: ListRead
    values: Mapping[Key, ReleaseRead]
    statuses: Mapping[Key, StatusRead]
    nodes: NodeRead
    gpu: Gpu
    repos: dict[str, str] | None = None  # not asked (a local chart) or unreadable: None
    repos_error: InstallerError | None = None
    metrics: bool | None = None  # the APIService's Available condition; None: absent/unread
    asked: frozenset[str] = field(default_factory=frozenset)  # which optional reads were made
