"""DEVELOPING.md's layout table names every module. The import rules themselves (no layer imports
one above it, every module sits in a layer, no cycles) are import-linter's contracts in
pyproject.toml, checked by `lint-imports` in .ci/run."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "installer"


def test_the_developer_notes_layout_names_every_module() -> None:
    notes = (PACKAGE.parent / "DEVELOPING.md").read_text(encoding="utf-8")
    start = notes.index("## Layout")
    layout = notes[start : notes.index("\n## ", start)]
    words = set(layout.replace("`", " ").split())
    missing = sorted(
        f"{path.parent.name}/{path.name}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py"
        and path.name not in words
        and not (path.name.startswith("runtime") and "runtime*.py" in words)
    )
    assert missing == []
