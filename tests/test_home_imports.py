"""Every name is imported from its home: no module (in the package or the tests) reaches a name
through another of our modules that only imported it (`proc.Tool` for decide/tooling.Tool,
`backend.ca_bundle` for edges/trust.ca_bundle). A re-export makes two addresses for one thing,
and an import-linter contract then checks the wrong one."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _module(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def borrowed(sources: dict[str, str]) -> dict[str, dict[str, str]]:
    """For each of our modules, the names it imported from another of ours: name -> home."""
    modules = set(sources)
    found: dict[str, dict[str, str]] = {}
    for name, source in sources.items():
        names = found.setdefault(name, {})
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" not in modules:
                        names[alias.asname or alias.name] = node.module
    return found


def reexports_used(sources: dict[str, str], users: dict[str, str]) -> list[str]:
    """`where:line module.name (home)` for each use of a name through a module not its home."""
    lent = borrowed(sources)
    modules = set(sources)
    hits = []
    for where, source in sorted(users.items()):
        tree = ast.parse(source)
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if full in modules:
                        aliases[alias.asname or alias.name] = full
                    elif alias.name in lent.get(node.module, {}):
                        hits.append(
                            f"{where}:{node.lineno} {full} (home {lent[node.module][alias.name]})"
                        )
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr in lent.get(aliases[node.value.id], {})
            ):
                via = aliases[node.value.id]
                hits.append(
                    f"{where}:{node.lineno} {via}.{node.attr} (home {lent[via][node.attr]})"
                )
    return hits


def test_no_name_is_reached_through_a_module_that_is_not_its_home() -> None:
    package = {
        _module(p, ROOT): p.read_text(encoding="utf-8") for p in (ROOT / "installer").rglob("*.py")
    }
    users = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in [*(ROOT / "installer").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    }
    assert reexports_used(package, users) == []


def test_a_reexport_is_caught_by_attribute_and_by_import() -> None:
    package = {
        "installer.decide.tooling": "class Tool: ...\n",
        "installer.edges.proc": "from installer.decide.tooling import Tool\n"
        "def run(tool: Tool) -> None: ...\n",
        "installer.edges.kubectl": "from installer.edges import proc\n"
        "def read(tool: proc.Tool) -> None: proc.run(tool)\n",
        "installer.edges.helm": "from installer.edges.proc import Tool, run\n",
    }
    assert reexports_used(
        package,
        {
            "kubectl.py": package["installer.edges.kubectl"],
            "helm.py": package["installer.edges.helm"],
        },
    ) == [
        "helm.py:1 installer.edges.proc.Tool (home installer.decide.tooling)",
        "kubectl.py:2 installer.edges.proc.Tool (home installer.decide.tooling)",
    ]


def test_no_private_name_is_used_across_modules() -> None:
    """A leading underscore means "this module's own": no other module imports or reaches it."""
    import ast

    package = Path(__file__).resolve().parent.parent / "installer"
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("installer"):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.name}:{node.lineno} imports {alias.name}")
                    modules.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                modules |= {
                    a.asname or a.name for a in node.names if a.name.startswith("installer")
                }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.append(f"{path.name}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert found == []
