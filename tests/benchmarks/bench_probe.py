"""Wall time of `probe --json` with every kubectl/helm call delayed by L seconds.

Not a test (no `test_` prefix, never collected): run it by hand,

    python tests/benchmarks/bench_probe.py [--latency 0 0.5 1 2] [--repeat 3]

and read the ratio (wall(L) - wall(0)) / L: about 1 means a fresh install pays one round
trip (the release read and the node read overlap); about 2 would mean they run one after
the other.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.fakes.cluster import HELM_NOT_FOUND, FakeCluster, node  # noqa: E402


def probe_wall(latency: float, repeat: int) -> float:
    """Median wall time of `probe --json` against a fresh install, each call delayed."""
    with tempfile.TemporaryDirectory(prefix="bench-probe-") as tmp:
        cluster = FakeCluster(Path(tmp))
        cluster.nodes(node("laptop", "8", "16Gi"), sleep=latency)
        cluster.on("helm", "get", "values", stderr=HELM_NOT_FOUND, rc=1, sleep=latency)
        timings = []
        for _ in range(repeat):
            started = time.monotonic()
            result = cluster.run("probe", "--json", TB_PROBE_TIMEOUT_S=str(latency + 30))
            timings.append(time.monotonic() - started)
            if result.returncode != 0:
                raise SystemExit(f"probe failed at L={latency}: {result.stderr.strip()}")
        calls = len(cluster.calls())
        if calls != 2 * repeat:
            raise SystemExit(f"expected {2 * repeat} tool calls at L={latency}, saw {calls}")
        return statistics.median(timings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--latency",
        "-L",
        type=float,
        nargs="+",
        default=[0, 0.5, 1, 2],
        help="per-call delays in seconds (0 is always measured as the base)",
    )
    parser.add_argument("--repeat", "-r", type=int, default=3, help="runs per latency (median)")
    args = parser.parse_args(argv)

    latencies = sorted({0.0, *args.latency})
    base = probe_wall(0.0, args.repeat)
    print(f"probe --json, median of {args.repeat} runs, Python {sys.version.split()[0]}")
    print(f"{'L (s)':>6}  {'wall (s)':>8}  {'(wall(L) - wall(0)) / L':>24}")
    for latency in latencies:
        wall = base if latency == 0 else probe_wall(latency, args.repeat)
        ratio = "-" if latency == 0 else f"{(wall - base) / latency:.2f}"
        print(f"{latency:>6g}  {wall:>8.3f}  {ratio:>24}")
    print("ratio ~1: the two reads overlap (one round trip); ~2: they run one after the other")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
