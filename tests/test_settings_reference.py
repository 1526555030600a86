"""docs/settings.md is generated from the registry (installer/decide/variables.py) and the
registry names every variable the engine's code reads: neither can fall behind."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from installer.decide.variables import ENGINE_SETTINGS, NOT_SETTINGS, TEST_SEAMS, VARIABLES

REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "tests" / "tools" / "settings_reference.py"
# A name in quotes is one the code reads or sets (one in a comment is not).
NAMED = re.compile(r"[\"']((?:TB|TRACEBLOC|PF)_[A-Z0-9_]*[A-Z0-9])[\"']")


def test_the_reference_is_what_the_generator_writes() -> None:
    result = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_every_variable_the_code_names_is_in_the_registry() -> None:
    known = {v.name for v in VARIABLES} | {s.name for s in ENGINE_SETTINGS + TEST_SEAMS}
    known |= set(NOT_SETTINGS)
    named = set()
    for path in (REPO / "installer").rglob("*.py"):
        if path.name == "variables.py":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            named |= {n for n in NAMED.findall(line) if not n.startswith("TB_TEST_")}
    assert sorted(named - known) == []


def test_one_short_row_per_variable() -> None:
    text = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert len(names) == len(set(names))
    assert all(len(row) <= 200 for row in rows)
    for setting in ENGINE_SETTINGS + TEST_SEAMS:
        assert setting.name in names
