"""Wall time of pytest over some test files: the engine in process or as a process, with or
without pytest-xdist workers.

Not a test (never collected): run it by hand from the repository root,

    python tests/benchmarks/bench_suite.py [FILE ...] [--modes in-process subprocess]
        [--workers 0 2] [--repeat 1]

Each combination runs `python -m pytest FILE ... -q -p no:cacheprovider` as its own process
(TB_TEST_SUBPROCESS=1 for `subprocess`: every `cluster.run` starts `python -m installer`, as
before the in-process runner; `-n W --dist loadgroup` for W > 0 workers) and prints the wall
time, the tests pytest reports and the time per test. With no FILE: four files that start the
engine often. `--suite` times the whole suite (no files, pytest's own testpaths).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import subprocess  # noqa: TID251 - a benchmark, not the engine
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_FILES = (
    "tests/test_cli_plan.py",
    "tests/test_cli_install.py",
    "tests/test_fail_closed.py",
    "tests/test_cli_probe.py",
)
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ \w+.*) in (?P<seconds>[\d.]+)s", re.MULTILINE)


def run_pytest(files: list[str], mode: str, workers: int) -> tuple[float, str, int]:
    """(wall seconds, pytest's closing counts, exit code) of one pytest run."""
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
    )
    env.pop("TB_TEST_SUBPROCESS", None)
    if mode == "subprocess":
        env["TB_TEST_SUBPROCESS"] = "1"
    command = [sys.executable, "-m", "pytest", *files, "-q", "-p", "no:cacheprovider"]
    if workers:
        command += ["-n", str(workers), "--dist", "loadgroup"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    found = SUMMARY.findall(done.stdout)
    counts = found[-1][0] if found else f"no summary (exit {done.returncode})"
    return wall, counts, done.returncode


def tests_in(counts: str) -> int:
    return sum(
        int(n)
        for n, word in re.findall(r"(\d+) (\w+)", counts)
        if word in ("passed", "failed", "skipped", "xfailed", "xpassed", "error", "errors")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help=f"test files (default: {' '.join(DEFAULT_FILES)})")
    parser.add_argument(
        "--modes",
        nargs="+",
        default=["subprocess", "in-process"],
        choices=["subprocess", "in-process"],
    )
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[0], help="pytest-xdist workers per run (0: none)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per combination (median)")
    parser.add_argument("--suite", action="store_true", help="the whole suite, not files")
    args = parser.parse_args(argv)
    files = [] if args.suite else (args.files or list(DEFAULT_FILES))
    if any(args.workers) and importlib.util.find_spec("xdist") is None:
        parser.error("--workers needs pytest-xdist (pip install -e '.[test]')")

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"pytest {'(the whole suite)' if args.suite else ' '.join(files)}")
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f} "
        f"at the start; median of {args.repeat}"
    )
    print(f"{'engine':<11} {'workers':>7} {'wall (s)':>9} {'tests':>6} {'s/test':>7}  pytest")
    failed = 0
    for workers in args.workers:
        for mode in args.modes:
            runs = [run_pytest(files, mode, workers) for _ in range(args.repeat)]
            wall = statistics.median(run[0] for run in runs)
            counts, rc = runs[-1][1], max(run[2] for run in runs)
            failed |= rc != 0
            n = tests_in(counts)
            per = f"{wall / n:.3f}" if n else "-"
            print(f"{mode:<11} {workers:>7} {wall:>9.1f} {n:>6} {per:>7}  {counts}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
