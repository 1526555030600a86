"""The package's import graph, read from the source (function-level imports included, type-only
imports under `if TYPE_CHECKING:` not): no layer imports one above it, and no module imports
itself back through others. `lint-imports` (the contract in pyproject.toml) checks the layers in
.ci/run too; this keeps both rules in the test suite, with the cycle check it lacks."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "installer"
# Top to bottom, as pyproject.toml's contract lists them.
LAYERS = ["__main__", "cli", "buildinfo", "commands", "config", "present", "edges", "decide"]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_only(tree: ast.Module) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    return skipped


def imports_of(path: Path, modules: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # `from installer.edges import proc` imports a module
                child = f"{node.module}.{alias.name}"
                found.add(child if child in modules else node.module)
    return {name for name in found if name in modules}


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: imports_of(path, set(files)) - {name} for name, path in files.items()}


def layer(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_module_sits_in_a_layer() -> None:
    stray = sorted(n for n in graph() if n != "installer" and layer(n) is None)
    assert stray == [], f"modules outside the layers: {stray}"


def test_no_import_runs_upward() -> None:
    upward = sorted(
        f"{source} -> {target}"
        for source, targets in graph().items()
        for target in targets
        if layer(source) is not None and layer(target) is not None
        and layer(target) < layer(source)  # type: ignore[operator]
    )
    assert upward == []


def test_no_import_cycles() -> None:
    edges = graph()
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str], on_path: set[str], done: set[str]) -> None:
        for nxt in sorted(edges[node]):
            if nxt in on_path:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in done and nxt.startswith("installer."):
                on_path.add(nxt)
                visit(nxt, [*path, nxt], on_path, done)
                on_path.discard(nxt)
        done.add(node)

    done: set[str] = set()
    for start in sorted(edges):
        if start not in done:
            visit(start, [start], {start}, done)
    assert cycles == []


def test_the_readme_layout_names_every_module() -> None:
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    layout = readme[readme.index("## Layout"):readme.index("## Benchmarks")]
    words = set(layout.replace("`", " ").split())
    missing = sorted(
        f"{path.parent.name}/{path.name}" for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" and path.name not in words
        and not (path.name.startswith("runtime") and "runtime*.py" in words)
    )  # fmt: skip
    assert missing == []
