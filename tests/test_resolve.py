"""Every branch of the sizing/provenance decision (issue 2) and of the MySQL engine choice."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from installer.decide.model import (
    Node,
    NodeRead,
    Provenance,
    ReleaseRead,
    ReleaseState,
    Resolution,
    Source,
)
from installer.decide.resolve import decide_mysql, resolve_training

GiB = 2**30
LITERAL = "cpu=2,memory=8Gi"
NO_MARKER = object()


def node(name: str, cpu_m: int, mem_b: int, *, cordoned: bool = False) -> Node:
    return Node(name, cpu_m, mem_b, schedulable=not cordoned, parsed=True)


def broken(name: str, *, cordoned: bool = False) -> Node:
    return Node(
        name,
        None,
        None,
        schedulable=not cordoned,
        parsed=False,
        reason="'16GB' is not a Kubernetes quantity",
    )


def nodes(*items: Node) -> NodeRead:
    return NodeRead(readable=True, nodes=items)


def present(values: dict[str, Any]) -> ReleaseRead:
    return ReleaseRead("tracebloc", "tracebloc", ReleaseState.PRESENT, values=values)


def carried(limits: Any, marker: Any = NO_MARKER) -> ReleaseRead:
    env: dict[str, Any] = {"RESOURCE_LIMITS": limits, "RESOURCE_REQUESTS": limits}
    if marker is not NO_MARKER:
        env["RESOURCE_PROVENANCE"] = marker
    return present({"env": env})


def machine(
    size: str, anchor: str, *, undersized: bool = False, unschedulable: bool = False
) -> Resolution:
    return Resolution(
        size,
        Provenance.INSTALLER,
        Source.MACHINE,
        undersized=undersized,
        unschedulable=unschedulable,
        anchor=anchor,
    )


ABSENT = ReleaseRead("tracebloc", "tracebloc", ReleaseState.ABSENT)
UNREADABLE_RELEASE = ReleaseRead(
    "tracebloc",
    "tracebloc",
    ReleaseState.UNREADABLE,
    reason="exit 1: Error: Kubernetes cluster unreachable",
)
UNREADABLE_NODES = NodeRead(readable=False, reason="exit 1: connection refused")
FALLBACK = Resolution(LITERAL, Provenance.INSTALLER, Source.FALLBACK)

BIG = node("big", 8000, 32 * GiB)
BIG_SIZE = machine("cpu=7,memory=29Gi", "big")
USER_CHOICE = "cpu=6,memory=20Gi"


def carried_as(size: str, provenance: Provenance) -> Resolution:
    return Resolution(size, provenance, Source.CARRIED)


CASES = [
    # 1. override
    pytest.param(
        "cpu=4,memory=16Gi",
        None,
        None,
        Resolution("cpu=4,memory=16Gi", Provenance.USER, Source.OVERRIDE),
        id="override-alone",
    ),
    pytest.param(
        "cpu=4,memory=16Gi",
        carried(USER_CHOICE, "user"),
        nodes(BIG),
        Resolution("cpu=4,memory=16Gi", Provenance.USER, Source.OVERRIDE),
        id="override-beats-carried-user-value-and-readable-nodes",
    ),
    pytest.param(
        " cpu=500m,memory=1.5Gi\n",
        ABSENT,
        UNREADABLE_NODES,
        Resolution("cpu=500m,memory=1.5Gi", Provenance.USER, Source.OVERRIDE),
        id="override-is-trimmed-and-kept-verbatim",
    ),
    pytest.param(
        "",
        carried(USER_CHOICE, "user"),
        None,
        carried_as(USER_CHOICE, Provenance.USER),
        id="empty-override-is-no-override",
    ),
    # 2. carried
    pytest.param(
        None,
        carried(USER_CHOICE, "user"),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.USER),
        id="carried-user-marker",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE, "installer"),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.INSTALLER),
        id="carried-installer-marker",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE, "robot"),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.UNKNOWN),
        id="carried-junk-marker",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE, "User"),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.UNKNOWN),
        id="carried-marker-wrong-case",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE, " user "),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.UNKNOWN),
        id="carried-marker-with-spaces",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE, ""),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.UNKNOWN),
        id="carried-empty-marker",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE, None),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.UNKNOWN),
        id="carried-null-marker",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE, True),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.UNKNOWN),
        id="carried-non-string-marker",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE),
        nodes(BIG),
        carried_as(USER_CHOICE, Provenance.UNKNOWN),
        id="carried-absent-marker",
    ),
    pytest.param(
        None,
        carried(USER_CHOICE, "user"),
        UNREADABLE_NODES,
        carried_as(USER_CHOICE, Provenance.USER),
        id="carried-value-needs-no-readable-nodes",
    ),
    pytest.param(
        None,
        carried(LITERAL, "user"),
        nodes(BIG),
        BIG_SIZE,
        id="historic-literal-with-user-marker-not-carried",
    ),
    pytest.param(
        None,
        carried(LITERAL, "installer"),
        nodes(BIG),
        BIG_SIZE,
        id="historic-literal-with-installer-marker-not-carried",
    ),
    pytest.param(
        None,
        carried(f" {LITERAL}\n"),
        nodes(BIG),
        BIG_SIZE,
        id="historic-literal-with-spaces-not-carried",
    ),
    pytest.param(
        None,
        carried(LITERAL, "user"),
        UNREADABLE_NODES,
        FALLBACK,
        id="historic-literal-with-user-marker-and-no-nodes-falls-back",
    ),
    pytest.param(
        None, UNREADABLE_RELEASE, nodes(BIG), BIG_SIZE, id="release-unreadable-carries-nothing"
    ),
    pytest.param(None, present({}), nodes(BIG), BIG_SIZE, id="release-present-but-empty"),
    pytest.param(None, ABSENT, nodes(BIG), BIG_SIZE, id="release-absent"),
    pytest.param(None, None, nodes(BIG), BIG_SIZE, id="release-not-read"),
    pytest.param(
        None,
        present({"env": {"RESOURCE_PROVENANCE": "user", "CLIENT_ENV": "prod"}}),
        nodes(BIG),
        BIG_SIZE,
        id="release-present-without-resource-limits",
    ),
    pytest.param(
        None, present({"clientId": "abc"}), nodes(BIG), BIG_SIZE, id="release-present-without-env"
    ),
    pytest.param(None, present({"env": "junk"}), nodes(BIG), BIG_SIZE, id="release-env-not-a-map"),
    pytest.param(
        None, carried("", "user"), nodes(BIG), BIG_SIZE, id="release-resource-limits-empty"
    ),
    pytest.param(
        None, carried(None, "user"), nodes(BIG), BIG_SIZE, id="release-resource-limits-null"
    ),
    pytest.param(
        None,
        carried({"cpu": "4"}, "user"),
        nodes(BIG),
        BIG_SIZE,
        id="release-resource-limits-is-a-map",
    ),
    # 3. machine
    pytest.param(None, ABSENT, nodes(BIG), BIG_SIZE, id="viable-single-node"),
    pytest.param(
        None,
        ABSENT,
        nodes(node("edge", 2000, 5 * GiB)),
        machine("cpu=1,memory=2Gi", "edge"),
        id="exact-floor-is-viable",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("edge", 2000, 5 * GiB - 1)),
        machine("cpu=1,memory=1Gi", "edge", undersized=True),
        id="one-byte-under-memory-floor",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("edge", 1999, 16 * GiB)),
        machine(LITERAL, "edge", unschedulable=True),
        id="one-millicore-under-cpu-floor",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("edge", 8000, 4 * GiB - 1)),
        machine(LITERAL, "edge", unschedulable=True),
        id="under-one-gib-after-overhead",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("tiny", 500, GiB)),
        machine(LITERAL, "tiny", unschedulable=True),
        id="node-smaller-than-the-overhead",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("odd", 3999, 17 * GiB - 1)),
        machine("cpu=2,memory=13Gi", "odd"),
        id="remainder-rounds-down",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("huge", 64000, 256 * GiB, cordoned=True), node("small", 4000, 16 * GiB)),
        machine("cpu=3,memory=13Gi", "small"),
        id="cordoned-largest-node-ignored",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(broken("broken"), node("ok", 4000, 16 * GiB)),
        machine("cpu=3,memory=13Gi", "ok"),
        id="unparseable-node-beside-a-valid-one",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("a", 2000, 8 * GiB), node("b", 2000, 8 * GiB)),
        machine("cpu=1,memory=5Gi", "a"),
        id="two-2-core-nodes-are-not-4-cores",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("mem-heavy", 8000, 64 * GiB), node("cpu-heavy", 16000, 8 * GiB)),
        machine("cpu=15,memory=5Gi", "cpu-heavy"),
        id="cpu-decides-before-memory",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("a", 8000, 16 * GiB), node("b", 8000, 32 * GiB)),
        machine("cpu=7,memory=29Gi", "b"),
        id="memory-breaks-a-cpu-tie",
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(node("zeta", 4000, 16 * GiB), node("alpha", 4000, 16 * GiB)),
        machine("cpu=3,memory=13Gi", "alpha"),
        id="exact-tie-broken-by-name",
    ),
    # 4. fallback
    pytest.param(None, ABSENT, UNREADABLE_NODES, FALLBACK, id="node-read-unreadable"),
    pytest.param(None, ABSENT, None, FALLBACK, id="nodes-not-read"),
    pytest.param(
        None,
        UNREADABLE_RELEASE,
        UNREADABLE_NODES,
        FALLBACK,
        id="cluster-unreachable-for-both-reads",
    ),
    pytest.param(None, ABSENT, nodes(), FALLBACK, id="empty-node-list"),
    pytest.param(
        None,
        ABSENT,
        nodes(node("a", 8000, 32 * GiB, cordoned=True), node("b", 4000, 16 * GiB, cordoned=True)),
        FALLBACK,
        id="all-nodes-cordoned",
    ),
    pytest.param(
        None, ABSENT, nodes(broken("a"), broken("b")), FALLBACK, id="all-nodes-unparseable"
    ),
    pytest.param(
        None,
        ABSENT,
        nodes(broken("a"), node("b", 8000, 32 * GiB, cordoned=True)),
        FALLBACK,
        id="cordoned-and-unparseable-only",
    ),
    pytest.param(
        None,
        ABSENT,
        NodeRead(readable=False, nodes=(BIG,), reason="deadline"),
        FALLBACK,
        id="unreadable-read-ignores-any-listed-nodes",
    ),
]


@pytest.mark.parametrize(("override", "release", "node_read", "expected"), CASES)
def test_resolve_training(
    override: str | None,
    release: ReleaseRead | None,
    node_read: NodeRead | None,
    expected: Resolution,
) -> None:
    assert resolve_training(override, release, node_read) == expected


def test_node_order_reversed_gives_identical_resolution() -> None:
    items = (
        broken("x"),
        node("zeta", 4000, 16 * GiB),
        node("b", 2000, 64 * GiB),
        node("alpha", 4000, 16 * GiB),
        node("c", 9000, 64 * GiB, cordoned=True),
    )
    forward = resolve_training(None, ABSENT, nodes(*items))
    backward = resolve_training(None, ABSENT, nodes(*reversed(items)))
    assert forward == backward
    assert forward.anchor == "alpha"


any_node = st.builds(
    Node,
    name=st.text("abcz", min_size=1, max_size=3),
    cpu_millicores=st.integers(0, 128_000),
    memory_bytes=st.integers(0, 512 * GiB),
    schedulable=st.booleans(),
    parsed=st.booleans(),
)


@given(data=st.data(), items=st.lists(any_node, max_size=8))
def test_any_permutation_gives_the_same_anchor_and_size(
    data: st.DataObject, items: list[Node]
) -> None:
    shuffled = data.draw(st.permutations(items))
    assert resolve_training(None, ABSENT, nodes(*shuffled)) == resolve_training(
        None, ABSENT, nodes(*items)
    )


@given(items=st.lists(any_node, max_size=8))
def test_anchor_is_the_largest_single_usable_node(items: list[Node]) -> None:
    result = resolve_training(None, ABSENT, nodes(*items))
    usable = [(n.cpu_millicores, n.memory_bytes) for n in items if n.usable]
    if not usable:
        assert result == FALLBACK
        return
    assert result.source is Source.MACHINE
    assert result.provenance is Provenance.INSTALLER
    best = max(usable)
    anchors = [n for n in items if n.usable and n.name == result.anchor]
    assert any((n.cpu_millicores, n.memory_bytes) == best for n in anchors)
    if not result.unschedulable:
        cpu, memory = result.size.removeprefix("cpu=").split(",memory=")
        # What is offered always fits on that one node after the overhead: nodes never add up.
        assert int(cpu) * 1000 + 1000 <= best[0]
        assert int(memory.removesuffix("Gi")) * GiB + 3 * GiB <= best[1]


# --- MySQL engine ---------------------------------------------------------------------------

SELECTS_84 = {"images": {"mysqlClient": {"tag": "8.4", "digest": ""}}}
SKIPPED = ReleaseRead("tracebloc", "tracebloc", ReleaseState.SKIPPED)


@pytest.mark.parametrize(
    ("requested", "arch", "file_tag", "release", "data_present", "engine"),
    [
        pytest.param(
            "5.7",
            "arm64",
            "8.4",
            present(SELECTS_84),
            False,
            "5.7",
            id="explicit-5.7-beats-everything",
        ),
        pytest.param(
            "8.4",
            "x86_64",
            None,
            present({}),
            True,
            "8.4",
            id="explicit-8.4-beats-release-and-data",
        ),
        pytest.param(
            "auto", "x86_64", "8.4", present({}), True, "8.4", id="values-file-selects-8.4"
        ),
        pytest.param(
            "auto", "x86_64", None, present(SELECTS_84), True, "8.4", id="release-values-select-8.4"
        ),
        pytest.param(
            "auto",
            "x86_64",
            None,
            present({"images": {"mysqlClient": {"tag": 8.4}}}),
            False,
            "8.4",
            id="release-values-select-8.4-as-unquoted-number",
        ),
        pytest.param(
            "auto", "arm64", None, present({}), False, "5.7", id="release-present-keeps-5.7"
        ),
        pytest.param(
            "auto",
            "arm64",
            None,
            present({"images": {"mysqlClient": {"tag": "5.7"}}}),
            False,
            "5.7",
            id="release-values-select-5.7",
        ),
        pytest.param("auto", "arm64", None, ABSENT, True, "5.7", id="data-present-keeps-5.7"),
        pytest.param(
            "auto",
            "arm64",
            None,
            UNREADABLE_RELEASE,
            False,
            "5.7",
            id="release-unreadable-keeps-5.7",
        ),
        pytest.param("auto", "arm64", None, SKIPPED, False, "5.7", id="release-skipped-keeps-5.7"),
        pytest.param("auto", "x86_64", None, ABSENT, False, "5.7", id="fresh-x86_64"),
        pytest.param("auto", "arm64", None, ABSENT, False, "8.4", id="fresh-arm64"),
    ],
)
def test_decide_mysql(
    requested: str,
    arch: str,
    file_tag: str | None,
    release: ReleaseRead,
    data_present: bool,
    engine: str,
) -> None:
    chosen, reason = decide_mysql(requested, arch, file_tag, release, data_present)
    assert chosen == engine
    assert reason.strip()
