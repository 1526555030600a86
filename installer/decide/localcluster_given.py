"""The engine's own local k3d cluster as the environment gives it: name, nodes, k3s pin, storage.

Read and checked once (decide/localcluster.settings); the parsers raise BadInput.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from installer.decide.errors import BadInput
from installer.decide.settings import STORAGE_MODES

DEFAULT_CLUSTER_NAME = "tracebloc"
DEFAULT_K3S_VERSION = "v1.29.4-k3s1"  # the validated pin
LEFTOVER_ACTIONS = ("reuse", "wipe")
_CLUSTER_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9._-]{0,62}")


@dataclass(frozen=True)
class LocalGiven:
    name: str  # CLUSTER_NAME
    servers: int  # SERVERS
    agents: int  # AGENTS
    k3s_version: str  # K8S_VERSION; "latest": no --image, k3d's own default
    storage_mode: str  # TB_STORAGE_MODE
    dataset_dir: str | None  # HOST_DATASET_DIR, as given
    leftover_action: str | None  # TB_LEFTOVER_ACTION


def _count(env: Mapping[str, str], name: str, default: int, least: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or int(raw) < least or int(raw) > 99:
        raise BadInput(
            f"{name}={raw!r} is not a whole number from {least} to 99",
            f"set {name} to a number such as {default}, or unset it",
        )
    return int(raw)


def local_cluster_given(env: Mapping[str, str]) -> LocalGiven:
    name = env.get("CLUSTER_NAME", "").strip() or DEFAULT_CLUSTER_NAME
    if not _CLUSTER_NAME.fullmatch(name):
        raise BadInput(
            f"CLUSTER_NAME={name!r} is not a k3d cluster name",
            "start with a letter; letters, digits, '.', '_' and '-'; at most 63",
        )
    mode = env.get("TB_STORAGE_MODE", "").strip().lower() or STORAGE_MODES[0]
    servers = _count(env, "SERVERS", 1, 1)
    agents = _count(env, "AGENTS", 1, 0)
    if mode == "node-local":
        # local-path volumes live on one node: a second node (server or agent) could run a
        # job that cannot reach the data.
        servers, agents = 1, 0
    dataset = env.get("HOST_DATASET_DIR", "").strip() or None
    if dataset and mode == "node-local":
        raise BadInput(
            "HOST_DATASET_DIR cannot be used with TB_STORAGE_MODE=node-local",
            "datasets would land in the node, not on your mount; use hostpath",
        )
    action = env.get("TB_LEFTOVER_ACTION", "").strip().lower() or None
    if action is not None and action not in LEFTOVER_ACTIONS:
        raise BadInput(
            f"TB_LEFTOVER_ACTION={env['TB_LEFTOVER_ACTION']!r} is not reuse or wipe",
            "use --reuse-data, --wipe-data or --data-dir=PATH",
        )
    return LocalGiven(
        name,
        servers,
        agents,
        env.get("K8S_VERSION", "").strip() or DEFAULT_K3S_VERSION,
        mode,
        dataset,
        action,
    )
