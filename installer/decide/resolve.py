"""The sizing decision: training size and who chose it, from one pass over plain data.

`resolve_training` is the contract both historic installers implemented, once. It is pure:
the reads happen before it (probe), the warnings after it (cli).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from installer.decide.model import (
    Node,
    NodeRead,
    Provenance,
    ReleaseRead,
    ReleaseState,
    Resolution,
    Source,
)
from installer.decide.quantity import GIB, parse_size, render_size

OVERHEAD_MILLICORES = 1000
OVERHEAD_BYTES = 3 * GIB
FLOOR_MILLICORES = 1000
FLOOR_BYTES = 2 * GIB
HISTORIC_LITERAL = "cpu=2,memory=8Gi"


def resolve_training(
    override: str | None, release: ReleaseRead | None, nodes: NodeRead | None
) -> Resolution:
    """Decide (size, provenance) in one pass. `override` must already be validated."""
    if override:
        return Resolution(size=override.strip(), provenance=Provenance.USER, source=Source.OVERRIDE)

    carried = carried_choice(release.values) if release is not None else None
    if carried is not None:
        size, provenance = carried
        return Resolution(size=size, provenance=provenance, source=Source.CARRIED)

    anchor = pick_anchor(nodes.nodes) if nodes is not None and nodes.readable else None
    if anchor is None:
        # Nothing was measured, so nothing is claimed about size: no undersized/unschedulable.
        return Resolution(
            size=HISTORIC_LITERAL, provenance=Provenance.INSTALLER, source=Source.FALLBACK
        )
    return size_for_node(anchor)


def carried_choice(values: Mapping[str, Any]) -> tuple[str, Provenance] | None:
    """The size an installed release already carries, if it is a choice worth keeping: never
    the historic literal, and a marker other than `installer` or `user` is `unknown`."""
    env = values.get("env") if isinstance(values, Mapping) else None
    if not isinstance(env, Mapping):
        return None
    limits = env.get("RESOURCE_LIMITS")
    if limits is None or isinstance(limits, (Mapping, list, bool)):
        return None
    size = str(limits).strip()
    if not size or size == HISTORIC_LITERAL:
        return None
    marker = env.get("RESOURCE_PROVENANCE")
    if marker == Provenance.USER.value:
        return size, Provenance.USER
    if marker == Provenance.INSTALLER.value:
        return size, Provenance.INSTALLER
    return size, Provenance.UNKNOWN


def pick_anchor(nodes: tuple[Node, ...]) -> Node | None:
    """The single node maximising (cpu, memory); ties broken by name so order never matters."""
    usable = [n for n in nodes if n.usable]
    if not usable:
        return None
    # min over the negated pair is max over (cpu, memory); among exact ties the smallest name
    # wins, so the input order can never change the answer.
    return min(usable, key=lambda n: (-(n.cpu_millicores or 0), -(n.memory_bytes or 0), n.name))


def size_for_node(node: Node) -> Resolution:
    run_cpu = max(0, (node.cpu_millicores or 0) - OVERHEAD_MILLICORES)
    run_mem = max(0, (node.memory_bytes or 0) - OVERHEAD_BYTES)
    viable = run_cpu >= FLOOR_MILLICORES and run_mem >= FLOOR_BYTES
    # Below the floor, the honest remainder is still offered when it is at least one whole
    # core and one whole GiB: it fits, and the historic literal would not.
    fits = run_cpu // 1000 >= 1 and run_mem // GIB >= 1
    return Resolution(
        size=render_size(run_cpu, run_mem) if viable or fits else HISTORIC_LITERAL,
        provenance=Provenance.INSTALLER,
        source=Source.MACHINE,
        undersized=fits and not viable,
        unschedulable=not fits,
        anchor=node.name,
    )


def validate_override(text: str) -> str:
    """Raise QuantityError unless `text` is a `cpu=<quantity>,memory=<quantity>` pair."""
    parse_size(text)
    return text.strip()


def mysql_tag(values: Any) -> str | None:
    """`images.mysqlClient.tag` from a values mapping, if it is there."""
    for key in ("images", "mysqlClient", "tag"):
        values = values.get(key) if isinstance(values, Mapping) else None
    return str(values) if values is not None else None


def decide_mysql(
    requested: str,
    arch: str,
    file_tag: str | None,
    release: ReleaseRead,
    data_present: bool,
) -> tuple[str, str]:
    """The MySQL engine and why. An engine is never switched under existing data: 8.4 data
    cannot be read by 5.7, and 5.7 data is upgraded irreversibly by 8.4."""
    if requested != "auto":
        return requested, "TB_MYSQL_ENGINE"
    if file_tag == "8.4" or mysql_tag(release.values) == "8.4":
        return "8.4", "the existing values already select 8.4"
    if release.state is ReleaseState.PRESENT:
        return "5.7", "the installed release runs 5.7"
    if data_present:
        return "5.7", "MySQL data already exists under the data directory"
    if release.state is not ReleaseState.ABSENT:
        return "5.7", (
            "whether a release is installed could not be seen, so 5.7 is kept; "
            "set TB_MYSQL_ENGINE to choose"
        )
    if arch == "x86_64":
        return "5.7", "fresh install on x86_64"
    return "8.4", f"fresh install on {arch}"
