"""The release's volumes at uninstall (installer/edges/volumes.py): which are the release's,
and a deletion whose wait expires names what it waited for."""

from __future__ import annotations

import json
from typing import Any

import pytest

from installer.decide.errors import InstallerError
from installer.decide.model import Connection
from installer.edges import proc, volumes


def pv(
    name: str, release: str | None = "tb", namespace: str | None = "tb", claim_ns: str = "tb"
) -> dict[str, Any]:
    annotations = {}
    if release is not None:
        annotations["meta.helm.sh/release-name"] = release
    if namespace is not None:
        annotations["meta.helm.sh/release-namespace"] = namespace
    return {
        "metadata": {
            "name": name,
            "annotations": annotations,
            "labels": {"app.kubernetes.io/instance": "tb"},
        },
        "spec": {"claimRef": {"name": "c", "namespace": claim_ns}},
    }


def test_the_release_volumes_are_found_by_helms_annotations_or_label_and_claim() -> None:
    unannotated = pv("by-label", None, None)
    elsewhere = pv("label-other-namespace", None, None, claim_ns="prod")
    listing = {
        "items": [
            pv("ours"),
            pv("other-release", "x"),
            pv("same-name-other-ns", "tb", "prod"),
            unannotated,
            elsewhere,
        ]
    }
    assert volumes.parse_volumes(json.dumps(listing).encode(), "tb", "tb") == ("ours", "by-label")


@pytest.mark.parametrize("out", [b"", b"not json", b'{"kind": "List"}'])
def test_an_unreadable_volume_list_is_an_error_not_none(out: bytes) -> None:
    with pytest.raises(ValueError):
        volumes.parse_volumes(out, "tb", "tb")


class Cluster:
    """Answers `kubectl delete` and the polls; `stuck` objects never go."""

    def __init__(self, stuck: dict[str, Any] | None) -> None:
        self.stuck = stuck
        self.calls: list[list[str]] = []

    def __call__(self, args: list[str], timeout: float) -> proc.Result:
        self.calls.append(args)
        out = b""
        if args[0] == "get" and self.stuck is not None:
            out = json.dumps(self.stuck).encode()
        return proc.Result(("kubectl", *args), 0, out, b"", 0.0)


def test_a_claim_held_by_its_finalizer_is_named_when_the_wait_expires() -> None:
    held = {
        "metadata": {
            "name": "client-pvc",
            "deletionTimestamp": "2026-12-01T10:00:00Z",
            "finalizers": ["kubernetes.io/pvc-protection"],
        },
        "status": {"phase": "Bound"},
    }
    cluster = Cluster(held)
    now = [0.0]
    conn = Connection(kubeconfig="/k/config", context="prod")

    with pytest.raises(InstallerError) as caught:
        volumes.delete(
            cluster,
            volumes.CLAIMS,
            ["client-pvc"],
            "tb",
            conn,
            timeout=5,
            clock=lambda: now[0],
            sleep=lambda s: now.__setitem__(0, now[0] + s),
        )

    message = caught.value.message
    assert "waited 5s for the volume claims to be deleted; still there in namespace tb" in message
    assert (
        "volume claim client-pvc (Terminating, held by finalizer "
        "kubernetes.io/pvc-protection; Bound)"
    ) in message
    assert (
        "kubectl get persistentvolumeclaims client-pvc -n tb --kubeconfig /k/config --context prod"
    ) in caught.value.remedy
    assert cluster.calls[0][:3] == ["delete", "persistentvolumeclaims", "client-pvc"]
    assert "--wait=false" in cluster.calls[0]


def test_a_deletion_that_finishes_returns_without_waiting_the_bound() -> None:
    cluster = Cluster(None)
    volumes.delete(
        cluster,
        volumes.VOLUMES,
        ["pv-a"],
        None,
        Connection(),
        timeout=600,
        clock=lambda: 0.0,
        sleep=lambda s: pytest.fail("waited"),
    )
    assert [c[:2] for c in cluster.calls] == [
        ["delete", "persistentvolumes"],
        ["get", "persistentvolumes"],
    ]
    assert "-n" not in cluster.calls[0]
