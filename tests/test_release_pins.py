"""The release workflow pins every tool, the tracebloc CLI included, with cosign on the
runner, builds the binaries from those pins, and refuses to publish while any entry of
installer/data/tools.json is PENDING: the workflow is read as data, and the refusal script
is run on real documents."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"
CHECK = REPO / "build" / "check_pins.py"


def jobs() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]


def runs(job: dict[str, Any]) -> list[str]:
    return [step.get("run", "") or step.get("uses", "") for step in job["steps"]]


def first(job: dict[str, Any], text: str) -> int:
    return next(i for i, line in enumerate(runs(job)) if text in line)


def test_a_job_pins_every_tool_with_cosign_before_the_binaries_are_built() -> None:
    all_jobs = jobs()
    pins = all_jobs["pins"]
    assert first(pins, "sigstore/cosign-installer@") < first(pins, "build/pin_tools.py")
    assert "--offline" not in runs(pins)[first(pins, "build/pin_tools.py")]
    refuse = pins["steps"][first(pins, "build/check_pins.py")]
    assert refuse["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert first(pins, "build/pin_tools.py") < first(pins, "build/check_pins.py")
    binary = all_jobs["binary"]
    assert "pins" in binary["needs"]
    fetched = binary["steps"][first(binary, "actions/download-artifact@")]
    assert fetched["with"] == {"name": "pinned-tools", "path": "installer/data"}
    assert first(binary, "actions/download-artifact@") < first(binary, "build/freeze.py")


def test_the_release_job_refuses_pending_pins_before_signing_or_publishing() -> None:
    release = jobs()["release"]
    check = first(release, "build/check_pins.py artifacts/pinned-tools/tools.json")
    assert check < first(release, "build/release_key.py sign")
    assert check < first(release, "gh release create")


def refusal(document: Any, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(CHECK), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def pinned() -> dict[str, Any]:
    """The repository's tools.json with every entry filled as pin_tools.py fills it."""
    document = json.loads((REPO / "installer" / "data" / "tools.json").read_text())
    for name, tool in document["tools"].items():
        for entry in tool["platforms"].values():
            entry["sha256"] = "ab" * 32
            if name == "tracebloc":
                entry["cross_check"] = (
                    "SHA256SUMS of the release, and the binary's cosign keyless signature"
                )
    return document


def test_a_fully_pinned_document_passes(tmp_path: Path) -> None:
    result = refusal(pinned(), tmp_path)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("change", "said"),
    [
        pytest.param(
            lambda d: d["tools"]["tracebloc"]["platforms"]["linux-x86_64"].update(sha256="PENDING"),
            "tracebloc v",
            id="cli-pending",
        ),
        pytest.param(
            lambda d: d["tools"]["kubectl"]["platforms"]["windows-x86_64"].update(sha256="PENDING"),
            "kubectl v",
            id="kubectl-pending",
        ),
        pytest.param(
            lambda d: d["tools"]["helm"]["platforms"]["darwin-arm64"].update(sha256="abc"),
            "sha256 abc",
            id="not-a-checksum",
        ),
        pytest.param(
            lambda d: d["tools"]["tracebloc"]["platforms"]["darwin-arm64"].update(
                cross_check="SHA256SUMS of the release only: no cosign on the pinning machine"
            ),
            "not cross-checked with cosign",
            id="cli-without-cosign",
        ),
        pytest.param(lambda d: d.update(tools={}), "no tools are pinned", id="empty"),
    ],
)
def test_any_entry_not_pinned_refuses_naming_it(tmp_path: Path, change: Any, said: str) -> None:
    document = copy.deepcopy(pinned())
    change(document)
    result = refusal(document, tmp_path)
    assert result.returncode == 1
    assert said in result.stderr and "refusing to publish" in result.stderr


def test_the_repositorys_own_pins_are_refused_while_pending(tmp_path: Path) -> None:
    """Today's tools.json (written offline) is what the workflow must not publish."""
    document = json.loads((REPO / "installer" / "data" / "tools.json").read_text())
    if not any(
        e["sha256"] == "PENDING"
        for t in document["tools"].values()
        for e in t["platforms"].values()
    ):
        pytest.skip("every tool is pinned in this checkout")
    assert refusal(document, tmp_path).returncode == 1
