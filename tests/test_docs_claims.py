"""What the documents claim, checked against the code and the repository: a link points at a
file that is here; the exit codes and administrator rights are described as the engine
behaves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from installer.decide import runtime as rt
from installer.decide import winhost
from installer.decide.runtime_route import decide
from installer.decide.variables import by_name

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "MIGRATION.md", *sorted(REPO.glob("*/README.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_at_a_file_in_the_repository(doc: Path) -> None:
    missing = []
    for target in LINK.findall(_text(doc)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if path and not (doc.parent / path).exists():
            missing.append(target)
    assert missing == [], f"{doc.name} links to files that are not here"


def _exit_rows(text: str, code: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"| {code} |")]


def test_exit_2_is_described_with_the_windows_reboot_hand_off() -> None:
    assert winhost.REBOOT_EXIT == 2
    rows = _exit_rows(_text(REPO / "MIGRATION.md"), "2")
    assert len(rows) == 2 and all("reboot hand-off" in row for row in rows)
    assert not any("never asks for a reboot" in row for row in rows)
    skip = by_name("TRACEBLOC_SKIP_REBOOT_PROMPT")
    assert skip is not None and "on Linux" in skip.note


def test_the_documents_never_say_the_engine_needs_no_administrator_rights() -> None:
    facts = rt.Facts(
        os="linux",
        docker="stopped",
        docker_cli=True,
        sudo="pw",
        tools=frozenset({"systemctl", "apt-get"}),
    )
    assert decide(facts).privileged  # it does ask, through sudo, when Docker needs it
    for doc in DOCS:
        assert "never asks for administrator rights" not in _text(doc), doc.name
