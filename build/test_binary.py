"""Run the process-level tests against a frozen binary instead of `python -m installer`.

    python build/test_binary.py [BINARY] [pytest options...]

BINARY defaults to this platform's build in dist/ (dist/tracebloc-installer-linux-x86_64, …).

Sets TB_INSTALLER_BIN (tests/fakes/cluster.py then starts the binary for every CLI run)
and runs pytest on the test files that drive the CLI as a process: tests/test_cli_*.py
(test_cli_real_cluster.py among them: the binary against a real kube-apiserver),
tests/test_install*.py (the `install` command and packaging/install.sh) and
tests/test_frozen.py. .ci/run and the GitHub workflow both call this, so they choose the
same files. Exits with pytest's code, except that "no tests ran" (pytest's 5), no matching
files or a missing binary are failures (1).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess  # noqa: TID251 - a build script, not the engine
import sys
from pathlib import Path

BUILD = Path(__file__).resolve().parent
REPO = BUILD.parent
sys.path.insert(0, str(BUILD))

import freeze  # noqa: E402 - build/freeze.py, beside this file

PATTERNS = ("test_cli_*.py", "test_install*.py", "test_frozen.py")


def selected_files(tests: Path = REPO / "tests") -> list[Path]:
    found = {path for pattern in PATTERNS for path in tests.glob(pattern)}
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0].startswith("-"):
        args.insert(0, str(freeze.DIST / freeze.asset_name(*freeze.this_platform())))
    binary = Path(args[0]).resolve()
    if not binary.is_file():
        print(f"test_binary: no binary at {binary}", file=sys.stderr)
        return 1
    files = selected_files()
    if not files:
        print(f"test_binary: no test files match {PATTERNS}", file=sys.stderr)
        return 1
    print(f"test_binary: {binary.name} against {', '.join(f.name for f in files)}", flush=True)
    env = {**os.environ, "TB_INSTALLER_BIN": str(binary)}
    command = [sys.executable, "-m", "pytest", *map(str, files), *args[1:]]
    # `-n auto` as the README's test command (tests/conftest.py: two workers per core).
    if importlib.util.find_spec("xdist") is not None and not any(
        a == "-n" or a.startswith("-n") for a in args[1:]
    ):
        command += ["-n", "auto", "--dist", "loadgroup"]
    rc = subprocess.run(command, cwd=REPO, env=env, check=False).returncode
    if rc == 5:
        print("test_binary: FAILED: pytest collected no tests (exit 5)", file=sys.stderr)
        return 1
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
