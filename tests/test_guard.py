"""guard.decide: one client per machine, decided from one read of what is installed.

Pure: the inputs are a `helm list -A` read and the values read of each client release; the
answer is the release to install into (with the read the sizing reuses), or Refused (exit 3).
"""

from __future__ import annotations

from typing import Any

import pytest

from installer.decide.errors import Refused
from installer.decide.guard import Target, decide
from installer.decide.model import Installed, ListRead, ReleaseRead, ReleaseState

ME = "client-7f3a"
OTHER = "client-0b1d"
NAME = NS = "tracebloc"


def row(
    name: str = NAME, namespace: str = NS, chart: str = "client-1.4.2", status: str = "deployed"
) -> Installed:
    return Installed(name, namespace, chart, status)


def listing(*rows: Installed) -> ListRead:
    return ListRead(True, tuple(rows))


def present(name: str = NAME, namespace: str = NS, **values: Any) -> ReleaseRead:
    return ReleaseRead(name, namespace, ReleaseState.PRESENT, values=values)


def reads(*items: ReleaseRead) -> dict[tuple[str, str], ReleaseRead]:
    return {(r.name, r.namespace): r for r in items}


def refused(
    listed: ListRead, read: dict[tuple[str, str], ReleaseRead], client_id: str | None = ME
) -> Refused:
    with pytest.raises(Refused) as caught:
        decide(listed, read, name=NAME, namespace=NS, client_id=client_id)
    assert caught.value.exit_code == 3
    return caught.value


# --- installs that go ahead -----------------------------------------------------------------


def test_nothing_installed_targets_the_requested_release_as_absent() -> None:
    target = decide(listing(), {}, name="edge", namespace="tb-edge", client_id=ME)

    assert target == Target("edge", "tb-edge", ReleaseRead("edge", "tb-edge", ReleaseState.ABSENT))
    assert not target.moved


def test_same_client_in_the_target_is_upgraded_with_its_read() -> None:
    mine = present(clientId=ME, env={"RESOURCE_PROVENANCE": "user"})

    target = decide(listing(row()), reads(mine), name=NAME, namespace=NS, client_id=ME)

    assert target == Target(NAME, NS, mine, moved=False)
    assert target.release is mine  # the very read the sizing reuses: no second helm get values


@pytest.mark.parametrize(
    ("rows", "found"),
    [
        pytest.param([row("edge", "tb-old")], ("edge", "tb-old"), id="other-name-other-namespace"),
        pytest.param([row(NAME, "legacy")], (NAME, "legacy"), id="same-name-other-namespace"),
        pytest.param([row("edge", NS)], ("edge", NS), id="other-name-same-namespace"),
        pytest.param(
            [row("cm", "cert-manager", chart="cert-manager-v1.14.0"), row("edge", "old")],
            ("edge", "old"),
            id="beside-a-non-client-release",
        ),
    ],
)
def test_same_client_elsewhere_is_upgraded_where_it_is(
    rows: list[Installed], found: tuple[str, str]
) -> None:
    theirs = present(*found, clientId=ME)

    target = decide(listing(*rows), reads(theirs), name=NAME, namespace=NS, client_id=ME)

    assert target == Target(found[0], found[1], theirs, moved=True)


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param(
            [row("cm", "cert-manager", chart="cert-manager-v1.14.0")],
            id="another-chart-in-another-namespace",
        ),
        pytest.param([row("db", NS, chart="mysql-9.4.1")], id="another-chart-in-our-namespace"),
        pytest.param(
            [row(NAME, "elsewhere", chart="nginx-1.0.0")],
            id="another-chart-with-our-name-elsewhere",
        ),
        pytest.param(
            [row("x", "y", chart="client-chart-2.0.0")], id="chart-whose-name-starts-client"
        ),
    ],
)
def test_non_client_releases_elsewhere_are_ignored(rows: list[Installed]) -> None:
    # No values of theirs were read, and none are needed.
    target = decide(listing(*rows), {}, name=NAME, namespace=NS, client_id=ME)

    assert target == Target(NAME, NS, ReleaseRead(NAME, NS, ReleaseState.ABSENT))


@pytest.mark.parametrize(
    "status", ["deployed", "failed", "pending-install", "pending-upgrade", "uninstalling"]
)
def test_same_client_in_the_target_is_chosen_whatever_its_state(status: str) -> None:
    mine = present(clientId=ME)

    target = decide(listing(row(status=status)), reads(mine), name=NAME, namespace=NS, client_id=ME)

    assert target.release is mine


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param("exit 1: Error: Kubernetes cluster unreachable", id="cluster-unreachable"),
        pytest.param("helm list printed output that is not JSON", id="garbage-output"),
    ],
)
def test_an_unreadable_list_is_refused_with_its_reason(reason: str) -> None:
    error = refused(ListRead(False, reason=reason), {})

    assert reason in error.message
    assert "nothing was changed" in error.remedy


@pytest.mark.parametrize(
    ("rows", "read", "other_at"),
    [
        pytest.param([row()], [present(clientId=OTHER)], (NAME, NS), id="other-client-in-target"),
        pytest.param(
            [row("edge", "tb-old")],
            [present("edge", "tb-old", clientId=OTHER)],
            ("edge", "tb-old"),
            id="other-client-elsewhere",
        ),
        pytest.param(
            [row(), row("edge", "tb-old")],
            [present(clientId=ME), present("edge", "tb-old", clientId=OTHER)],
            ("edge", "tb-old"),
            id="same-client-in-target-other-client-elsewhere",
        ),
        pytest.param(
            [row("edge", "tb-old"), row()],
            [present("edge", "tb-old", clientId=OTHER), present(clientId=ME)],
            ("edge", "tb-old"),
            id="other-client-listed-first",
        ),
    ],
)
def test_a_different_client_anywhere_is_refused_with_the_ways_forward(
    rows: list[Installed], read: list[ReleaseRead], other_at: tuple[str, str]
) -> None:
    error = refused(listing(*rows), reads(*read))

    assert OTHER in error.message
    assert repr(other_at[0]) in error.message and repr(other_at[1]) in error.message
    remedy = error.remedy
    assert "nothing was changed" in remedy
    assert "(1) repair that client: run again with its client id" in remedy
    assert f"(2) remove it first: helm uninstall {other_at[0]} -n {other_at[1]}" in remedy
    assert "(3) install this client on another machine" in remedy


@pytest.mark.parametrize(
    ("rows", "read", "reason"),
    [
        pytest.param(
            [row()],
            [ReleaseRead(NAME, NS, ReleaseState.UNREADABLE, reason="exit 1: Error: forbidden")],
            "exit 1: Error: forbidden",
            id="target-values-unreadable",
        ),
        pytest.param(
            [row("edge", "tb-old")],
            [ReleaseRead("edge", "tb-old", ReleaseState.UNREADABLE, reason="timed out")],
            "timed out",
            id="other-release-values-unreadable",
        ),
        pytest.param([row()], [], "not read", id="target-values-never-read"),
        pytest.param(
            [row(), row("edge", "tb-old")],
            [present(clientId=ME)],
            "not read",
            id="second-client-values-never-read",
        ),
        pytest.param(
            [row()],
            [ReleaseRead(NAME, NS, ReleaseState.ABSENT)],
            "",
            id="listed-yet-read-as-absent",
        ),
        pytest.param([row()], [ReleaseRead(NAME, NS, ReleaseState.SKIPPED)], "", id="read-skipped"),
    ],
)
def test_a_client_release_that_could_not_be_read_is_refused(
    rows: list[Installed], read: list[ReleaseRead], reason: str
) -> None:
    error = refused(listing(*rows), reads(*read))

    assert "could not read the values of client release" in error.message
    assert reason in error.message
    assert "never overwrites what it could not see" in error.remedy


@pytest.mark.parametrize(
    "values",
    [
        pytest.param({}, id="no-values"),
        pytest.param({"env": {"RESOURCE_PROVENANCE": "user"}}, id="values-without-client-id"),
        pytest.param({"clientId": ""}, id="empty-client-id"),
        pytest.param({"clientId": 42}, id="numeric-client-id"),
        pytest.param({"clientId": None}, id="null-client-id"),
        pytest.param({"clientId": [ME]}, id="list-client-id"),
    ],
)
@pytest.mark.parametrize(
    "where",
    [pytest.param((NAME, NS), id="in-target"), pytest.param(("edge", "tb-old"), id="elsewhere")],
)
def test_a_client_release_without_a_client_id_is_refused(
    values: dict[str, Any], where: tuple[str, str]
) -> None:
    error = refused(listing(row(*where)), reads(present(*where, **values)))

    assert "has no clientId" in error.message
    assert f"helm uninstall {where[0]} -n {where[1]}" in error.remedy


@pytest.mark.parametrize(
    "chart", ["nginx-1.0.0", "mysql-9.4.1", "client-chart-0.1.0", "my-client-2.0.0"]
)
def test_another_chart_at_our_release_name_and_namespace_is_refused(chart: str) -> None:
    error = refused(listing(row(chart=chart)), {})

    assert repr(chart) in error.message and "not the tracebloc client" in error.message
    assert "TB_NAMESPACE" in error.remedy


def test_another_chart_at_our_release_is_refused_even_with_the_client_elsewhere() -> None:
    error = refused(
        listing(row(chart="nginx-1.0.0"), row("edge", "tb-old")),
        reads(present("edge", "tb-old", clientId=ME)),
    )

    assert "not the tracebloc client" in error.message


def test_the_same_client_twice_elsewhere_is_refused() -> None:
    rows = [row("edge", "tb-a"), row("edge", "tb-b")]
    read = reads(present("edge", "tb-a", clientId=ME), present("edge", "tb-b", clientId=ME))

    error = refused(listing(*rows), read)

    assert "more than once" in error.message
    assert "edge in tb-a" in error.message and "edge in tb-b" in error.message
    assert "--namespace" in error.remedy


@pytest.mark.parametrize(
    ("rows", "read"),
    [
        pytest.param([row()], [present(clientId=ME)], id="client-in-target"),
        pytest.param(
            [row("edge", "tb-old")], [present("edge", "tb-old", clientId=ME)], id="client-elsewhere"
        ),
    ],
)
def test_no_client_id_to_compare_with_installed_clients_is_refused(
    rows: list[Installed], read: list[ReleaseRead]
) -> None:
    error = refused(listing(*rows), reads(*read), client_id=None)

    # Without an id of its own, every installed client is someone else's: named, with the
    # ways forward (the first of which is to run again with that id).
    assert ME in error.message
    assert "run again with its client id" in error.remedy


def test_no_client_id_with_nothing_installed_installs_fresh() -> None:
    # A caller's values file may carry no clientId; with no client installed there is
    # nothing to protect, so the install goes ahead where it was asked to.
    target = decide(listing(), {}, name="tb", namespace="tb", client_id=None)

    assert (target.name, target.namespace, target.release.state) == (
        "tb",
        "tb",
        ReleaseState.ABSENT,
    )
