"""The house's budgets (issue #35), so a landing cannot quietly undo them: no module over
400 lines, module docstrings of at most 8 lines, comments and docstrings at most 12% of the
non-blank lines, the replaced scripts named "twin" at most 15 times, few `# fmt: skip`."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "installer"
MODULES = sorted(PACKAGE.rglob("*.py"))


def commentary(source: str) -> tuple[int, int]:
    """(lines that are only a comment or part of a docstring, non-blank lines)."""
    lines = source.splitlines()
    said = {n for n, line in enumerate(lines, 1) if line.lstrip().startswith("#")}
    for node in ast.walk(ast.parse(source)):
        kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if isinstance(node, kinds) and ast.get_docstring(node, clean=False) is not None:
            first = node.body[0]
            said.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return (
        sum(1 for n in said if lines[n - 1].strip()),
        sum(1 for line in lines if line.strip()),
    )


def test_the_measure_counts_comments_and_docstrings_only() -> None:
    source = (
        '"""One.\n\nTwo."""\n\nx = 1  # trailing: code\n# alone\n\n\ndef f():\n    """Doc."""\n'
    )
    assert commentary(source) == (4, 6)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_400_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 400


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_docstring_is_at_most_8_lines(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
    assert len(doc.splitlines()) <= 8


def test_comments_and_docstrings_are_at_most_12_percent() -> None:
    said, total = map(
        sum, zip(*(commentary(p.read_text(encoding="utf-8")) for p in MODULES), strict=True)
    )
    assert said / total <= 0.12, f"{said} of {total} non-blank lines"


def test_the_replaced_scripts_are_rarely_called_twins() -> None:
    count = sum(
        len(re.findall(r"twin", p.read_text(encoding="utf-8"), re.IGNORECASE)) for p in MODULES
    )
    assert count <= 15


def test_the_formatter_owns_the_layout() -> None:
    tests = (p for p in (PACKAGE.parent / "tests").rglob("*.py") if p != Path(__file__))
    skips = sum(p.read_text(encoding="utf-8").count("fmt: skip") for p in [*MODULES, *tests])
    assert skips <= 20


def test_the_index_of_each_modules_tests_is_current() -> None:
    tool = PACKAGE.parent / "tests" / "tools" / "index_tests.py"
    done = subprocess.run([sys.executable, str(tool), "--check"], check=False)
    assert done.returncode == 0, f"tests/INDEX.md is out of date: run python {tool}"
