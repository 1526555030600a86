"""What the documents claim, checked against the code and the repository: a link points at a
file that is here; the exit codes and administrator rights are described as the engine
behaves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from installer.decide import runtime as rt
from installer.decide import winhost
from installer.decide.runtime_route import decide
from installer.decide.variables import by_name

REPO = Path(__file__).resolve().parents[1]
DOCS = [
    REPO / "README.md",
    REPO / "MIGRATION.md",
    REPO / "DEVELOPING.md",
    *sorted(REPO.glob("docs/*.md")),
    *sorted(REPO.glob("*/README.md")),
]
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


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings (code blocks hold none)."""
    anchors, fenced = set(), False
    for line in _text(path).splitlines():
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_to_a_section_names_a_heading_that_is_there(doc: Path) -> None:
    missing = []
    for target in LINK.findall(_text(doc)):
        if re.match(r"[a-z]+:", target) or "#" not in target:
            continue
        path, fragment = target.split("#", 1)
        file = doc.parent / path if path else doc
        if file.suffix == ".md" and file.exists() and fragment not in _anchors(file):
            missing.append(target)
    assert missing == [], f"{doc.name} links to sections that are not there"


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


@pytest.mark.parametrize(("doc", "limit"), [("README.md", 160), ("MIGRATION.md", 600)])
def test_the_documents_keep_their_size(doc: str, limit: int) -> None:
    lines = len(_text(REPO / doc).splitlines())
    assert lines <= limit, f"{doc} has {lines} lines, at most {limit}"


def test_the_readme_set_up_commands_are_the_ones_it_claims() -> None:
    readme = _text(REPO / "README.md")
    section = readme[readme.index("## Two commands on a fresh Linux machine") :]
    section = section[: section.index("\n## ")]
    commands = re.findall(r"```sh\n(.*?)\n```", section, re.DOTALL)
    assert commands == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/tracebloc-installer plan",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test,lint]'"
        " && .venv/bin/python tests/tools/fetch_helm.py"
        " && .venv/bin/python tests/tools/debian_tools.py"
        " && .venv/bin/python tests/tools/build_kube.py"
        " && .venv/bin/pytest -n auto --dist loadgroup",
    ]
    # .ci/run is the same steps: each script the test command runs, and the same pytest.
    ci = _text(REPO / ".ci" / "run")
    for script in re.findall(r"tests/tools/\w+\.py", commands[1]):
        assert f'"$venv/bin/python" {script}' in ci, script
    assert '"$venv/bin/pytest" -n auto --dist loadgroup' in ci


@pytest.mark.subprocess
def test_plan_offline_exits_1_naming_the_hosts_it_could_not_reach(tmp_path: Path) -> None:
    # The README's claim for `plan` on a machine with no network: a name under .invalid never
    # resolves, as every name does not offline; PF_CRITICALS stands in for the plan's hosts.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TB_", "TRACEBLOC_", "KUBE"))}
    env |= {
        "HOME": str(tmp_path),
        "PF_CRITICALS": "tracebloc backend|https://api.tracebloc.invalid/",
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
    }
    result = subprocess.run(
        [sys.executable, "-m", "installer", "plan"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "api.tracebloc.invalid" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
