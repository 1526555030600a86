"""decide/noop.py: would a re-run change anything? Only positive evidence says no."""

from __future__ import annotations

from typing import Any

import pytest

from installer.decide import noop

DOC: dict[str, Any] = {
    "env": {"RESOURCE_LIMITS": "cpu=7,memory=13Gi", "SINGLE_NODE": "true"},
    "clientId": "c",
    "clusterScope": True,
    "pvc": {"mysql": "2Gi"},
    "storageClass": {"parameters": {}},
}


@pytest.mark.parametrize(
    ("stored", "keys"),
    [
        pytest.param(DOC, [], id="the-same-document"),
        pytest.param({**DOC, "clusterScope": "true"}, ["clusterScope"], id="a-bool-stored-as-text"),
        pytest.param({**DOC, "extra": 1}, ["extra"], id="a-key-only-helm-has"),
        pytest.param({k: v for k, v in DOC.items() if k != "pvc"}, ["pvc"], id="a-key-missing"),
        pytest.param(
            {**DOC, "env": {**DOC["env"], "RESOURCE_LIMITS": "cpu=2,memory=4Gi"}},
            ["env.RESOURCE_LIMITS"],
            id="a-nested-value",
        ),
        pytest.param(
            {**DOC, "storageClass": {}}, ["storageClass.parameters"], id="an-empty-map-missing"
        ),
    ],
)
def test_differing_keys_names_each_path_and_never_a_value(
    stored: dict[str, Any], keys: list[str]
) -> None:
    assert noop.differing_keys(stored, DOC) == keys


@pytest.mark.parametrize(
    ("chart", "version"),
    [
        ("client-1.4.2", "1.4.2"),
        ("client-v1.4.2", "1.4.2"),
        ("client-1.5.0-rc.1", "1.5.0-rc.1"),
        ("my-client-2.0.0", "2.0.0"),
        ("client", None),
        ("", None),
        (None, None),
    ],
)
def test_installed_version_from_the_list_row(chart: str | None, version: str | None) -> None:
    assert noop.installed_version(chart) == version


def test_newest_version_is_the_row_named_exactly() -> None:
    rows = [
        {"name": "tracebloc/client-extra", "version": "9.9.9"},
        {"name": "tracebloc/client", "version": "1.5.0"},
    ]
    assert noop.newest_version(rows, "tracebloc/client") == "1.5.0"
    assert noop.newest_version([], "tracebloc/client") is None
    assert noop.newest_version({"name": "x"}, "tracebloc/client") is None


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        pytest.param({"force": True}, "re-applying regardless", id="forced"),
        pytest.param({"action": "install"}, "the verdict is install", id="a-new-install"),
        pytest.param({"status": "failed"}, "failed, not deployed", id="a-failed-release"),
        pytest.param(
            {"status": "pending-upgrade", "recovery": "rollback"},
            "not deployed",
            id="a-wedged-release",
        ),
    ],
)
def test_a_release_that_is_not_settled_is_a_change(kwargs: dict[str, Any], said: str) -> None:
    given: dict[str, Any] = {
        "force": False,
        "action": "upgrade",
        "recovery": None,
        "status": "deployed",
        **kwargs,
    }
    found = noop.release_settled(**given)
    assert found is not None and not found.nothing and said in found.why[0]


def test_a_deployed_release_of_this_client_goes_on_to_its_values() -> None:
    assert (
        noop.release_settled(force=False, action="upgrade", recovery=None, status="deployed")
        is None
    )


def test_the_values_file_must_already_hold_the_bytes() -> None:
    assert noop.values_settled(DOC, DOC, file_bytes=b"a", data=b"a") is None
    assert noop.values_settled(DOC, DOC, file_bytes=None, data=None) is None  # caller's file
    for on_disk in (None, b"b"):
        found = noop.values_settled(DOC, DOC, file_bytes=on_disk, data=b"a")
        assert found is not None and "values file" in found.why[0]
    unread = noop.values_settled(None, DOC, file_bytes=b"a", data=b"a")
    assert unread is not None and "not read" in unread.why[0]


BASE: dict[str, Any] = {
    "release": "tb",
    "namespace": "ns",
    "installed_chart": "client-1.4.2",
    "wanted_version": "1.4.2",
    "version_reason": "",
    "ready": True,
    "workloads": ("Deployment a 1/1",),
    "readiness_reason": "",
    "problems": (),
}


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        pytest.param(
            {"wanted_version": "1.5.0"}, "this run installs version 1.5.0", id="newer-chart"
        ),
        pytest.param(
            {"wanted_version": None, "version_reason": "offline"},
            "not known (offline)",
            id="version-unknown",
        ),
        pytest.param({"installed_chart": "client"}, "this run installs", id="installed-unknown"),
        pytest.param({"ready": False}, "not all ready", id="not-ready"),
        pytest.param(
            {"problems": ("Deployment a is scaled to 0 replicas",)},
            "not healthy (Deployment a is scaled to 0 replicas)",
            id="scaled-to-zero",
        ),
        pytest.param(
            {"ready": None, "readiness_reason": "timeout"},
            "could not be read (timeout)",
            id="readiness-unread",
        ),
    ],
)
def test_anything_unseen_or_different_is_a_change(kwargs: dict[str, Any], said: str) -> None:
    found = noop.decide(None, **{**BASE, **kwargs})
    assert not found.nothing and said in found.why[0]


def test_all_seen_and_equal_is_nothing_to_change_in_one_line() -> None:
    found = noop.decide(None, **BASE)
    assert found.nothing
    assert found.line == (
        "already installed and connected — nothing to change: release tb in "
        "namespace ns, chart client-1.4.2, ready: Deployment a 1/1"
    )
