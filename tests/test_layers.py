"""The README's layout table names every module. The import rules themselves (no layer imports
one above it, every module sits in a layer, no cycles) are import-linter's contracts in
pyproject.toml, checked by `lint-imports` in .ci/run."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "installer"


def test_the_readme_layout_names_every_module() -> None:
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    layout = readme[readme.index("## Layout") : readme.index("## Benchmarks")]
    words = set(layout.replace("`", " ").split())
    missing = sorted(
        f"{path.parent.name}/{path.name}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py"
        and path.name not in words
        and not (path.name.startswith("runtime") and "runtime*.py" in words)
    )
    assert missing == []
