"""Size and start-up of the frozen binary, as ratios to a PyInstaller "hello world".

Not a test (no `test_` prefix, never collected): run it by hand from the repository root
with the build virtualenv (PyInstaller installed),

    python tests/benchmarks/bench_binary.py [--binary dist/tracebloc-installer-…] [--runs 15]

It builds a stdlib-only hello-world onefile with the same PyInstaller and the same options
as build/tracebloc-installer.spec (strip on Linux, optimize 2, no UPX), in this run, and
prints:
  - size of the binary / size of hello world                     (target <= 1.15x)
  - median wall time of `--version` / of hello world, >= 10 runs  (target <= 1.3x)
  - median wall time of `probe --json` with no cluster reachable, frozen / `python -m installer`
For reference it also compares in the frame the issue's numbers were measured in: hello
world with PyInstaller's default options (no strip) against ours built without strip (Linux
only; elsewhere nothing is stripped and the two frames are the same). Without --binary it
builds ours first (build/freeze.py).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for path in (REPO, REPO / "build"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import freeze  # noqa: E402 - build/freeze.py

from tests.fakes.cluster import FakeCluster  # noqa: E402

HELLO = 'print("hello, world")\n'
# The options build/tracebloc-installer.spec uses, as PyInstaller command-line flags.
SAME_OPTIONS = [
    "--onefile",
    "--console",
    "--noupx",
    "--optimize",
    "2",
    *(["--strip"] if sys.platform.startswith("linux") else []),
]
TARGET_SIZE = 1.15
TARGET_START = 1.3


def build_hello(root: Path, options: Sequence[str]) -> Path:
    root.mkdir(parents=True)
    script = root / "hello.py"
    script.write_text(HELLO, encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--clean",
            "--log-level",
            "WARN",
            *options,
            "--name",
            "hello",
            "--workpath",
            str(root / "work"),
            "--distpath",
            str(root / "dist"),
            "--specpath",
            str(root),
            str(script),
        ],
        check=True,
        env=freeze.build_env(),
        stdout=subprocess.DEVNULL,
    )
    return root / "dist" / ("hello.exe" if sys.platform == "win32" else "hello")


def run_once(argv: Sequence[str], env: Mapping[str, str] | None, cwd: Path | None) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        list(argv), capture_output=True, env=env, cwd=cwd, stdin=subprocess.DEVNULL, check=False
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {result.stderr!r}")
    return elapsed


def paired_medians(
    a: Sequence[str],
    b: Sequence[str],
    runs: int,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[float, float]:
    """Median wall time of `a` and of `b`, run alternately so that a shared machine's load
    drifts over both alike; one unmeasured run of each first warms the page cache."""
    run_once(a, env, cwd)
    run_once(b, env, cwd)
    timings: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        timings[0].append(run_once(a, env, cwd))
        timings[1].append(run_once(b, env, cwd))
    return statistics.median(timings[0]), statistics.median(timings[1])


def unreachable_cluster(root: Path) -> FakeCluster:
    """kubectl and helm that answer the way they do when no API server answers."""
    cluster = FakeCluster(root)
    cluster.on(
        "kubectl",
        "get",
        "nodes",
        rc=1,
        stderr="The connection to the server 127.0.0.1:6443 was refused - did you "
        "specify the right host or port?\n",
    )
    cluster.on(
        "helm",
        "get",
        "values",
        rc=1,
        stderr='Error: Kubernetes cluster unreachable: Get "https://127.0.0.1:6443/'
        'version": dial tcp 127.0.0.1:6443: connect: connection refused\n',
    )
    return cluster


def verdict(ratio: float, target: float) -> str:
    return f"target <= {target}x: {'met' if ratio <= target else 'NOT met'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--binary", type=Path, help="the frozen binary (default: build it)")
    parser.add_argument("--runs", type=int, default=15, help="runs per timing (>= 10)")
    args = parser.parse_args(argv)
    if args.runs < 10:
        parser.error("--runs must be at least 10")

    with tempfile.TemporaryDirectory(prefix="tb-bench-") as tmp_name:
        tmp = Path(tmp_name)
        binary = args.binary.resolve() if args.binary else freeze.freeze(dist=tmp / "ours")
        hello = build_hello(tmp / "hello", SAME_OPTIONS)
        hello_default = build_hello(tmp / "hello-default", ["--onefile", "--console"])

        linux = sys.platform.startswith("linux")
        unstripped = (
            freeze.freeze(dist=tmp / "unstripped", work=tmp / "unstripped-work", strip=False)
            if linux
            else binary
        )
        size, floor, floor_default, size_unstripped = (
            p.stat().st_size for p in (binary, hello, hello_default, unstripped)
        )
        start, start_floor = paired_medians([str(binary), "--version"], [str(hello)], args.runs)
        cluster = unreachable_cluster(tmp / "cluster")
        probe = ["probe", "--json"]
        probe_frozen, probe_source = paired_medians(
            [str(binary), *probe],
            [sys.executable, "-m", "installer", *probe],
            args.runs,
            cluster.env(),
            cluster.root,
        )

    mib = 1 << 20
    os_, arch = freeze.this_platform()
    print(
        f"PyInstaller onefile, {os_}-{arch}, Python {sys.version.split()[0]}, "
        f"median of {args.runs} runs each"
    )
    print(
        f"  size   {binary.name}: {size / mib:.2f} MiB; hello world {floor / mib:.2f} MiB "
        f"-> {size / floor:.3f}x, +{(size - floor) / mib:.2f} MiB "
        f"({verdict(size / floor, TARGET_SIZE)})"
    )
    print(
        f"         default options (no strip): ours {size_unstripped / mib:.2f} MiB; hello world "
        f"{floor_default / mib:.2f} MiB -> {size_unstripped / floor_default:.3f}x, "
        f"+{(size_unstripped - floor_default) / mib:.2f} MiB "
        f"({verdict(size_unstripped / floor_default, TARGET_SIZE)})"
    )
    print(
        f"  start  --version: {start:.3f} s; hello world {start_floor:.3f} s "
        f"-> {start / start_floor:.2f}x ({verdict(start / start_floor, TARGET_START)})"
    )
    print(
        f"  probe --json, no cluster reachable: frozen {probe_frozen:.3f} s; "
        f"python -m installer {probe_source:.3f} s -> {probe_frozen / probe_source:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
